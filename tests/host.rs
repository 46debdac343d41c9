//! Beside a team's own backend, on both databases: API keys on their three
//! routes, tokens minted for the team's users (`POST /auth/tokens`), records
//! of external types (locked by case and param), `POST /guard`, and frames
//! announced with `POST /cases/:slug/events`.

mod common;

use std::path::PathBuf;

use baton::models::ApiKey;
use common::{Backend, Resp, TestApp, TestUser};
use serde_json::{json, Value};

/// Invoices live in the host's database; notes in baton's.
const SCHEMA: &str = "[types.Invoice]\nstore = \"external\"\n\n\
                      [types.Note]\nfields.text = { type = \"string\" }\n";

on_both_backends!(host =>
    a_key_mints_a_token_for_a_new_user_and_creates_their_case,
    minting_again_updates_the_user_and_keeps_earlier_tokens,
    another_users_email_is_409_and_bad_fields_are_422,
    the_key_routes_refuse_user_tokens_wrong_keys_and_revoked_keys,
    a_key_opens_no_other_route,
    a_provisioned_user_cannot_sign_in_with_a_password,
    a_null_role_removes_the_membership_and_ends_locks_and_places_in_line,
    external_records_are_locked_by_case_and_param,
    external_lock_requests_that_cannot_be_right_are_refused,
    external_records_are_taken_over_waited_for_and_audited,
    external_sets_and_claims_name_their_case,
    the_guard_refuses_readers_and_strangers,
    the_guard_covers_records_baton_stores,
    announced_frames_reach_the_tabs_of_the_case_in_order,
    announcements_that_cannot_be_right_are_refused,
    only_external_types_are_announced,
    a_deep_lock_on_the_case_covers_records_never_locked,
    the_same_new_user_minted_at_once_is_201_every_time,
    a_bad_key_is_401_before_anything_about_the_body,
);
on_both_backends!(
    the_guard_answers_423_then_412_and_renews_the_holder,
    the_guard_answers_alike_on_the_general_path,
    the_guard_locks_no_row_before_the_role_is_known,
);

struct Host {
    app: TestApp,
    key: String,
    _schema: tempfile::TempDir,
}

async fn host(backend: Backend) -> Option<Host> {
    host_with(backend, true).await
}

/// With the fast path (PostgreSQL's one-statement guard) on or off.
async fn host_with(backend: Backend, fast_path: bool) -> Option<Host> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path: PathBuf = dir.path().join("host.toml");
    std::fs::write(&path, SCHEMA).expect("write the schema");
    let app = TestApp::start_with(backend, |s| {
        s.database.schema = Some(path);
        s.lock_fast_path = fast_path;
    })
    .await?;
    let key = add_key(&app, "host").await;
    Some(Host {
        app,
        key,
        _schema: dir,
    })
}

/// A new live key named `name`, as `baton key add` makes it.
async fn add_key(app: &TestApp, name: &str) -> String {
    let (key, hash) = baton::auth::api_keys::generate();
    let name = name.to_owned();
    app.state
        .db
        .write(None, move |tx| {
            Ok::<_, baton::error::AppError>(ApiKey::create(tx.conn, &name, &hash, tx.now)?)
        })
        .await
        .expect("add a key")
        .expect("a new name");
    key
}

impl Host {
    async fn mint(&self, body: Value) -> Resp {
        self.app
            .post("/auth/tokens")
            .header("Authorization", format!("Bearer {}", self.key))
            .json(body)
            .send()
            .await
    }

    /// A user of the host with these roles, and their token.
    async fn person(&self, external_id: &str, cases: &[(&str, &str)]) -> TestUser {
        let cases: Vec<Value> = cases
            .iter()
            .map(|(slug, role)| json!({"slug": slug, "role": role}))
            .collect();
        let minted = self
            .mint(json!({"user": {"externalId": external_id, "name": external_id}, "cases": cases}))
            .await
            .expect(201);
        TestUser {
            token: minted.body["token"].as_str().expect("a token").to_owned(),
            id: minted.body["user"]["id"].as_i64().expect("an id"),
            email: String::new(),
            session: None,
        }
    }

    async fn guard(&self, body: Value) -> Resp {
        self.app
            .post("/guard")
            .header("Authorization", format!("Bearer {}", self.key))
            .json(body)
            .send()
            .await
    }

    async fn announce(&self, slug: &str, body: Value) -> Resp {
        self.app
            .post(&format!("/cases/{slug}/events"))
            .header("Authorization", format!("Bearer {}", self.key))
            .json(body)
            .send()
            .await
    }

