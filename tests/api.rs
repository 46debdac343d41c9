//! The foundation over real HTTP: auth, users, cases, memberships, content,
//! ETag/If-Match and the error envelope — on SQLite and PostgreSQL. One test
//! per rule where a scenario used to check several.

mod common;

use baton::models::Role;
use common::{id, Cast, Resp, TestApp, TestUser};
use serde_json::{json, Value};

on_both_backends!(TestApp::start =>
    health_and_unknown_routes,
    creating_users,
    memberships,
    etag_and_if_match,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s| s.body_limit = 4096) =>
    bad_input_gets_the_envelope,
);

async fn health_and_unknown_routes(app: TestApp) {
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

// ---- Signing in ----

on_both_backends!(TestApp::start =>
    login_matches_the_email_whatever_its_case,
    login_answers_the_user_without_the_password_hash,
    the_login_token_signs_in_as_the_user,
    a_wrong_password_is_unauthorized,
    an_unknown_email_is_unauthorized,
    a_login_without_a_password_is_invalid,
    a_request_without_a_token_is_unauthorized,
    a_token_that_is_no_jwt_is_unauthorized,
    a_token_signed_with_another_secret_is_unauthorized,
    an_expired_token_is_unauthorized,
    a_token_no_token_row_names_is_unauthorized,
    a_malformed_session_id_is_a_bad_request,
);

/// Alice signs in with her password; the response.
async fn log_in_alice(app: &TestApp) -> Resp {
    app.post("/auth/login")
        .json(json!({ "email": "ALICE@example.com", "password": "password1" }))
        .send()
        .await
        .expect(200)
}

/// `GET /me` with `Authorization: Bearer {token}` answers 401.
async fn assert_me_unauthorized(app: &TestApp, token: &str) {
    app.get("/me")
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn login_matches_the_email_whatever_its_case(app: TestApp) {
    app.user("Alice").await;
    let login = log_in_alice(&app).await;
    assert_eq!(login.body["user"]["email"], "alice@example.com");
}

async fn login_answers_the_user_without_the_password_hash(app: TestApp) {
    app.user("Alice").await;
    let login = log_in_alice(&app).await;
    assert_eq!(login.body["user"]["type"], "User");
    assert!(login.body["user"].get("passwordHash").is_none());
}

async fn the_login_token_signs_in_as_the_user(app: TestApp) {
    let alice = app.user("Alice").await;
    let login = log_in_alice(&app).await;
    let token = login.body["token"].as_str().unwrap();
    let me = app
        .get("/me")
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect(200);
    assert_eq!(me.body["id"], alice.id);
    assert_eq!(me.body["param"], alice.id.to_string());
    assert!(me.body["color"].as_str().unwrap().starts_with('#'));
}

async fn a_wrong_password_is_unauthorized(app: TestApp) {
    app.user("Alice").await;
    app.post("/auth/login")
        .json(json!({ "email": "alice@example.com", "password": "wrong" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn an_unknown_email_is_unauthorized(app: TestApp) {
    app.user("Alice").await;
    app.post("/auth/login")
        .json(json!({ "email": "nobody@example.com", "password": "password1" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn a_login_without_a_password_is_invalid(app: TestApp) {
    app.user("Alice").await;
    app.post("/auth/login")
        .json(json!({ "email": "alice@example.com" }))
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn a_request_without_a_token_is_unauthorized(app: TestApp) {
    app.get("/me")
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn a_token_that_is_no_jwt_is_unauthorized(app: TestApp) {
    assert_me_unauthorized(&app, "not-a-jwt").await;
}

async fn a_token_signed_with_another_secret_is_unauthorized(app: TestApp) {
    let alice = app.user("Alice").await;
    let other_secret =
        baton::auth::JwtKeys::new(b"another secret", std::time::Duration::from_secs(60));
    let claims = baton::auth::TokenClaims {
        user_id: baton::models::UserId(alice.id),
        token_id: 1,
    };
    let forged = other_secret
        .sign(claims, chrono::Utc::now().timestamp() + 60)
        .unwrap();
    assert_me_unauthorized(&app, &forged).await;
}

async fn an_expired_token_is_unauthorized(app: TestApp) {
    let alice = app.user("Alice").await;
    let now = chrono::Utc::now().timestamp();
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({ "sub": alice.id.to_string(), "jti": "1", "iat": now - 120, "exp": now - 60 }),
        &jsonwebtoken::EncodingKey::from_secret(common::SECRET),
    )
    .unwrap();
    assert_me_unauthorized(&app, &expired).await;
}

/// Well signed, but no token row names it.
async fn a_token_no_token_row_names_is_unauthorized(app: TestApp) {
    let alice = app.user("Alice").await;
    let ghost = app
        .state
        .jwt
        .sign(
            baton::auth::TokenClaims {
                user_id: baton::models::UserId(alice.id),
                token_id: 9_999_999,
            },
            chrono::Utc::now().timestamp() + 60,
        )
        .unwrap();
    assert_me_unauthorized(&app, &ghost).await;
}

async fn a_malformed_session_id_is_a_bad_request(app: TestApp) {
    app.user("Alice").await;
    let login = log_in_alice(&app).await;
    let token = login.body["token"].as_str().unwrap();
    app.get("/me")
        .header("Authorization", format!("Bearer {token}"))
        .header("X-Session-ID", "not a valid id!")
        .send()
        .await
        .expect_error(400, "bad_request");
}

async fn creating_users(app: TestApp) {
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

// ---- Cases and roles ----

on_both_backends!(TestApp::start =>
    a_new_case_is_answered_at_version_1,
    a_case_slug_is_taken_once,
    a_malformed_case_slug_is_invalid,
    a_case_is_listed_for_its_creator_only,
    a_member_sees_the_case_with_its_contents_and_role,
    a_non_member_cannot_see_a_case,
    an_unknown_case_is_not_found,
    a_site_admin_acts_as_a_manager_everywhere,
    a_reader_cannot_update_a_case,
    the_creator_updates_a_case_to_a_new_version,
    a_reader_cannot_delete_a_case,
    the_creator_deletes_a_case,
);

const HARBOUR: &str = "/cases/harbour";

/// Alice creates case `harbour` over HTTP (so she manages it); the response.
async fn alice_creates_harbour(app: &TestApp, alice: &TestUser) -> Resp {
    app.post("/cases")
        .by(alice)
        .json(json!({ "case": { "slug": "harbour", "title": "The Harbour" } }))
        .send()
        .await
        .expect(201)
}

/// Alice's case `harbour` with Bob as its reader.
async fn harbour_with_bob_reading(app: &TestApp) -> (TestUser, TestUser) {
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    alice_creates_harbour(app, &alice).await;
    app.post("/cases/harbour/memberships")
        .by(&alice)
        .json(json!({ "membership": { "email": bob.email, "role": "reader" } }))
        .send()
        .await
        .expect(201);
    (alice, bob)
}

async fn a_new_case_is_answered_at_version_1(app: TestApp) {
    let alice = app.user("Alice").await;
    let created = alice_creates_harbour(&app, &alice).await;
    assert_eq!(created.body["type"], "Case");
    assert_eq!(created.body["table"], "cases");
    assert_eq!(created.body["version"], 1);
    assert_eq!(created.etag().as_deref(), Some("\"1\""));
}

async fn a_case_slug_is_taken_once(app: TestApp) {
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    alice_creates_harbour(&app, &alice).await;
    app.post("/cases")
        .by(&bob)
        .json(json!({ "case": { "slug": "harbour", "title": "Again" } }))
        .send()
        .await
        .expect_error(409, "conflict");
}

async fn a_malformed_case_slug_is_invalid(app: TestApp) {
    let bob = app.user("Bob").await;
    app.post("/cases")
        .by(&bob)
        .json(json!({ "case": { "slug": "Bad Slug", "title": "x" } }))
        .send()
        .await
        .expect_error(422, "invalid");
}

/// The creator is its manager and sees it; others don't.
async fn a_case_is_listed_for_its_creator_only(app: TestApp) {
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    alice_creates_harbour(&app, &alice).await;
    let list = app.get("/cases").by(&alice).send().await.expect(200);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    let list = app.get("/cases").by(&bob).send().await.expect(200);
    assert_eq!(list.body, json!([]));
}

async fn a_member_sees_the_case_with_its_contents_and_role(app: TestApp) {
    let (_alice, bob) = harbour_with_bob_reading(&app).await;
    let shown = app.get(HARBOUR).by(&bob).send().await.expect(200);
    for key in ["pages", "edgenotes", "activeLocks", "onlineUsers"] {
        assert!(shown.body[key].is_array(), "{key} missing: {}", shown.body);
    }
    assert_eq!(shown.body["role"], "reader");
}

async fn a_non_member_cannot_see_a_case(app: TestApp) {
    harbour_with_bob_reading(&app).await;
    let eve = app.user("Eve").await;
    app.get(HARBOUR)
        .by(&eve)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn an_unknown_case_is_not_found(app: TestApp) {
    let (alice, _bob) = harbour_with_bob_reading(&app).await;
    app.get("/cases/nowhere")
        .by(&alice)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn a_site_admin_acts_as_a_manager_everywhere(app: TestApp) {
    harbour_with_bob_reading(&app).await;
    let root = app.admin("Root").await;
    let as_admin = app.get(HARBOUR).by(&root).send().await.expect(200);
    assert_eq!(as_admin.body["role"], "site admin");
}

async fn a_reader_cannot_update_a_case(app: TestApp) {
    let (_alice, bob) = harbour_with_bob_reading(&app).await;
    app.patch(HARBOUR)
        .by(&bob)
        .json(json!({ "case": { "title": "The Old Harbour" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn the_creator_updates_a_case_to_a_new_version(app: TestApp) {
    let (alice, _bob) = harbour_with_bob_reading(&app).await;
    let updated = app
        .patch(HARBOUR)
        .by(&alice)
        .json(json!({ "case": { "title": "The Old Harbour" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(updated.body["title"], "The Old Harbour");
    assert_eq!(updated.body["version"], 2);
    assert_eq!(updated.etag().as_deref(), Some("\"2\""));
}

async fn a_reader_cannot_delete_a_case(app: TestApp) {
    let (_alice, bob) = harbour_with_bob_reading(&app).await;
    app.delete(HARBOUR)
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn the_creator_deletes_a_case(app: TestApp) {
    let (alice, _bob) = harbour_with_bob_reading(&app).await;
    app.delete(HARBOUR).by(&alice).send().await.expect(204);
    app.get(HARBOUR)
        .by(&alice)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn memberships(app: TestApp) {
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

// ---- Pages, cards and edgenotes ----
//
// On the [`Cast`]'s case `c`: Bob edits it, Rita reads it.

on_both_backends!(TestApp::with_cast =>
    a_reader_cannot_add_a_page,
    a_new_page_goes_after_the_last,
    an_editor_renames_and_moves_a_page,
    a_reader_reads_a_page,
    a_new_card_goes_first_on_its_page,
    a_reader_cannot_add_a_card,
    a_card_on_a_missing_page_is_not_found,
    a_card_without_content_is_invalid,
    an_edited_card_has_the_new_content_and_version,
    a_reader_cannot_edit_a_card,
    an_editor_adds_an_edgenote,
    an_edgenote_slug_is_taken_once_per_case,
    an_editor_recaptions_an_edgenote,
    a_case_shows_its_pages_cards_and_edgenotes_in_order,
    a_deleted_edgenote_is_gone,
    a_reader_cannot_delete_a_card,
    an_editor_deletes_a_card,
    deleting_a_page_deletes_its_cards,
    a_non_numeric_id_is_not_found,
);

/// A new page "Findings" on case `c`, by Bob.
async fn new_page(app: &TestApp, c: &Cast) -> Value {
    app.post("/cases/c/pages")
        .by(&c.bob)
        .json(json!({ "page": { "title": "Findings" } }))
        .send()
        .await
        .expect(201)
        .body
}

/// A new page with one card "Tides matter.", by Bob: (page id, card id).
async fn page_with_a_card(app: &TestApp, c: &Cast) -> (i64, i64) {
    let page_id = id(&new_page(app, c).await);
    let card = app
        .post(&format!("/pages/{page_id}/cards"))
        .by(&c.bob)
        .json(json!({ "card": { "content": "Tides matter." } }))
        .send()
        .await
        .expect(201);
    (page_id, id(&card.body))
}

/// A new edgenote `tide-table` on case `c`, by Bob.
async fn new_edgenote(app: &TestApp, c: &Cast) -> Value {
    app.post("/cases/c/edgenotes")
        .by(&c.bob)
        .json(json!({ "edgenote": { "slug": "tide-table", "caption": "Tide table", "content": "https://x/t.png" } }))
        .send()
        .await
        .expect(201)
        .body
}

async fn a_reader_cannot_add_a_page((app, c): (TestApp, Cast)) {
    app.post("/cases/c/pages")
        .by(&c.rita)
        .json(json!({ "page": { "title": "Findings" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn a_new_page_goes_after_the_last((app, c): (TestApp, Cast)) {
    let page = new_page(&app, &c).await;
    assert_eq!(page["type"], "Page");
    assert_eq!(page["position"], 1, "appended after the fixture's page");
}

async fn an_editor_renames_and_moves_a_page((app, c): (TestApp, Cast)) {
    let page_id = id(&new_page(&app, &c).await);
    let renamed = app
        .patch(&format!("/pages/{page_id}"))
        .by(&c.bob)
        .json(json!({ "page": { "title": "Results", "position": 5 } }))
        .send()
        .await
        .expect(200);
    assert_eq!(renamed.body["title"], "Results");
    assert_eq!(renamed.body["position"], 5);
}

async fn a_reader_reads_a_page((app, c): (TestApp, Cast)) {
    let page_id = id(&new_page(&app, &c).await);
    let page = app
        .get(&format!("/pages/{page_id}"))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(page.body["title"], "Findings");
}

async fn a_new_card_goes_first_on_its_page((app, c): (TestApp, Cast)) {
    let page_id = id(&new_page(&app, &c).await);
    let card = app
        .post(&format!("/pages/{page_id}/cards"))
        .by(&c.bob)
        .json(json!({ "card": { "content": "Tides matter." } }))
        .send()
        .await
        .expect(201);
    assert_eq!(card.body["type"], "Card");
    assert_eq!(card.body["pageId"], page_id);
    assert_eq!(card.body["position"], 0);
}

async fn a_reader_cannot_add_a_card((app, c): (TestApp, Cast)) {
    let page_id = id(&new_page(&app, &c).await);
    app.post(&format!("/pages/{page_id}/cards"))
        .by(&c.rita)
        .json(json!({ "card": { "content": "x" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn a_card_on_a_missing_page_is_not_found((app, c): (TestApp, Cast)) {
    app.post("/pages/999999/cards")
        .by(&c.bob)
        .json(json!({ "card": { "content": "x" } }))
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn a_card_without_content_is_invalid((app, c): (TestApp, Cast)) {
    let page_id = id(&new_page(&app, &c).await);
    app.post(&format!("/pages/{page_id}/cards"))
        .by(&c.bob)
        .json(json!({ "card": {} }))
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn an_edited_card_has_the_new_content_and_version((app, c): (TestApp, Cast)) {
    let (_, card_id) = page_with_a_card(&app, &c).await;
    let edited = app
        .patch(&format!("/cards/{card_id}"))
        .by(&c.bob)
        .json(json!({ "card": { "content": "Tides matter most." } }))
        .send()
        .await
        .expect(200);
    assert_eq!(edited.body["version"], 2);
    let shown = app
        .get(&format!("/cards/{card_id}"))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["content"], "Tides matter most.");
}

async fn a_reader_cannot_edit_a_card((app, c): (TestApp, Cast)) {
    let (_, card_id) = page_with_a_card(&app, &c).await;
    app.patch(&format!("/cards/{card_id}"))
        .by(&c.rita)
        .json(json!({ "card": { "content": "no" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn an_editor_adds_an_edgenote((app, c): (TestApp, Cast)) {
    let note = new_edgenote(&app, &c).await;
    assert_eq!(note["type"], "Edgenote");
}

async fn an_edgenote_slug_is_taken_once_per_case((app, c): (TestApp, Cast)) {
    new_edgenote(&app, &c).await;
    app.post("/cases/c/edgenotes")
        .by(&c.bob)
        .json(json!({ "edgenote": { "slug": "tide-table", "caption": "Again", "content": "" } }))
        .send()
        .await
        .expect_error(409, "conflict");
}

async fn an_editor_recaptions_an_edgenote((app, c): (TestApp, Cast)) {
    let note_id = id(&new_edgenote(&app, &c).await);
    let recaptioned = app
        .patch(&format!("/edgenotes/{note_id}"))
        .by(&c.bob)
        .json(json!({ "edgenote": { "caption": "Tides, 1890" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(recaptioned.body["caption"], "Tides, 1890");
}

async fn a_case_shows_its_pages_cards_and_edgenotes_in_order((app, c): (TestApp, Cast)) {
    let (page_id, card_id) = page_with_a_card(&app, &c).await;
    app.patch(&format!("/pages/{page_id}"))
        .by(&c.bob)
        .json(json!({ "page": { "title": "Results", "position": 5 } }))
        .send()
        .await
        .expect(200);
    new_edgenote(&app, &c).await;

    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    let pages = case.body["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1]["title"], "Results");
    assert_eq!(pages[1]["cards"][0]["id"], card_id);
    assert_eq!(pages[0]["cards"][0]["id"], c.case.card_id);
    assert_eq!(case.body["edgenotes"].as_array().unwrap().len(), 2);
}

async fn a_deleted_edgenote_is_gone((app, c): (TestApp, Cast)) {
    let note_id = id(&new_edgenote(&app, &c).await);
    app.delete(&format!("/edgenotes/{note_id}"))
        .by(&c.bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/edgenotes/{note_id}"))
        .by(&c.bob)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn a_reader_cannot_delete_a_card((app, c): (TestApp, Cast)) {
    let (_, card_id) = page_with_a_card(&app, &c).await;
    app.delete(&format!("/cards/{card_id}"))
        .by(&c.rita)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn an_editor_deletes_a_card((app, c): (TestApp, Cast)) {
    let (_, card_id) = page_with_a_card(&app, &c).await;
    app.delete(&format!("/cards/{card_id}"))
        .by(&c.bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/cards/{card_id}"))
        .by(&c.bob)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn deleting_a_page_deletes_its_cards((app, c): (TestApp, Cast)) {
    app.delete(&format!("/pages/{}", c.case.page_id))
        .by(&c.bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/cards/{}", c.case.card_id))
        .by(&c.bob)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn a_non_numeric_id_is_not_found((app, c): (TestApp, Cast)) {
    app.get("/cards/abc")
        .by(&c.bob)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn etag_and_if_match(app: TestApp) {
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

async fn bad_input_gets_the_envelope(app: TestApp) {
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

on_both_backends!(TestApp::start =>
    demo_seed_is_idempotent,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        s.cors_origins = vec!["https://app.example.com".into()];
    }) =>
    cors_allows_configured_origins,
);

async fn demo_seed_is_idempotent(app: TestApp) {
    baton::demo::seed(&app.state.db, baton::demo::demo_data(None))
        .await
        .unwrap();
    baton::demo::seed(&app.state.db, baton::demo::demo_data(None))
        .await
        .unwrap();
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

async fn cors_allows_configured_origins(app: TestApp) {
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
