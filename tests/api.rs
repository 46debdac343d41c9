//! The foundation over real HTTP: auth, users, cases, memberships, content,
//! ETag/If-Match and the error envelope — on SQLite and PostgreSQL.

mod common;

use baton::models::Role;
use common::{Backend, TestApp};
use serde_json::json;

on_both_backends!(
    health_and_unknown_routes,
    login_and_me,
    creating_users,
    cases_and_roles,
    memberships,
    pages_cards_edgenotes,
    etag_and_if_match,
    bad_input_gets_the_envelope,
);

async fn health_and_unknown_routes(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let health = app.get("/healthz").send().await.expect(200);
    assert_eq!(health.body["status"], "ok");
    app.get("/no/such/route")
        .send()
        .await
        .expect_error(404, "not_found");
    let alice = app.user("Alice").await;
    app.req(reqwest::Method::PUT, "/cases")
        .by(&alice)
        .send()
        .await
        .expect_error(405, "method_not_allowed");
}

async fn login_and_me(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let alice = app.user("Alice").await;

    let login = app
        .post("/auth/login")
        .json(json!({ "email": "ALICE@example.com", "password": "password1" }))
        .send()
        .await
        .expect(200);
    assert_eq!(login.body["user"]["email"], "alice@example.com");
    assert_eq!(login.body["user"]["type"], "User");
    assert!(login.body["user"].get("passwordHash").is_none());
    let token = login.body["token"].as_str().unwrap().to_owned();

    let me = app
        .get("/me")
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect(200);
    assert_eq!(me.body["id"], alice.id);
    assert_eq!(me.body["param"], alice.id.to_string());
    assert!(me.body["color"].as_str().unwrap().starts_with('#'));

    app.post("/auth/login")
        .json(json!({ "email": "alice@example.com", "password": "wrong" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.post("/auth/login")
        .json(json!({ "email": "nobody@example.com", "password": "password1" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.post("/auth/login")
        .json(json!({ "email": "alice@example.com" }))
        .send()
        .await
        .expect_error(422, "invalid");

    app.get("/me")
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.get("/me")
        .header("Authorization", "Bearer not-a-jwt")
        .send()
        .await
        .expect_error(401, "unauthorized");
    let other_secret =
        baton::auth::JwtKeys::new(b"another secret", std::time::Duration::from_secs(60));
    let claims = baton::auth::TokenClaims {
        user_id: alice.id,
        token_id: 1,
    };
    let forged = other_secret
        .sign(claims, chrono::Utc::now().timestamp() + 60)
        .unwrap();
    app.get("/me")
        .header("Authorization", format!("Bearer {forged}"))
        .send()
        .await
        .expect_error(401, "unauthorized");
    let now = chrono::Utc::now().timestamp();
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({ "sub": alice.id.to_string(), "jti": "1", "iat": now - 120, "exp": now - 60 }),
        &jsonwebtoken::EncodingKey::from_secret(common::SECRET),
    )
    .unwrap();
    app.get("/me")
        .header("Authorization", format!("Bearer {expired}"))
        .send()
        .await
        .expect_error(401, "unauthorized");
    // Well signed, but no token row names it.
    let ghost = app
        .state
        .jwt
        .sign(
            baton::auth::TokenClaims {
                user_id: alice.id,
                token_id: 9_999_999,
            },
            chrono::Utc::now().timestamp() + 60,
        )
        .unwrap();
    app.get("/me")
        .header("Authorization", format!("Bearer {ghost}"))
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.get("/me")
        .header("Authorization", format!("Bearer {token}"))
        .header("X-Session-ID", "not a valid id!")
        .send()
        .await
        .expect_error(400, "bad_request");
}

async fn creating_users(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let admin = app.admin("Root").await;
    let bob = app.user("Bob").await;
    let body =
        json!({ "user": { "email": "dave@example.com", "name": "Dave", "password": "secret-pw" } });

    app.post("/users")
        .by(&bob)
        .json(body.clone())
        .send()
        .await
        .expect_error(403, "forbidden");
    let created = app
        .post("/users")
        .by(&admin)
        .json(body.clone())
        .send()
        .await
        .expect(201);
    assert_eq!(created.body["email"], "dave@example.com");
    assert_eq!(created.body["admin"], false);
    app.post("/users")
        .by(&admin)
        .json(body)
        .send()
        .await
        .expect_error(409, "conflict");
    app.post("/users")
        .by(&admin)
        .json(json!({ "user": { "email": "not-an-email", "name": "E", "password": "secret-pw" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post("/users")
        .by(&admin)
        .json(json!({ "user": { "email": "e@example.com", "name": "E", "password": "short" } }))
        .send()
        .await
        .expect_error(422, "invalid");

    let login = app
        .post("/auth/login")
        .json(json!({ "email": "dave@example.com", "password": "secret-pw" }))
        .send()
        .await
        .expect(200);
    assert_eq!(login.body["user"]["name"], "Dave");
}

async fn cases_and_roles(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    let eve = app.user("Eve").await;
    let root = app.admin("Root").await;

    let created = app
        .post("/cases")
        .by(&alice)
        .json(json!({ "case": { "slug": "harbour", "title": "The Harbour" } }))
        .send()
        .await
        .expect(201);
    assert_eq!(created.body["type"], "Case");
    assert_eq!(created.body["table"], "cases");
    assert_eq!(created.body["version"], 1);
    assert_eq!(created.etag().as_deref(), Some("\"1\""));
    app.post("/cases")
        .by(&bob)
        .json(json!({ "case": { "slug": "harbour", "title": "Again" } }))
        .send()
        .await
        .expect_error(409, "conflict");
    app.post("/cases")
        .by(&bob)
        .json(json!({ "case": { "slug": "Bad Slug", "title": "x" } }))
        .send()
        .await
        .expect_error(422, "invalid");

    // The creator is its manager and sees it; others don't.
    let list = app.get("/cases").by(&alice).send().await.expect(200);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    let list = app.get("/cases").by(&bob).send().await.expect(200);
    assert_eq!(list.body, json!([]));

    app.post("/cases/harbour/memberships")
        .by(&alice)
        .json(json!({ "membership": { "email": bob.email, "role": "reader" } }))
        .send()
        .await
        .expect(201);
    let shown = app.get("/cases/harbour").by(&bob).send().await.expect(200);
    for key in ["pages", "edgenotes", "activeLocks", "onlineUsers"] {
        assert!(shown.body[key].is_array(), "{key} missing: {}", shown.body);
    }
    assert_eq!(shown.body["role"], "reader");
    app.get("/cases/harbour")
        .by(&eve)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.get("/cases/nowhere")
        .by(&alice)
        .send()
        .await
        .expect_error(404, "not_found");
    // A site admin acts as a manager everywhere.
    let as_admin = app.get("/cases/harbour").by(&root).send().await.expect(200);
    assert_eq!(as_admin.body["role"], "site admin");

    let patch = json!({ "case": { "title": "The Old Harbour" } });
    app.patch("/cases/harbour")
        .by(&bob)
        .json(patch.clone())
        .send()
        .await
        .expect_error(403, "forbidden");
    let updated = app
        .patch("/cases/harbour")
        .by(&alice)
        .json(patch)
        .send()
        .await
        .expect(200);
    assert_eq!(updated.body["title"], "The Old Harbour");
    assert_eq!(updated.body["version"], 2);
    assert_eq!(updated.etag().as_deref(), Some("\"2\""));

    app.delete("/cases/harbour")
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.delete("/cases/harbour")
        .by(&alice)
        .send()
        .await
        .expect(204);
    app.get("/cases/harbour")
        .by(&alice)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn memberships(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    let f = app
        .case("harbour", &[(&alice, Role::Manager), (&bob, Role::Editor)])
        .await;
    let path = format!("/cases/{}/memberships", f.slug);

    let list = app.get(&path).by(&alice).send().await.expect(200);
    let members = list.body.as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[0]["type"], "Membership");
    assert_eq!(members[0]["user"]["name"], "Alice");
    app.get(&path)
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");

    let carol = app.user("Carol").await;
    let added = app
        .post(&path)
        .by(&alice)
        .json(json!({ "membership": { "email": carol.email, "role": "editor" } }))
        .send()
        .await
        .expect(201);
    let changed = app
        .post(&path)
        .by(&alice)
        .json(json!({ "membership": { "email": carol.email, "role": "manager" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(changed.body["id"], added.body["id"]);
    assert_eq!(changed.body["role"], "manager");
    app.post(&path)
        .by(&alice)
        .json(json!({ "membership": { "email": carol.email, "role": "owner" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post(&path)
        .by(&alice)
        .json(json!({ "membership": { "email": "ghost@example.com", "role": "reader" } }))
        .send()
        .await
        .expect_error(404, "not_found");
    app.post(&path)
        .by(&bob)
        .json(json!({ "membership": { "email": carol.email, "role": "reader" } }))
        .send()
        .await
        .expect_error(403, "forbidden");

    // Carol (manager) removes Alice; then the last manager cannot leave.
    let alice_membership = members
        .iter()
        .find(|m| m["user"]["id"] == alice.id)
        .unwrap()["id"]
        .clone();
    app.delete(&format!("/memberships/{alice_membership}"))
        .by(&carol)
        .send()
        .await
        .expect(204);
    app.delete(&format!("/memberships/{}", changed.body["id"]))
        .by(&carol)
        .send()
        .await
        .expect_error(409, "conflict");
    app.delete("/memberships/999999")
        .by(&carol)
        .send()
        .await
        .expect_error(404, "not_found");
    app.get(&format!("/cases/{}", f.slug))
        .by(&alice)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn pages_cards_edgenotes(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    let rita = app.user("Rita").await;
    let f = app
        .case(
            "harbour",
            &[
                (&alice, Role::Manager),
                (&bob, Role::Editor),
                (&rita, Role::Reader),
            ],
        )
        .await;

    // Pages.
    let page_body = json!({ "page": { "title": "Findings" } });
    app.post("/cases/harbour/pages")
        .by(&rita)
        .json(page_body.clone())
        .send()
        .await
        .expect_error(403, "forbidden");
    let page = app
        .post("/cases/harbour/pages")
        .by(&bob)
        .json(page_body)
        .send()
        .await
        .expect(201);
    assert_eq!(page.body["type"], "Page");
    assert_eq!(
        page.body["position"], 1,
        "appended after the fixture's page"
    );
    let page_id = page.body["id"].as_i64().unwrap();
    let renamed = app
        .patch(&format!("/pages/{page_id}"))
        .by(&bob)
        .json(json!({ "page": { "title": "Results", "position": 5 } }))
        .send()
        .await
        .expect(200);
    assert_eq!(renamed.body["title"], "Results");
    assert_eq!(renamed.body["position"], 5);
    app.get(&format!("/pages/{page_id}"))
        .by(&rita)
        .send()
        .await
        .expect(200);

    // Cards.
    let card = app
        .post(&format!("/pages/{page_id}/cards"))
        .by(&bob)
        .json(json!({ "card": { "content": "Tides matter." } }))
        .send()
        .await
        .expect(201);
    assert_eq!(card.body["type"], "Card");
    assert_eq!(card.body["pageId"], page_id);
    assert_eq!(card.body["position"], 0);
    let card_id = card.body["id"].as_i64().unwrap();
    app.post(&format!("/pages/{page_id}/cards"))
        .by(&rita)
        .json(json!({ "card": { "content": "x" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/pages/999999/cards")
        .by(&bob)
        .json(json!({ "card": { "content": "x" } }))
        .send()
        .await
        .expect_error(404, "not_found");
    app.post(&format!("/pages/{page_id}/cards"))
        .by(&bob)
        .json(json!({ "card": {} }))
        .send()
        .await
        .expect_error(422, "invalid");
    let edited = app
        .patch(&format!("/cards/{card_id}"))
        .by(&bob)
        .json(json!({ "card": { "content": "Tides matter most." } }))
        .send()
        .await
        .expect(200);
    assert_eq!(edited.body["version"], 2);
    app.patch(&format!("/cards/{card_id}"))
        .by(&rita)
        .json(json!({ "card": { "content": "no" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    let shown = app
        .get(&format!("/cards/{card_id}"))
        .by(&rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["content"], "Tides matter most.");

    // Edgenotes.
    let note = app
        .post("/cases/harbour/edgenotes")
        .by(&bob)
        .json(json!({ "edgenote": { "slug": "tide-table", "caption": "Tide table", "content": "https://x/t.png" } }))
        .send()
        .await
        .expect(201);
    assert_eq!(note.body["type"], "Edgenote");
    let note_id = note.body["id"].as_i64().unwrap();
    app.post("/cases/harbour/edgenotes")
        .by(&bob)
        .json(json!({ "edgenote": { "slug": "tide-table", "caption": "Again", "content": "" } }))
        .send()
        .await
        .expect_error(409, "conflict");
    let recaptioned = app
        .patch(&format!("/edgenotes/{note_id}"))
        .by(&bob)
        .json(json!({ "edgenote": { "caption": "Tides, 1890" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(recaptioned.body["caption"], "Tides, 1890");

    // The case shows everything in order.
    let case = app.get("/cases/harbour").by(&rita).send().await.expect(200);
    let pages = case.body["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1]["title"], "Results");
    assert_eq!(pages[1]["cards"][0]["id"], card_id);
    assert_eq!(pages[0]["cards"][0]["id"], f.card_id);
    assert_eq!(case.body["edgenotes"].as_array().unwrap().len(), 2);

    // Deletes.
    app.delete(&format!("/edgenotes/{note_id}"))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/edgenotes/{note_id}"))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
    app.delete(&format!("/cards/{card_id}"))
        .by(&rita)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.delete(&format!("/cards/{card_id}"))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.delete(&format!("/pages/{}", f.page_id))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
    app.get("/cards/abc")
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn etag_and_if_match(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let f = app.case("harbour", &[(&bob, Role::Editor)]).await;
    let path = format!("/cards/{}", f.card_id);

    let shown = app.get(&path).by(&bob).send().await.expect(200);
    assert_eq!(shown.etag().as_deref(), Some("\"1\""));
    let saved = app
        .patch(&path)
        .by(&bob)
        .header("If-Match", "\"1\"")
        .json(json!({ "card": { "content": "second" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(saved.etag().as_deref(), Some("\"2\""));

    let stale = app
        .patch(&path)
        .by(&bob)
        .header("If-Match", "\"1\"")
        .json(json!({ "card": { "content": "from an old tab" } }))
        .send()
        .await
        .expect_error(412, "stale_version");
    assert_eq!(stale.body["error"]["current"]["content"], "second");
    assert_eq!(stale.body["error"]["current"]["version"], 2);

    app.delete(&path)
        .by(&bob)
        .header("If-Match", "\"1\"")
        .send()
        .await
        .expect_error(412, "stale_version");
    app.patch(&path)
        .by(&bob)
        .header("If-Match", "soon")
        .json(json!({ "card": { "content": "x" } }))
        .send()
        .await
        .expect_error(400, "bad_request");
    let unchanged = app.get(&path).by(&bob).send().await.expect(200);
    assert_eq!(unchanged.body["content"], "second");
    app.delete(&path)
        .by(&bob)
        .header("If-Match", "\"2\"")
        .send()
        .await
        .expect(204);
}

async fn bad_input_gets_the_envelope(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| s.body_limit = 4096).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let f = app.case("harbour", &[(&bob, Role::Editor)]).await;
    let path = format!("/cards/{}", f.card_id);

    app.patch(&path)
        .by(&bob)
        .body("application/json", "{\"card\": ")
        .send()
        .await
        .expect_error(400, "bad_request");
    app.patch(&path)
        .by(&bob)
        .json(json!({ "card": { "content": 12 } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.patch(&path)
        .by(&bob)
        .json(json!({ "content": "x" }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.patch(&path)
        .by(&bob)
        .json(json!({ "card": { "content": "x".repeat(5000) } }))
        .send()
        .await
        .expect_error(413, "payload_too_large");
    app.patch(&path)
        .by(&bob)
        .body("text/plain", "hello")
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    app.patch(&path)
        .by(&bob)
        .json(json!({ "card": { "position": -3 } }))
        .send()
        .await
        .expect_error(422, "invalid");
    let unchanged = app.get(&path).by(&bob).send().await.expect(200);
    assert_eq!(unchanged.body["version"], 1, "no failed request may write");
}

on_both_backends!(demo_seed_is_idempotent, cors_allows_configured_origins);

async fn demo_seed_is_idempotent(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    baton::demo::seed(&app.state.db).await.unwrap();
    baton::demo::seed(&app.state.db).await.unwrap();
    let login = app
        .post("/auth/login")
        .json(json!({ "email": "bob@example.com", "password": "demo" }))
        .send()
        .await
        .expect(200);
    let bob = common::TestUser {
        token: login.body["token"].as_str().unwrap().to_owned(),
        id: login.body["user"]["id"].as_i64().unwrap(),
        email: "bob@example.com".into(),
        session: None,
    };
    let cases = app.get("/cases").by(&bob).send().await.expect(200);
    assert_eq!(cases.body.as_array().unwrap().len(), 1);
    let case = app
        .get("/cases/sample-case")
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(case.body["role"], "editor");
    assert!(!case.body["pages"][0]["cards"]
        .as_array()
        .unwrap()
        .is_empty());
}

async fn cors_allows_configured_origins(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| {
        s.cors_origins = vec!["https://app.example.com".into()]
    })
    .await
    else {
        return;
    };
    let preflight = app
        .req(reqwest::Method::OPTIONS, "/cards/1")
        .header("Origin", "https://app.example.com")
        .header("Access-Control-Request-Method", "PATCH")
        .header(
            "Access-Control-Request-Headers",
            "authorization, if-match, x-session-id, lock-token",
        )
        .send()
        .await
        .expect(200);
    assert_eq!(
        preflight
            .headers
            .get("access-control-allow-origin")
            .unwrap(),
        "https://app.example.com"
    );
    let refused = app
        .req(reqwest::Method::OPTIONS, "/cards/1")
        .header("Origin", "https://evil.example.com")
        .header("Access-Control-Request-Method", "PATCH")
        .send()
        .await;
    assert!(refused.headers.get("access-control-allow-origin").is_none());
    assert!(refused.status >= 400);
}