    async fn lock(&self, user: &TestUser, body: Value, status: u16) -> Resp {
        self.app
            .post("/locks")
            .by(user)
            .json(json!({ "lock": body }))
            .send()
            .await
            .expect(status)
    }
}

fn invoice(param: &str, case: &str) -> Value {
    json!({"lockableType": "Invoice", "lockableParam": param, "case": case})
}

fn with(mut body: Value, extra: Value) -> Value {
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

async fn a_key_mints_a_token_for_a_new_user_and_creates_their_case(h: Host) {
    let minted = h
        .mint(json!({
            "user": {"externalId": "u-17", "name": "Ann Host"},
            "cases": [{"slug": "acme", "role": "editor", "title": "Acme Ltd"}],
            "ttl": "90s",
        }))
        .await
        .expect(201);
    let user = &minted.body["user"];
    assert_eq!(user["externalId"], "u-17");
    assert_eq!(user["name"], "Ann Host");
    assert!(user["email"].is_null(), "{user}");
    let expires = chrono::DateTime::parse_from_rfc3339(minted.body["expiresAt"].as_str().unwrap())
        .expect("a time");
    let left = expires.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        left <= chrono::Duration::seconds(91) && left > chrono::Duration::seconds(60),
        "{left}"
    );

    // An ordinary token: REST and the edits channel.
    let ann = TestUser {
        token: minted.body["token"].as_str().unwrap().to_owned(),
        id: user["id"].as_i64().unwrap(),
        email: String::new(),
        session: None,
    };
    let me = h.app.get("/me").by(&ann).send().await.expect(200);
    assert_eq!(me.body["externalId"], "u-17");
    let case = h.app.get("/cases/acme").by(&ann).send().await.expect(200);
    assert_eq!(case.body["title"], "Acme Ltd");
    assert_eq!(case.body["role"], "editor");
    let (_tab, welcome) = h.app.open_tab("acme", &ann).await;
    assert_eq!(welcome["type"], "welcome");

    // A null role on an absent case creates nothing.
    h.mint(json!({"user": {"externalId": "u-17", "name": "Ann Host"},
                  "cases": [{"slug": "nowhere", "role": null}]}))
        .await
        .expect(201);
    h.app
        .get("/cases/nowhere")
        .by(&ann)
        .send()
        .await
        .expect(404);
}

async fn minting_again_updates_the_user_and_keeps_earlier_tokens(h: Host) {
    let first = h.person("u-1", &[("acme", "editor")]).await;
    let again = h
        .mint(json!({
            "user": {"externalId": "u-1", "name": "Ann Renamed", "email": "ann@example.com"},
            "cases": [{"slug": "acme", "role": "manager", "title": "ignored for an existing case"}],
        }))
        .await
        .expect(201);
    assert_eq!(again.body["user"]["id"].as_i64(), Some(first.id));
    assert_eq!(again.body["user"]["name"], "Ann Renamed");
    assert_eq!(again.body["user"]["email"], "ann@example.com");
    // The earlier token still works, and sees the new role.
    let case = h.app.get("/cases/acme").by(&first).send().await.expect(200);
    assert_eq!(case.body["role"], "manager");
    assert_eq!(
        case.body["title"], "acme",
        "a created case's title is its slug"
    );
    // Cases not named are left alone.
    h.mint(json!({"user": {"externalId": "u-1", "name": "Ann"}, "cases": []}))
        .await
        .expect(201);
    let case = h.app.get("/cases/acme").by(&first).send().await.expect(200);
    assert_eq!(case.body["role"], "manager");
}

