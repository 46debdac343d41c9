//! Running baton in production: signing out and revocation, user changes and
//! removal, login throttling, security headers and request ids, the access
//! log, metrics, the prompt close of a finished channel, and SIGTERM handing
//! tabs (and their locks) to another instance. Behaviour about processes is
//! tested on real `baton serve` processes.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::models::Role;
use common::storm::Storm;
use common::{lock_body, Backend, ServerProcess, TestApp, TestUser};
use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

on_both_backends!(TestApp::start =>
    signing_out_ends_only_that_token,
    a_new_password_ends_the_other_tokens,
    changing_a_user_is_for_themselves_or_an_admin,
    removing_a_user_ends_their_tokens_locks_and_tabs,
    responses_carry_security_headers_and_a_request_id,
    a_closed_channel_ends_its_tcp_connection_at_once,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        s.login_account_limit = 3;
        s.login_address_limit = 5;
        s.client_ip_header = Some("X-Forwarded-For".into());
    }) =>
    failed_sign_ins_are_throttled_per_account_and_address,
);
on_both_backends!(TestApp::start =>
    a_login_flood_leaves_a_lock_storm_correct,
);

/// Signs in with the test password; the token.
async fn sign_in(app: &TestApp, email: &str) -> String {
    let resp = app
        .post("/auth/login")
        .json(json!({ "email": email, "password": "password1" }))
        .send()
        .await
        .expect(200);
    resp.body["token"].as_str().unwrap().to_owned()
}

fn with_token(user: &TestUser, token: &str) -> TestUser {
    TestUser {
        token: token.to_owned(),
        ..user.clone()
    }
}