async fn another_users_email_is_409_and_bad_fields_are_422(h: Host) {
    let local = h.app.user("Local").await; // local@example.com, signs in here
    h.mint(json!({"user": {"externalId": "u-2", "name": "Bo", "email": local.email}, "cases": []}))
        .await
        .expect_error(409, "conflict");
    for body in [
        json!({"cases": []}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}}),
        json!({"user": {"name": "Bo"}, "cases": []}),
        json!({"user": {"externalId": "u-2"}, "cases": []}),
        json!({"user": {"externalId": "u-2", "name": "Bo", "email": "not-an-email"}, "cases": []}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": [{"slug": "acme"}]}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": [{"slug": "acme", "role": "owner"}]}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": [{"slug": "Acme!", "role": "editor"}]}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": [], "ttl": "13h"}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": [], "ttl": "soon"}),
        json!({"user": {"externalId": 2, "name": "Bo"}, "cases": []}),
        json!({"user": {"externalId": "u-2", "name": "Bo"}, "cases": {"slug": "acme"}}),
    ] {
        let refused = h.mint(body.clone()).await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
        assert_eq!(refused.body["error"]["code"], "invalid", "{body}");
    }
    // A case named twice takes its last entry (no schema can say "each
    // slug once", and the document allows it).
    let minted = h
        .mint(json!({"user": {"externalId": "u-3", "name": "Cy"},
                     "cases": [{"slug": "twice", "role": "manager"}, {"slug": "twice", "role": "reader"}]}))
        .await
        .expect(201);
    let cy = TestUser {
        token: minted.body["token"].as_str().expect("a token").to_owned(),
        id: minted.body["user"]["id"].as_i64().expect("an id"),
        email: String::new(),
        session: None,
    };
    // A reader may read the case, and only a manager sees its memberships.
    h.app.get("/cases/twice").by(&cy).send().await.expect(200);
    h.app
        .get("/cases/twice/memberships")
        .by(&cy)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn the_key_routes_refuse_user_tokens_wrong_keys_and_revoked_keys(h: Host) {
    let local = h.app.user("Local").await;
    let body = json!({"user": {"externalId": "u-3", "name": "Cy"}, "cases": []});
    let guard = json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme",
                       "userExternalId": "u-3"});
    let event = json!({"type": "update", "watchable": {"type": "Invoice", "param": "inv-1"}});
    for (path, body) in [
        ("/auth/tokens", &body),
        ("/guard", &guard),
        ("/cases/acme/events", &event),
    ] {
        for credential in [
            None,
            Some(local.token.clone()),
            Some(format!("{}0", h.key)),
            Some("baton_key_0000".to_owned()),
        ] {
            let mut req = h.app.post(path).json(body.clone());
            if let Some(credential) = &credential {
                req = req.header("Authorization", format!("Bearer {credential}"));
            }
            req.send().await.expect_error(401, "unauthorized");
        }
    }
    h.mint(body.clone()).await.expect(201);
    let db = h.app.state.db.clone();
    db.write(None, |tx| {
        Ok::<_, baton::error::AppError>(ApiKey::revoke(tx.conn, "host", tx.now)?)
    })
    .await
    .expect("revoke");
    h.mint(body).await.expect_error(401, "unauthorized");
    h.guard(guard).await.expect_error(401, "unauthorized");
}

async fn a_key_opens_no_other_route(h: Host) {
    h.person("u-4", &[("acme", "manager")]).await;
    for path in ["/me", "/cases", "/cases/acme", "/locks?case=acme"] {
        h.app
            .get(path)
            .header("Authorization", format!("Bearer {}", h.key))
            .send()
            .await
            .expect_error(401, "unauthorized");
    }
    h.app
        .post("/locks")
        .header("Authorization", format!("Bearer {}", h.key))
        .json(json!({"lock": invoice("inv-1", "acme")}))
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn a_provisioned_user_cannot_sign_in_with_a_password(h: Host) {
    h.mint(
        json!({"user": {"externalId": "u-5", "name": "Di", "email": "di@example.com"},
                  "cases": []}),
    )
    .await
    .expect(201);
    for password in ["", "anything-at-all"] {
        h.app
            .post("/auth/login")
            .json(json!({"email": "di@example.com", "password": password}))
            .send()
            .await
            .expect_error(401, "unauthorized");
    }
}

async fn a_null_role_removes_the_membership_and_ends_locks_and_places_in_line(h: Host) {
    let ann = h
        .person("ann", &[("acme", "editor"), ("other", "editor")])
        .await;
    let bob = h.person("bob", &[("acme", "editor")]).await;
    let (ann_tab, bob_tab) = (ann.tab("ann-tab"), bob.tab("bob-tab"));
    let held = h.lock(&ann_tab, invoice("inv-1", "acme"), 201).await.body;
    let kept = h.lock(&ann_tab, invoice("inv-1", "other"), 201).await.body;
    let bobs = h.lock(&bob_tab, invoice("inv-2", "acme"), 201).await.body;
    // Ann waits for Bob's invoice.
    h.lock(
        &ann_tab,
        with(invoice("inv-2", "acme"), json!({"wait": true})),
        202,
    )
    .await;
    let (mut watcher, _) = h.app.open_tab("acme", &bob.tab("watching")).await;
    let (mut anns, _) = h.app.open_tab("acme", &ann_tab).await;

    h.mint(json!({"user": {"externalId": "ann", "name": "ann"},
                  "cases": [{"slug": "acme", "role": null}]}))
        .await
        .expect(201);

    let ended = watcher
        .next_where("the lock's destroy", |f| {
            f["type"] == "destroy" && f["watchable"]["token"] == held["token"]
        })
        .await;
    assert_eq!(ended["watchable"]["reason"], "kicked");
    let kicked = anns.next_where("kicked", |f| f["type"] == "kicked").await;
    assert_eq!(kicked["reason"], "access_removed", "{kicked}");
    h.app.get("/cases/acme").by(&ann).send().await.expect(403);
    let status = h
        .app
        .get("/locks/status?lockableType=Invoice&lockableParam=inv-2&case=acme")
        .by(&bob_tab)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "owned");
    assert_eq!(status.body["lock"]["token"], bobs["token"]);
    assert_eq!(status.body["waiters"], json!([]), "Ann left the line");
    // Her lock in the other case stays.
    let other = h
        .app
        .get("/locks/status?lockableType=Invoice&lockableParam=inv-1&case=other")
        .by(&ann_tab)
        .send()
        .await
        .expect(200);
    assert_eq!(other.body["lock"]["token"], kept["token"]);
}

async fn external_records_are_locked_by_case_and_param(h: Host) {
    let ann = h
        .person("ann", &[("acme", "editor"), ("zenith", "editor")])
        .await
        .tab("ann-tab");
    let bob = h.person("bob", &[("acme", "editor")]).await.tab("bob-tab");
    let lock = h.lock(&ann, invoice("inv-2031", "acme"), 201).await.body;
    assert_eq!(
        lock["lockable"],
        json!({"type": "Invoice", "table": "invoices", "param": "inv-2031"})
    );
    // Asking again renews the same lock; someone else gets 409.
    let again = h.lock(&ann, invoice("inv-2031", "acme"), 200).await.body;
    assert_eq!(again["token"], lock["token"]);
    let held = h.lock(&bob, invoice("inv-2031", "acme"), 409).await.body;
    assert_eq!(held["error"]["lock"]["token"], lock["token"]);
    assert!(held["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Invoice inv-2031"));
    // Another case's inv-2031 is another record.
    h.lock(&ann, invoice("inv-2031", "zenith"), 201).await;
    // An integral number is its decimal string.
    let numbered = h
        .lock(
            &bob,
            json!({"lockableType": "Invoice", "lockableParam": 2031, "case": "acme"}),
            201,
        )
        .await
        .body;
    assert_eq!(numbered["lockable"]["param"], "2031");
    let case = h.app.get("/cases/acme").by(&bob).send().await.expect(200);
    let params: Vec<&str> = case.body["activeLocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lockable"]["param"].as_str().unwrap())
        .collect();
    assert_eq!(params, ["inv-2031", "2031"]);
    assert!(
        case.body.get("invoices").is_none(),
        "not nested: {}",
        case.body
    );
    let status = h
        .app
        .get("/locks/status?lockableType=Invoice&lockableParam=inv-2031&case=acme")
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "locked");
    let never = h
        .app
        .get("/locks/status?lockableType=Invoice&lockableParam=never-locked&case=acme")
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(never.body["state"], "unlocked");
    // Released, it is free.
    h.app
        .delete(&format!("/locks/{}", lock["id"]))
        .by(&ann)
        .send()
        .await
        .expect(204);
    h.lock(&bob, invoice("inv-2031", "acme"), 201).await;
}