async fn signing_out_ends_only_that_token(app: TestApp) {
    let alice = app.user("Alice").await;
    let phone = with_token(&alice, &sign_in(&app, &alice.email).await);

    app.post("/auth/logout").by(&phone).send().await.expect(204);
    app.get("/me")
        .by(&phone)
        .send()
        .await
        .expect_error(401, "unauthorized");
    // Signing out twice: the token is already dead.
    app.post("/auth/logout")
        .by(&phone)
        .send()
        .await
        .expect_error(401, "unauthorized");
    // Her other token (another device) still works.
    app.get("/me").by(&alice).send().await.expect(200);
    // Unauthenticated.
    app.post("/auth/logout")
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn a_new_password_ends_the_other_tokens(app: TestApp) {
    let alice = app.user("Alice").await;
    let laptop = with_token(&alice, &sign_in(&app, &alice.email).await);
    let path = format!("/users/{}", alice.id);

    app.patch(&path)
        .by(&alice)
        .json(json!({ "user": { "password": "a-new-password" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.patch(&path)
        .by(&alice)
        .json(json!({ "user": { "password": "a-new-password" }, "currentPassword": "wrong-one" }))
        .send()
        .await
        .expect_error(403, "forbidden");
    let changed = app
        .patch(&path)
        .by(&alice)
        .json(json!({
            "user": { "password": "a-new-password", "name": "Alice A." },
            "currentPassword": "password1"
        }))
        .send()
        .await
        .expect(200);
    assert_eq!(changed.body["name"], "Alice A.");
    assert_eq!(changed.body["email"], alice.email);

    // The token that changed it lives on; every other one has ended.
    app.get("/me").by(&alice).send().await.expect(200);
    app.get("/me")
        .by(&laptop)
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.post("/auth/login")
        .json(json!({ "email": alice.email, "password": "password1" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.post("/auth/login")
        .json(json!({ "email": alice.email, "password": "a-new-password" }))
        .send()
        .await
        .expect(200);
}

async fn changing_a_user_is_for_themselves_or_an_admin(app: TestApp) {
    let admin = app.admin("Ada").await;
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let bob_path = format!("/users/{}", bob.id);

    // Not their account.
    app.patch(&bob_path)
        .by(&carol)
        .json(json!({ "user": { "name": "Mallory" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    // Not a site admin.
    app.patch(&bob_path)
        .by(&bob)
        .json(json!({ "user": { "admin": true } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    // Unauthenticated.
    app.patch(&bob_path)
        .json(json!({ "user": { "name": "Bobby" } }))
        .send()
        .await
        .expect_error(401, "unauthorized");
    // An admin may, and needs no current password to reset one.
    let promoted = app
        .patch(&bob_path)
        .by(&admin)
        .json(json!({ "user": { "admin": true, "password": "reset-by-admin" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(promoted.body["admin"], true);
    // ... which ended all of Bob's tokens.
    app.get("/me")
        .by(&bob)
        .send()
        .await
        .expect_error(401, "unauthorized");
    // Not found.
    app.patch("/users/999999")
        .by(&admin)
        .json(json!({ "user": { "name": "Nobody" } }))
        .send()
        .await
        .expect_error(404, "not_found");
    // Bad fields.
    app.patch(&format!("/users/{}", carol.id))
        .by(&carol)
        .json(json!({ "user": { "name": "  " } }))
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn removing_a_user_ends_their_tokens_locks_and_tabs(app: TestApp) {
    let admin = app.admin("Ada").await.tab("ada-tab");
    let bob = app.user("Bob").await.tab("bob-tab");
    let carol = app.user("Carol").await.tab("carol-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let (mut bobs_tab, _) = app.open_tab("c", &bob).await;
    let (mut carols_tab, _) = app.open_tab("c", &carol).await;
    let bob_path = format!("/users/{}", bob.id);

    app.delete(&bob_path)
        .by(&carol)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.delete(&format!("/users/{}", admin.id))
        .by(&admin)
        .send()
        .await
        .expect_error(409, "conflict");
    app.delete(&bob_path).by(&admin).send().await.expect(204);
    app.delete(&bob_path)
        .by(&admin)
        .send()
        .await
        .expect_error(404, "not_found");

    // His lock ended as `kicked`, and the case saw it.
    let destroyed = carols_tab
        .next_where("the lock's destroy", |f| {
            f["type"] == "destroy" && f["watchable"]["type"] == "Lock"
        })
        .await;
    assert_eq!(destroyed["watchable"]["reason"], "kicked");
    assert_eq!(destroyed["watchable"]["token"], lock.body["token"]);
    app.get(&format!("/locks/{}", lock.body["id"]))
        .by(&carol)
        .send()
        .await
        .expect_error(404, "not_found");
    // His tab was told and closed.
    let kicked = bobs_tab
        .next_where("kicked", |f| f["type"] == "kicked")
        .await;
    // Their tokens ended with the account: signed out.
    assert_eq!(kicked["reason"], "signed_out", "{kicked}");
    assert!(bobs_tab.closed_by_server().await);
    // His token and his password no longer work; the audit trail keeps him.
    app.get("/me")
        .by(&bob)
        .send()
        .await
        .expect_error(401, "unauthorized");
    app.post("/auth/login")
        .json(json!({ "email": bob.email, "password": "password1" }))
        .send()
        .await
        .expect_error(401, "unauthorized");
    let audit = app.audit(f.case_id).await;
    assert!(audit
        .iter()
        .any(|(action, _, actor, holder)| action == "kicked"
            && *actor == Some(admin.id)
            && *holder == bob.id));
    // His email stays taken.
    app.post("/users")
        .by(&admin)
        .json(json!({ "user": { "email": bob.email, "name": "Bob II", "password": "password1" } }))
        .send()
        .await
        .expect_error(409, "conflict");
}

async fn failed_sign_ins_are_throttled_per_account_and_address(app: TestApp) {
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await;
    let login = |email: &str, password: &str, address: &str| {
        app.post("/auth/login")
            .header("X-Forwarded-For", format!("10.9.9.9, {address}"))
            .json(json!({ "email": email, "password": password }))
    };

    for _ in 0..3 {
        login(&alice.email, "wrong", "203.0.113.1")
            .send()
            .await
            .expect_error(401, "unauthorized");
    }
    // The account is refused now, even with the right password, from anywhere.
    let refused = login(&alice.email, "password1", "198.51.100.9")
        .send()
        .await
        .expect_error(429, "rate_limited");
    let retry: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=15 * 60).contains(&retry), "Retry-After {retry}");
    // Another account from the same address is fine (3 failures < 5) ...
    sign_in_from(&app, &bob.email, "203.0.113.1").await;
    // ... until the address has 5 failures, whatever the account.
    for _ in 0..2 {
        login("nobody@example.com", "wrong", "203.0.113.1")
            .send()
            .await
            .expect_error(401, "unauthorized");
    }
    login(&bob.email, "password1", "203.0.113.1")
        .send()
        .await
        .expect_error(429, "rate_limited");
    // A correct sign-in from elsewhere is never throttled.
    sign_in_from(&app, &bob.email, "192.0.2.44").await;
}

async fn sign_in_from(app: &TestApp, email: &str, address: &str) {
    app.post("/auth/login")
        .header("X-Forwarded-For", address)
        .json(json!({ "email": email, "password": "password1" }))
        .send()
        .await
        .expect(200);
}

async fn responses_carry_security_headers_and_a_request_id(app: TestApp) {
    let alice = app.user("Alice").await;
    let me = app.get("/me").by(&alice).send().await.expect(200);
    let header = |r: &common::Resp, name: &str| {
        r.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(header(&me, "x-content-type-options"), "nosniff");
    assert_eq!(header(&me, "referrer-policy"), "no-referrer");
    assert_eq!(header(&me, "cache-control"), "no-store");
    let made = header(&me, "x-request-id");
    assert_eq!(made.len(), 36, "a generated request id: {made}");

    // Errors too, and a request id the client sent comes back.
    let missing = app
        .get("/cards/999999")
        .by(&alice)
        .header("X-Request-ID", "trace-42")
        .send()
        .await
        .expect_error(404, "not_found");
    assert_eq!(header(&missing, "x-request-id"), "trace-42");
    assert_eq!(header(&missing, "x-content-type-options"), "nosniff");
    assert_eq!(header(&missing, "cache-control"), "no-store");
}

async fn a_login_flood_leaves_a_lock_storm_correct(app: TestApp) {
    let backend = app.backend;
    let app = Arc::new(app);
    let target = app.user("Target").await;
    let mut storm = Storm::seed(&app, "flood", 4).await;
    storm.cycles = 300;
    let storming = actix_web::rt::spawn(storm.run(app.clone()));

    let mut logins = Vec::new();
    for _ in 0..500 {
        let (app, email) = (app.clone(), target.email.clone());
        logins.push(actix_web::rt::spawn(async move {
            app.post("/auth/login")
                .json(json!({ "email": email, "password": "wrong password" }))
                .send()
                .await
                .status
        }));
    }
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for login in logins {
        *statuses.entry(login.await.unwrap()).or_default() += 1;
    }
    // Storm::run asserts no overlap, no reused token, no error status.
    storming.await.expect("the storm stayed correct");
    eprintln!("{backend:?}: 500 wrong sign-ins answered {statuses:?}");
    assert_eq!(
        statuses.keys().copied().collect::<Vec<_>>(),
        [401, 429],
        "{statuses:?}"
    );
    // Only the first 10 (the account's limit) may reach the password check;
    // a few more may have been let in before the tenth failure was counted.
    assert!(statuses[&429] >= 500 - 10 - 16, "{statuses:?}");
}

async fn a_closed_channel_ends_its_tcp_connection_at_once(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    app.case("c", &[(&bob, Role::Reader)]).await;
    let mut socket = app.raw_socket("c", &bob).await;
    // The welcome first, so the channel is fully open.
    loop {
        if let Some(Ok(Message::Text(_))) = socket.next().await {
            break;
        }
    }
    let closed_at = Instant::now();
    socket.close(None).await.expect("send close");
    let mut got_close = false;
    let eof = loop {
        match tokio::time::timeout(Duration::from_secs(5), socket.next()).await {
            Ok(Some(Ok(Message::Close(_)))) => got_close = true,
            Ok(Some(Ok(_))) => {}
            Ok(None) | Ok(Some(Err(_))) => break closed_at.elapsed(),
            Err(_) => panic!("the server kept the connection open for 5 s"),
        }
    };
    assert!(got_close, "the server answered the close handshake");
    assert!(eof <= Duration::from_millis(50), "close → EOF took {eof:?}");
}

// ---- real processes ----

#[actix_web::test]
async fn the_access_log_has_request_ids_and_never_a_token() {
    let Some((_db, url)) = common::TestDb::create(Backend::Sqlite) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("baton.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let server = ServerProcess::spawn_with(
        &url,
        "logged",
        &[
            ("BATON_LOG_FORMAT", "json"),
            ("RUST_LOG", "warn,baton::access=info"),
        ],
        &[],
        log,
    )
    .await;
    let token = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl";
    let http = reqwest::Client::new();
    let sent = http
        .get(format!("{}/me", server.base))
        .header("X-Request-ID", "from-the-client-1")
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 401);
    let channel = http
        .get(format!(
            "{}/cases/nowhere/edits?token={token}&sessionId=s1",
            server.base
        ))
        .send()
        .await
        .unwrap();
    let made_id = channel.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();

    let lines = wait_for_log(&log_path, |text| text.contains(&made_id)).await;
    assert!(!lines.contains(token), "a token reached the log:\n{lines}");
    assert!(!lines.contains("c2lnbmF0dXJl"), "a token reached the log");
    let entries: Vec<Value> = lines
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &Value| v["target"] == "baton::access")
        .collect();
    let me = entries
        .iter()
        .find(|e| e["route"] == "/me")
        .expect("the /me request was logged");
    assert_eq!(me["method"], "GET");
    assert_eq!(me["status"], 401);
    assert!(me["latency_ms"].as_f64().is_some());
    assert_eq!(me["request_id"], "from-the-client-1", "{me}");
    let edits = entries
        .iter()
        .find(|e| e["route"] == "/cases/{slug}/edits")
        .expect("the channel request was logged");
    assert_eq!(edits["request_id"], made_id.as_str());
    assert!(edits["target"].is_string());
    assert!(
        lines.contains("token=[redacted]"),
        "the token parameter is shown redacted:\n{lines}"
    );
}

/// The log file's text once `ready` holds (5 s at most).
async fn wait_for_log(path: &std::path::Path, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if ready(&text) || Instant::now() > deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn sigterm_closes_tabs_with_1012_and_exits() {
    let Some((_db, url)) = common::TestDb::create(Backend::Sqlite) else {
        return;
    };
    let null = std::process::Stdio::null();
    let mut server = ServerProcess::spawn_with(&url, "stopping", &[], &["--demo"], null).await;
    let http = reqwest::Client::new();
    let signed_in: Value = http
        .post(format!("{}/auth/login", server.base))
        .json(&json!({ "email": "bob@example.com", "password": "demo" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = signed_in["token"].as_str().unwrap();
    let ws = server.base.replacen("http", "ws", 1);
    let (mut socket, _) = tokio_tungstenite::connect_async(format!(
        "{ws}/cases/sample-case/edits?token={token}&sessionId=bob-tab"
    ))
    .await
    .expect("channel");

    server.terminate();
    assert_eq!(close_code(&mut socket).await, Some(CloseCode::Restart));
    let status = server
        .exited_within(Duration::from_secs(10))
        .await
        .expect("baton exited after SIGTERM");
    assert!(status.success(), "exit status {status}");
}

/// Reads the socket to its close frame; the close code.
async fn close_code(socket: &mut common::RawSocket) -> Option<CloseCode> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, socket.next()).await {
            Ok(Some(Ok(Message::Close(frame)))) => return frame.map(|f| f.code),
            Ok(Some(Ok(Message::Ping(p)))) => {
                let _ = socket.send(Message::Pong(p)).await;
            }
            Ok(Some(Ok(_))) => {}
            Ok(None) | Ok(Some(Err(_))) => return None,
            Err(_) => panic!("no close frame within 10 s"),
        }
    }
}

const LIFETIMES: [(&str, &str); 4] = [
    ("BATON_LOCK_TTL", "2s"),
    ("BATON_HEARTBEAT_INTERVAL", "200ms"),
    ("BATON_DISCONNECT_GRACE", "1s"),
    ("BATON_REAPER_INTERVAL", "100ms"),
];

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn sigterm_hands_a_tab_and_its_locks_to_another_instance() {
    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let mut a = ServerProcess::spawn(&app.db_url, "instance-a", &LIFETIMES).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &LIFETIMES).await;
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let mut on_a = app.raw_socket_at(&a.base, "c", &bob).await;
    let lock = app
        .req_at(&a.base, Method::POST, "/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    a.terminate();
    assert_eq!(close_code(&mut on_a).await, Some(CloseCode::Restart));
    // The tab reconnects to B within the grace ...
    let (_on_b, welcome) = app.open_tab_at(&b.base, "c", &bob).await;
    assert_eq!(welcome["activeLocks"][0]["token"], lock.body["token"]);
    assert!(a.exited_within(Duration::from_secs(10)).await.is_some());
    // ... and, well past the grace and the lease, still holds its lock: B's
    // heartbeat renews it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let still = app
        .req_at(&b.base, Method::GET, &format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(still.body["sessionId"], "bob-tab");
    let audit = app.audit(f.case_id).await;
    assert!(
        audit.iter().all(|(action, ..)| action != "disconnected"),
        "{audit:?}"
    );
    let actions: Vec<&str> = audit.iter().map(|(a, ..)| a.as_str()).collect();
    assert_eq!(actions, ["acquired"]);
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn signing_out_on_one_instance_ends_the_token_on_another() {
    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &[]).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &[]).await;
    let alice = app.user("Alice").await;
    let signed_in = app
        .req_at(&a.base, Method::POST, "/auth/login")
        .json(json!({ "email": alice.email, "password": "password1" }))
        .send()
        .await
        .expect(200);
    let phone = with_token(&alice, signed_in.body["token"].as_str().unwrap());
    app.req_at(&b.base, Method::GET, "/me")
        .by(&phone)
        .send()
        .await
        .expect(200);
    app.req_at(&a.base, Method::POST, "/auth/logout")
        .by(&phone)
        .send()
        .await
        .expect(204);
    app.req_at(&b.base, Method::GET, "/me")
        .by(&phone)
        .send()
        .await
        .expect_error(401, "unauthorized");
}