async fn external_lock_requests_that_cannot_be_right_are_refused(h: Host) {
    let ann = h.person("ann", &[("acme", "editor")]).await;
    for body in [
        json!({"lockableType": "Invoice", "lockableParam": "inv-1"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv 1", "case": "acme"}),
        json!({"lockableType": "Invoice", "lockableParam": "", "case": "acme"}),
        json!({"lockableType": "Invoice", "lockableParam": "x".repeat(201), "case": "acme"}),
        json!({"lockableType": "Invoice", "lockableParam": 1.5, "case": "acme"}),
        json!({"lockableType": "Invoice", "case": "acme"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme", "depth": "infinity"}),
    ] {
        let refused = h
            .app
            .post("/locks")
            .by(&ann)
            .json(json!({ "lock": body }))
            .send()
            .await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
    }
    h.lock(&ann, invoice("inv-1", "nowhere"), 404).await;
    let stranger = h.person("cy", &[]).await;
    h.lock(&stranger, invoice("inv-1", "acme"), 403).await;
    let reader = h.person("di", &[("acme", "reader")]).await;
    h.lock(&reader, invoice("inv-1", "acme"), 403).await;
    h.app
        .get("/locks/status?lockableType=Invoice&lockableParam=inv-1")
        .by(&ann)
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn external_records_are_taken_over_waited_for_and_audited(h: Host) {
    let ann = h.person("ann", &[("acme", "manager")]).await.tab("ann-tab");
    let bob = h.person("bob", &[("acme", "editor")]).await.tab("bob-tab");
    let cy = h.person("cy", &[("acme", "editor")]).await.tab("cy-tab");
    let first = h.lock(&bob, invoice("inv-7", "acme"), 201).await.body;
    let waiter = h
        .lock(
            &cy,
            with(invoice("inv-7", "acme"), json!({"wait": true})),
            202,
        )
        .await
        .body;
    assert_eq!(waiter["lockable"]["param"], "inv-7");
    let taken = h
        .lock(
            &ann,
            with(invoice("inv-7", "acme"), json!({"takeover": true})),
            201,
        )
        .await
        .body;
    let token = |lock: &Value| lock["token"].as_str().unwrap().parse::<u64>().unwrap();
    assert!(token(&taken) > token(&first));
    // Ann releases: the record goes to Cy, who waited.
    h.app
        .delete(&format!("/locks/{}", taken["id"]))
        .by(&ann)
        .send()
        .await
        .expect(204);
    let status = h
        .app
        .get("/locks/status?lockableType=Invoice&lockableParam=inv-7&case=acme")
        .by(&cy)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "owned");
    let handed = &status.body["lock"];
    assert!(token(handed) > token(&taken));
    let trail = h
        .app
        .get("/cases/acme/lock_events")
        .by(&ann)
        .send()
        .await
        .expect(200);
    let actions: Vec<(&str, &str)> = trail
        .body
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["lockable"]["param"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("acquired", "inv-7"),
            ("queued", "inv-7"),
            ("overridden", "inv-7"),
            ("acquired", "inv-7"),
            ("released", "inv-7"),
            ("handed_off", "inv-7"),
        ]
    );
}

async fn external_sets_and_claims_name_their_case(h: Host) {
    let ann = h
        .person("ann", &[("acme", "editor"), ("zenith", "editor")])
        .await
        .tab("ann-tab");
    let bob = h.person("bob", &[("acme", "editor")]).await.tab("bob-tab");
    let set = h
        .app
        .post("/locks/batch")
        .by(&ann)
        .json(json!({"locks": [invoice("inv-1", "acme"), invoice("inv-2", "acme")]}))
        .send()
        .await
        .expect(201);
    let params: Vec<&str> = set.body["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lockable"]["param"].as_str().unwrap())
        .collect();
    assert_eq!(params, ["inv-1", "inv-2"]);
    h.app
        .post("/locks/batch")
        .by(&ann)
        .json(json!({"locks": [invoice("inv-3", "acme"), invoice("inv-3", "zenith")]}))
        .send()
        .await
        .expect_error(422, "invalid");
    let claimed = h
        .app
        .post("/locks/claim")
        .by(&bob)
        .json(json!({"claim": {"candidates": [
            invoice("inv-1", "acme"), invoice("inv-2", "acme"), invoice("inv-3", "acme"),
        ]}}))
        .send()
        .await
        .expect(201);
    assert_eq!(claimed.body["lockable"]["param"], "inv-3");
}

async fn the_guard_answers_423_then_412_and_renews_the_holder(backend: Backend) {
    if let Some(h) = host(backend).await {
        guard_answers(h).await;
    }
}

async fn the_guard_answers_alike_on_the_general_path(backend: Backend) {
    if let Some(h) = host_with(backend, false).await {
        guard_answers(h).await;
    }
}

async fn guard_answers(h: Host) {
    let ann = h.person("ann", &[("acme", "editor")]).await.tab("ann-tab");
    h.person("bob", &[("acme", "editor")]).await;
    let ask = |user: &str, session: Option<&str>, token: Option<&Value>| {
        let mut body = json!({"lockableType": "Invoice", "lockableParam": "inv-9",
                              "case": "acme", "userExternalId": user});
        if let Some(session) = session {
            body["sessionId"] = json!(session);
        }
        if let Some(token) = token {
            body["lockToken"] = token.clone();
        }
        body
    };
    // Nobody holds it: anyone may write.
    h.guard(ask("bob", None, None)).await.expect(204);
    let lock = h.lock(&ann, invoice("inv-9", "acme"), 201).await.body;
    // Someone else: 423 with the lock and the record.
    let locked = h
        .guard(ask("bob", Some("bob-tab"), None))
        .await
        .expect_error(423, "locked");
    assert_eq!(locked.body["error"]["lock"]["token"], lock["token"]);
    assert_eq!(
        locked.body["error"]["lockable"],
        json!({"type": "Invoice", "table": "invoices", "param": "inv-9", "caseId": lock["caseId"]})
    );
    // Ann without her tab is another tab: 423.
    h.guard(ask("ann", None, None))
        .await
        .expect_error(423, "locked");
    h.guard(ask("ann", Some("other-tab"), None))
        .await
        .expect_error(423, "locked");
    // From her tab, with her token: 204, and her lock's activity renewed.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    h.guard(ask("ann", Some("ann-tab"), Some(&lock["token"])))
        .await
        .expect(204);
    let renewed = h
        .app
        .get(&format!("/locks/{}", lock["id"]))
        .by(&ann)
        .send()
        .await
        .expect(200)
        .body;
    assert!(renewed["lastActivityAt"].as_str() > lock["lastActivityAt"].as_str());
    assert!(renewed["expiresAt"].as_str() > lock["expiresAt"].as_str());
    // She releases and locks again: the old token is lost, and `current`
    // is the lock that holds it now.
    h.app
        .delete(&format!("/locks/{}", lock["id"]))
        .by(&ann)
        .send()
        .await
        .expect(204);
    let lost = h
        .guard(ask("ann", Some("ann-tab"), Some(&lock["token"])))
        .await
        .expect_error(412, "lock_lost");
    assert!(lost.body["error"]["current"].is_null(), "{}", lost.body);
    assert!(lost.body["error"]
        .as_object()
        .unwrap()
        .contains_key("current"));
    let relocked = h.lock(&ann, invoice("inv-9", "acme"), 201).await.body;
    let lost = h
        .guard(ask("ann", Some("ann-tab"), Some(&lock["token"])))
        .await
        .expect_error(412, "lock_lost");
    assert_eq!(lost.body["error"]["current"]["token"], relocked["token"]);
    // A token on a record never locked is lost as well.
    let mut never = ask("ann", Some("ann-tab"), Some(&json!("1")));
    never["lockableParam"] = json!("never-locked");
    h.guard(never).await.expect_error(412, "lock_lost");
}

async fn the_guard_refuses_readers_and_strangers(h: Host) {
    h.person("rita", &[("acme", "reader")]).await;
    h.person("ann", &[("zenith", "editor")]).await;
    for user in ["rita", "ann", "nobody-ever-minted"] {
        h.guard(
            json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme",
                       "userExternalId": user}),
        )
        .await
        .expect_error(403, "forbidden");
    }
    h.guard(
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "nowhere",
                   "userExternalId": "ann"}),
    )
    .await
    .expect_error(404, "not_found");
    for body in [
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "userExternalId": "ann"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv 1", "case": "acme", "userExternalId": "ann"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme", "userExternalId": "ann", "lockToken": "x"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme", "userExternalId": "ann", "sessionId": ""}),
        json!({"lockableType": "Ledger", "lockableParam": "inv-1", "case": "acme", "userExternalId": "ann"}),
        json!({"lockableType": "Invoice", "lockableParam": "inv-1", "case": "acme", "userExternalId": 7}),
        json!({"lockableType": "Case", "lockableParam": "1", "userExternalId": "ann"}),
        json!({"lockableType": "Note", "lockableParam": "inv-1", "case": "acme", "userExternalId": "ann"}),
    ] {
        let refused = h.guard(body.clone()).await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
    }
}

async fn the_guard_covers_records_baton_stores(h: Host) {
    let ann = h.person("ann", &[("acme", "editor")]).await.tab("ann-tab");
    h.person("bob", &[("acme", "editor")]).await;
    let note = h
        .app
        .post("/cases/acme/notes")
        .by(&ann)
        .json(json!({"note": {"text": "hello"}}))
        .send()
        .await
        .expect(201)
        .body;
    let ask = json!({"lockableType": "Note", "lockableParam": note["param"], "case": "acme",
                     "userExternalId": "bob"});
    h.guard(ask.clone()).await.expect(204);
    h.app
        .post("/locks")
        .by(&ann)
        .json(json!({"lock": {"lockableType": "Note", "lockableParam": note["param"]}}))
        .send()
        .await
        .expect(201);
    h.guard(ask.clone()).await.expect_error(423, "locked");
    let mut elsewhere = ask;
    elsewhere["case"] = json!("zenith");
    h.person("cy", &[("zenith", "editor")]).await;
    elsewhere["userExternalId"] = json!("cy");
    h.guard(elsewhere).await.expect_error(404, "not_found");
    // A record that does not exist is 404 before a stranger is 403.
    h.guard(
        json!({"lockableType": "Note", "lockableParam": "99999", "case": "acme",
                   "userExternalId": "nobody-ever-minted"}),
    )
    .await
    .expect_error(404, "not_found");
}

async fn announced_frames_reach_the_tabs_of_the_case_in_order(h: Host) {
    let ann = h.person("ann", &[("acme", "editor")]).await;
    let (mut tab, _) = h.app.open_tab("acme", &ann.tab("watching")).await;
    for (i, change) in ["create", "update", "update", "destroy"].iter().enumerate() {
        h.announce(
            "acme",
            json!({"type": change,
                   "watchable": {"type": "Invoice", "param": "inv-5", "total": i, "note": "ünï"},
                   "editorSessionId": "host-tab"}),
        )
        .await
        .expect(202);
    }
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let frame = tab.next_change().await;
        seen.push(frame);
    }
    for (i, frame) in seen.iter().enumerate() {
        assert_eq!(
            frame["type"],
            ["create", "update", "update", "destroy"][i],
            "{frame}"
        );
        assert_eq!(
            frame["watchable"],
            json!({"type": "Invoice", "param": "inv-5", "total": i, "note": "ünï"})
        );
        assert_eq!(frame["editorSessionId"], "host-tab");
    }
}

async fn announcements_that_cannot_be_right_are_refused(h: Host) {
    h.person("ann", &[("acme", "editor")]).await;
    h.announce(
        "nowhere",
        json!({"type": "update", "watchable": {"type": "Invoice", "param": "inv-1"}}),
    )
    .await
    .expect_error(404, "not_found");
    for body in [
        json!({"type": "update", "watchable": {"type": "Lock", "param": "1"}}),
        json!({"type": "update", "watchable": {"type": "Waiter", "param": "1"}}),
        json!({"type": "update", "watchable": {"type": "Ledger", "param": "1"}}),
        json!({"type": "update", "watchable": {"param": "1"}}),
        json!({"type": "update", "watchable": {"type": "Invoice"}}),
        json!({"type": "update", "watchable": {"type": "Invoice", "param": 7}}),
        json!({"type": "changed", "watchable": {"type": "Invoice", "param": "1"}}),
        json!({"watchable": {"type": "Invoice", "param": "1"}}),
        json!({"type": "update"}),
        json!({"type": "update", "watchable": ["Invoice"]}),
        json!({"type": "update", "watchable": {"type": "Invoice", "param": "1"}, "editorSessionId": 5}),
    ] {
        let refused = h.announce("acme", body.clone()).await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
    }
}

/// baton announces the records it stores itself: a host's frame for one of
/// them, or for one of baton's own kinds, would let it overwrite them in
/// every tab.
async fn only_external_types_are_announced(h: Host) {
    let ann = h.person("ann", &[("acme", "editor")]).await;
    let (mut tab, _) = h.app.open_tab("acme", &ann.tab("watching")).await;
    for type_name in [
        "Note",
        "Case",
        "Lock",
        "Waiter",
        "User",
        "Membership",
        "LockEvent",
        "Card",
        "invoice",
        "",
    ] {
        let body = json!({"type": "update",
                          "watchable": {"type": type_name, "param": "1", "version": 999999}});
        let refused = h.announce("acme", body.clone()).await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
        assert_eq!(refused.body["error"]["code"], "invalid", "{body}");
        let message = refused.body["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains("Invoice"),
            "names the external types: {message}"
        );
    }
    // An external type's frame still goes through, and it is the first the
    // tab sees: none of the refused ones reached it.
    h.announce(
        "acme",
        json!({"type": "update", "watchable": {"type": "Invoice", "param": "inv-1"}}),
    )
    .await
    .expect(202);
    let frame = tab.next_change().await;
    assert_eq!(
        frame["watchable"],
        json!({"type": "Invoice", "param": "inv-1"})
    );
}

/// No table or row lock before the caller's role is known: a reader's guard
/// of a record whose row another transaction holds is answered (403)
/// without waiting for that transaction. PostgreSQL only, on the general
/// path: on SQLite every write transaction waits for the one writer anyway.
async fn the_guard_locks_no_row_before_the_role_is_known(backend: Backend) {
    if backend == Backend::Sqlite {
        return;
    }
    let Some(h) = host_with(backend, false).await else {
        return;
    };
    let ann = h.person("ann", &[("acme", "editor")]).await.tab("ann-tab");
    h.person("rita", &[("acme", "reader")]).await;
    let note = h
        .app
        .post("/cases/acme/notes")
        .by(&ann)
        .json(json!({"note": {"text": "hello"}}))
        .send()
        .await
        .expect(201)
        .body;
    let id = note["id"].as_i64().expect("an id");
    // Another transaction holds the note's row, as a guarded write of it
    // would, until it is told to let go (or a generous deadline passes).
    let (held, is_held) = tokio::sync::oneshot::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let db = h.app.state.db.clone();
    let holder = tokio::spawn(async move {
        db.write(None, move |tx| {
            let kind = baton::locks::engine::kind_named("Note").expect("Note is declared");
            kind.find_for_update(tx.conn, id)?.expect("the note");
            held.send(()).ok();
            let told = released
                .recv_timeout(std::time::Duration::from_secs(30))
                .is_ok();
            Ok::<_, baton::error::AppError>(told)
        })
        .await
    });
    is_held.await.expect("the row is held");
    // The reader is refused while the row is still held.
    h.guard(
        json!({"lockableType": "Note", "lockableParam": note["param"], "case": "acme",
                   "userExternalId": "rita"}),
    )
    .await
    .expect_error(403, "forbidden");
    release.send(()).ok();
    let told = holder
        .await
        .expect("the holder ran")
        .expect("its transaction");
    assert!(
        told,
        "the reader's guard waited for the row instead of being refused first"
    );
    // An editor's guard, which does lock the row, goes through once it is free.
    h.guard(
        json!({"lockableType": "Note", "lockableParam": note["param"], "case": "acme",
                   "userExternalId": "ann", "sessionId": "ann-tab"}),
    )
    .await
    .expect(204);
}

async fn a_deep_lock_on_the_case_covers_records_never_locked(h: Host) {
    let ann = h.person("ann", &[("acme", "manager")]).await.tab("ann-tab");
    h.person("bob", &[("acme", "editor")]).await;
    let case_id = h
        .app
        .get("/cases/acme")
        .by(&ann)
        .send()
        .await
        .expect(200)
        .body["id"]
        .clone();
    h.lock(
        &ann,
        json!({"lockableType": "Case", "lockableParam": case_id, "depth": "infinity"}),
        201,
    )
    .await;
    for param in ["never-locked", "also-never"] {
        let locked = h
            .guard(
                json!({"lockableType": "Invoice", "lockableParam": param, "case": "acme",
                          "userExternalId": "bob", "sessionId": "bob-tab"}),
            )
            .await
            .expect_error(423, "locked");
        assert_eq!(locked.body["error"]["lock"]["depth"], "infinity");
    }
    // Ann's own deep lock lets her write.
    h.guard(
        json!({"lockableType": "Invoice", "lockableParam": "never-locked", "case": "acme",
                   "userExternalId": "ann", "sessionId": "ann-tab"}),
    )
    .await
    .expect(204);
}

async fn the_same_new_user_minted_at_once_is_201_every_time(h: Host) {
    for round in 0..5 {
        let body = json!({"user": {"externalId": format!("new-{round}"), "name": "New"},
                          "cases": [{"slug": format!("fresh-{round}"), "role": "editor"}]});
        let calls = (0..4).map(|_| h.mint(body.clone()));
        let answers = futures_util::future::join_all(calls).await;
        let ids: Vec<Value> = answers
            .into_iter()
            .map(|answer| answer.expect(201).body["user"]["id"].clone())
            .collect();
        assert!(ids.iter().all(|id| *id == ids[0]), "one user: {ids:?}");
    }
}

async fn a_bad_key_is_401_before_anything_about_the_body(h: Host) {
    for (path, body) in [
        ("/auth/tokens", json!({"cases": []})),
        ("/auth/tokens", json!({"user": 5})),
        ("/guard", json!({"lockableType": "Invoice"})),
        ("/cases/acme/events", json!({"type": "changed"})),
    ] {
        h.app
            .post(path)
            .header("Authorization", "Bearer baton_key_0000")
            .json(body.clone())
            .send()
            .await
            .expect_error(401, "unauthorized");
        // With the live key, the same body is what is wrong.
        let refused = h
            .app
            .post(path)
            .header("Authorization", format!("Bearer {}", h.key))
            .json(body.clone())
            .send()
            .await;
        assert_eq!(refused.status, 422, "{path} {body}: {}", refused.body);
    }
}
