//! The live edits channel with real WebSocket clients against a real server
//! on 127.0.0.1, on SQLite and PostgreSQL, with millisecond lifetimes.

mod common;

use std::time::Duration;

use baton::models::Role;
use common::{lock_body, short_lifetimes, takeover_body, Backend, TestApp};
use serde_json::{json, Value};

on_both_backends!(TestApp::start =>
    welcome_and_rejections,
    edits_arrive_tagged_with_the_editor,
    lock_changes_with_reasons,
    presence_on_join_and_leave,
    no_cross_case_leaks,
    admins_see_and_kick_sessions,
);
on_both_backends!(|backend| TestApp::start_with(backend, short_lifetimes) =>
    expiry_without_a_channel,
    pongs_keep_a_lock_past_its_ttl,
    closing_releases_after_the_grace,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        short_lifetimes(s);
        s.disconnect_grace = Duration::from_millis(1500);
        // Eight heartbeats of slack: a loaded machine may delay a beat.
        s.lock_ttl = Duration::from_secs(2);
    }) =>
    reconnecting_within_the_grace_keeps_locks,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        short_lifetimes(s);
        s.idle_timeout = Duration::from_millis(1500);
    }) =>
    idle_locks_go_while_the_tab_is_open,
);
on_both_backends!(
    an_unanswering_tab_loses_its_locks,
    a_lagging_tab_is_told_to_resync,
);

fn is_lock_destroy(frame: &Value, lock_id: &Value) -> bool {
    frame["type"] == "destroy"
        && frame["watchable"]["type"] == "Lock"
        && frame["watchable"]["id"] == *lock_id
}

async fn welcome_and_rejections(app: TestApp) {
    let bob = app.user("Bob").await;
    let rita = app.user("Rita").await;
    let eve = app.user("Eve").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    // Readers may subscribe; the welcome carries the locks and who is online.
    let (_tab, welcome) = app.open_tab("c", &rita.tab("rita-1")).await;
    assert_eq!(welcome["sessionId"], "rita-1");
    assert_eq!(welcome["activeLocks"][0]["id"], lock.body["id"]);
    assert_eq!(welcome["onlineUsers"][0]["user"]["name"], "Rita");
    assert_eq!(welcome["onlineUsers"][0]["sessions"], 1);
    assert!(welcome["onlineUsers"][0]["color"]
        .as_str()
        .unwrap()
        .starts_with('#'));

    // A tab that sent no session id is given one.
    let (_tab, welcome) = app.open_tab("c", &bob).await;
    assert!(!welcome["sessionId"].as_str().unwrap().is_empty());

    let base = app.base.replacen("http", "ws", 1);
    assert_eq!(
        app.refused_status(&format!("{base}/cases/c/edits")).await,
        401
    );
    assert_eq!(
        app.refused_status(&format!("{base}/cases/c/edits?token=nonsense"))
            .await,
        401
    );
    assert_eq!(app.refused_status(&app.edits_url("c", &eve)).await, 403);
    assert_eq!(
        app.refused_status(&app.edits_url("nowhere", &bob)).await,
        404
    );
    // Without an upgrade it is 426 with the envelope, and says which
    // protocol to upgrade to.
    let plain = app
        .get(&format!("/cases/c/edits?token={}", bob.token))
        .send()
        .await
        .expect_error(426, "upgrade_required");
    assert_eq!(plain.headers["upgrade"], "websocket");
}

async fn edits_arrive_tagged_with_the_editor(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let carol = app.user("Carol").await.tab("carol-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let (mut tab, _) = app.open_tab("c", &bob).await;

    app.patch(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .json(json!({ "card": { "content": "from carol" } }))
        .send()
        .await
        .expect(200);
    let update = tab.next_change().await;
    assert_eq!(update["type"], "update");
    assert_eq!(update["editorSessionId"], "carol-tab");
    assert_eq!(update["watchable"]["type"], "Card");
    assert_eq!(update["watchable"]["content"], "from carol");

    let page = app
        .post("/cases/c/pages")
        .by(&carol)
        .json(json!({ "page": { "title": "New" } }))
        .send()
        .await
        .expect(201);
    let create = tab.next_change().await;
    assert_eq!(create["type"], "create");
    assert_eq!(create["watchable"]["id"], page.body["id"]);

    app.delete(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .send()
        .await
        .expect(204);
    let destroy = tab.next_change().await;
    assert_eq!(destroy["type"], "destroy");
    assert_eq!(
        destroy["editorSessionId"], "bob-tab",
        "a tab sees its own edits tagged, to drop them"
    );
    assert_eq!(
        destroy["watchable"],
        json!({ "type": "Card", "table": "cards", "param": f.card_id.to_string(), "id": f.card_id })
    );

    // Refused writes broadcast nothing: the next change is the one after them.
    app.post("/locks")
        .by(&carol)
        .json(lock_body("Edgenote", f.edgenote_id))
        .send()
        .await
        .expect(201);
    let _ = tab.next_change().await;
    app.patch(&format!("/edgenotes/{}", f.edgenote_id))
        .by(&bob)
        .json(json!({ "edgenote": { "caption": "refused" } }))
        .send()
        .await
        .expect(423);
    app.patch(&format!("/pages/{}", f.page_id))
        .by(&bob)
        .json(json!({ "page": { "title": "Renamed" } }))
        .send()
        .await
        .expect(200);
    let next = tab.next_change().await;
    assert_eq!(next["watchable"]["type"], "Page");
}

async fn lock_changes_with_reasons(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let carol = app.user("Carol").await.tab("carol-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case(
            "c",
            &[
                (&bob, Role::Editor),
                (&carol, Role::Editor),
                (&rita, Role::Reader),
            ],
        )
        .await;
    let (mut tab, _) = app.open_tab("c", &rita).await;

    let first = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let create = tab.next_change().await;
    assert_eq!(
        (create["type"].as_str(), create["watchable"]["id"].clone()),
        (Some("create"), first.body["id"].clone())
    );
    assert_eq!(create["editorSessionId"], "bob-tab");

    let refreshed = app
        .post(&format!("/locks/{}/refresh", first.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    let update = tab.next_change().await;
    assert_eq!(update["type"], "update");
    assert_eq!(
        update["watchable"]["expiresAt"],
        refreshed.body["expiresAt"]
    );

    // Takeover: the old lock's destroy (overridden, by Carol) before the new lock's create.
    let second = app
        .post("/locks")
        .by(&carol)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let destroy = tab.next_change().await;
    assert!(is_lock_destroy(&destroy, &first.body["id"]), "{destroy}");
    assert_eq!(destroy["watchable"]["reason"], "overridden");
    assert_eq!(destroy["watchable"]["overriddenBy"]["name"], "Carol");
    assert_eq!(destroy["editorSessionId"], "carol-tab");
    let create = tab.next_change().await;
    assert_eq!(create["type"], "create");
    assert_eq!(create["watchable"]["id"], second.body["id"]);

    app.delete(&format!("/locks/{}", second.body["id"]))
        .by(&carol)
        .send()
        .await
        .expect(204);
    let released = tab.next_change().await;
    assert!(is_lock_destroy(&released, &second.body["id"]));
    assert_eq!(released["watchable"]["reason"], "released");
    assert!(released["watchable"].get("overriddenBy").is_none());
}

async fn presence_on_join_and_leave(app: TestApp) {
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    app.case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let (mut bobs, _) = app.open_tab("c", &bob.tab("bob-1")).await;
    let _ = bobs
        .next_where("own presence", |f| f["type"] == "presence")
        .await;

    let (carols, welcome) = app.open_tab("c", &carol.tab("carol-1")).await;
    assert_eq!(welcome["onlineUsers"].as_array().unwrap().len(), 2);
    let joined = bobs
        .next_where("presence", |f| f["type"] == "presence")
        .await;
    let names: Vec<&str> = joined["onlineUsers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Bob", "Carol"]);

    // A second tab of the same user counts as a session, not a user.
    let (bob2, _) = app.open_tab("c", &bob.tab("bob-2")).await;
    let two_tabs = bobs
        .next_where("presence", |f| f["type"] == "presence")
        .await;
    assert_eq!(two_tabs["onlineUsers"][0]["sessions"], 2);
    bob2.close();
    let one_tab = bobs
        .next_where("presence", |f| f["type"] == "presence")
        .await;
    assert_eq!(one_tab["onlineUsers"][0]["sessions"], 1);

    carols.close();
    let left = bobs
        .next_where("presence", |f| f["type"] == "presence")
        .await;
    assert_eq!(left["onlineUsers"].as_array().unwrap().len(), 1);
    let case = app.get("/cases/c").by(&bob).send().await.expect(200);
    assert_eq!(case.body["onlineUsers"][0]["user"]["name"], "Bob");
}

async fn no_cross_case_leaks(app: TestApp) {
    let bob = app.user("Bob").await;
    let one = app.case("one", &[(&bob, Role::Editor)]).await;
    let two = app.case("two", &[(&bob, Role::Editor)]).await;
    let (mut tab_two, _) = app.open_tab("two", &bob.tab("t2")).await;

    app.patch(&format!("/cards/{}", one.card_id))
        .by(&bob)
        .json(json!({ "card": { "content": "one" } }))
        .send()
        .await
        .expect(200);
    app.post("/locks")
        .by(&bob)
        .json(lock_body("Card", one.card_id))
        .send()
        .await
        .expect(201);
    app.patch(&format!("/cards/{}", two.card_id))
        .by(&bob)
        .json(json!({ "card": { "content": "two" } }))
        .send()
        .await
        .expect(200);
    // Frames of one case arrive in commit order: the first change seen here
    // must be case two's, so nothing of case one came before it.
    let first = tab_two.next_change().await;
    assert_eq!(first["watchable"]["id"], two.card_id);
    assert_eq!(first["watchable"]["caseId"], two.case_id);
}

async fn expiry_without_a_channel(app: TestApp) {
    let bob = app.user("Bob").await;
    let rita = app.user("Rita").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut watcher, _) = app.open_tab("c", &rita.tab("rita")).await;
    // A lock taken by a script without a tab: only its lease keeps it.
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let gone = watcher
        .next_where("the lock's destroy", |f| {
            is_lock_destroy(f, &lock.body["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "expired");
    assert!(gone["editorSessionId"].is_null());
}

async fn pongs_keep_a_lock_past_its_ttl(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let (_tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let still = app
        .get(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert!(
        still.body["expiresAt"].as_str() > lock.body["expiresAt"].as_str(),
        "lease renewed by pongs"
    );
    assert_eq!(
        still.body["lastActivityAt"], lock.body["lastActivityAt"],
        "pongs are not activity"
    );
}

async fn closing_releases_after_the_grace(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut watcher, _) = app.open_tab("c", &rita).await;
    let (tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let closed_at = std::time::Instant::now();
    tab.close();
    let gone = watcher
        .next_where("the lock's destroy", |f| {
            is_lock_destroy(f, &lock.body["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "disconnected");
    assert!(
        closed_at.elapsed() >= Duration::from_millis(400),
        "kept for the grace"
    );
    let audit = app.audit(f.case_id).await;
    assert_eq!(audit.last().unwrap().0, "disconnected");
}

async fn reconnecting_within_the_grace_keeps_locks(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let (tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    tab.close();
    tokio::time::sleep(Duration::from_millis(300)).await; // a train tunnel
    let (_again, welcome) = app.open_tab("c", &bob).await;
    assert_eq!(welcome["activeLocks"][0]["id"], lock.body["id"]);
    tokio::time::sleep(Duration::from_millis(3000)).await; // well past grace and TTL
    app.get(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .header("Lock-Token", lock.body["token"].as_str().unwrap())
        .json(json!({ "card": { "content": "still mine" } }))
        .send()
        .await
        .expect(200);
}

async fn an_unanswering_tab_loses_its_locks(backend: Backend) {
    // A lease far longer than the two missed pings and the grace, so the
    // release the test sees is the disconnect's, not the lease's expiry:
    // a whole suite on two busy cores once took over 5 s to notice.
    let Some(app) = TestApp::start_with(backend, |s| {
        short_lifetimes(s);
        s.lock_ttl = Duration::from_secs(15);
    })
    .await
    else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut watcher, _) = app.open_tab("c", &rita).await;
    // Connected, but never reads: pings go unanswered (a closed laptop).
    let silent = app.raw_socket("c", &bob).await;
    let joined = watcher
        .next_where("Bob online", |f| {
            f["type"] == "presence" && f["onlineUsers"].as_array().unwrap().len() == 2
        })
        .await;
    assert_eq!(joined["type"], "presence");
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    let left = watcher
        .next_where("Bob offline", |f| {
            f["type"] == "presence" && f["onlineUsers"].as_array().unwrap().len() == 1
        })
        .await;
    assert_eq!(left["onlineUsers"][0]["user"]["name"], "Rita");
    let gone = watcher
        .next_where("the lock's destroy", |f| {
            is_lock_destroy(f, &lock.body["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "disconnected");
    drop(silent);
}

async fn idle_locks_go_while_the_tab_is_open(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let (mut tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let started = std::time::Instant::now();
    let gone = tab
        .next_where("the lock's destroy", |f| {
            is_lock_destroy(f, &lock.body["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "idle");
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "lived past its TTL on pongs until idle"
    );
}

async fn admins_see_and_kick_sessions(app: TestApp) {
    let root = app.admin("Root").await;
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut watcher, _) = app.open_tab("c", &rita).await;
    let (mut tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    app.get("/admin/sessions")
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
    let sessions = app
        .get("/admin/sessions")
        .by(&root)
        .send()
        .await
        .expect(200);
    let bobs = sessions
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == "bob-tab")
        .expect("Bob's tab listed")
        .clone();
    assert_eq!(bobs["user"]["name"], "Bob");
    assert_eq!(bobs["case"]["slug"], "c");
    assert_eq!(bobs["locks"][0]["id"], lock.body["id"]);
    assert!(bobs["connectedAt"].is_string());

    app.delete("/admin/sessions/bob-tab")
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.delete("/admin/sessions/no-such-tab")
        .by(&root)
        .send()
        .await
        .expect_error(404, "not_found");
    app.delete("/admin/sessions/bob-tab")
        .by(&root)
        .send()
        .await
        .expect(204);

    let kicked = tab.next_where("kicked", |f| f["type"] == "kicked").await;
    assert_eq!(kicked["reason"], "kicked", "{kicked}");
    assert!(tab.closed_by_server().await);
    let gone = watcher
        .next_where("the lock's destroy", |f| {
            is_lock_destroy(f, &lock.body["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "kicked");
    let left = watcher
        .next_where("Bob offline", |f| {
            f["type"] == "presence" && f["onlineUsers"].as_array().unwrap().len() == 1
        })
        .await;
    assert_eq!(left["onlineUsers"][0]["user"]["name"], "Rita");
    let audit = app.audit(f.case_id).await;
    assert_eq!(
        audit.last().unwrap(),
        &(
            "kicked".to_string(),
            lock.body["id"].as_i64().unwrap(),
            Some(root.id),
            bob.id
        )
    );
}

/// PostgreSQL only: a tab closing while a heartbeat renews its lock. The
/// heartbeat holds the tab's lock row and then wants its presence row; the
/// close must not hold the presence row while it waits for the lock row, or
/// the two deadlock and PostgreSQL aborts the close (leaving the presence in
/// place and the lock without its grace period). Here a raw transaction
/// plays the heartbeat, so the interleaving is exact rather than lucky.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_closing_tab_and_a_heartbeat_do_not_deadlock() {
    use baton::db::schema::{locks, presences};
    use diesel::prelude::*;
    use diesel::sql_types::BigInt;

    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let (tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let lock_id = lock.body["id"].as_i64().unwrap();

    let mut heartbeat = PgConnection::establish(&app.db_url).expect("connect");
    let mut observer = PgConnection::establish(&app.db_url).expect("connect");
    let heartbeat_pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(&mut heartbeat)
    .unwrap();
    diesel::sql_query("BEGIN").execute(&mut heartbeat).unwrap();
    locks::table
        .select(locks::id)
        .filter(locks::session_id.eq("bob-tab"))
        .for_update()
        .load::<i64>(&mut heartbeat)
        .unwrap();

    tab.close();
    // Wait until the close's transaction is blocked by this one.
    let waiting = format!(
        "(SELECT count(*) FROM pg_stat_activity \
          WHERE pg_blocking_pids(pid) @> ARRAY[{heartbeat_pid}])"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let blocked: i64 = diesel::select(diesel::dsl::sql::<BigInt>(&waiting))
            .get_result(&mut observer)
            .unwrap();
        if blocked > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the close never waited for the lock row"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The heartbeat's second half: touch the tab's presence, then commit.
    let touched = diesel::update(presences::table.filter(presences::session_id.eq("bob-tab")))
        .set(presences::last_seen_at.eq(presences::last_seen_at))
        .execute(&mut heartbeat)
        .expect("the heartbeat's presence update must not deadlock");
    assert_eq!(touched, 1, "the presence row is still there before commit");
    diesel::sql_query("COMMIT").execute(&mut heartbeat).unwrap();

    // The close then goes through whole: presence gone, grace started.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let present: i64 = presences::table
            .filter(presences::session_id.eq("bob-tab"))
            .count()
            .get_result(&mut observer)
            .unwrap();
        let disconnected: Option<chrono::NaiveDateTime> = locks::table
            .find(lock_id)
            .select(locks::disconnected_at)
            .get_result(&mut observer)
            .unwrap();
        if present == 0 && disconnected.is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the close did not complete: {present} presence rows, disconnected_at {disconnected:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A tab that stops reading while a case changes fast falls more than the
/// hub's buffer behind: when it reads again it gets `resync` (with how many
/// frames it missed) and then carries on with the newest changes, up to the
/// last one. The tab's socket has a small receive buffer and the updates are
/// large, so the kernel's buffers cannot absorb the backlog.
async fn a_lagging_tab_is_told_to_resync(backend: Backend) {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;

    const UPDATES: usize = 600;
    let Some(app) = TestApp::start_with(backend, |s| {
        // No ping falls due while the tab is not reading.
        s.heartbeat_interval = Duration::from_secs(60);
        s.lock_ttl = Duration::from_secs(300);
    })
    .await
    else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;

    let addr = app.base.trim_start_matches("http://").to_owned();
    let tcp = tokio::net::TcpSocket::new_v4().unwrap();
    tcp.set_recv_buffer_size(4096).unwrap();
    let stream = tcp.connect(addr.parse().unwrap()).await.unwrap();
    let (mut slow, _) = tokio_tungstenite::client_async(app.edits_url("c", &rita), stream)
        .await
        .expect("WebSocket handshake");
    // Before the burst: the welcome, and the presence frame of Rita's own
    // join, which comes through the case's channel (so the tab is subscribed,
    // and no frame but the updates can fall in the missed range).
    let mut first_frames = Vec::new();
    while first_frames.last().map(|f: &Value| f["type"].clone()) != Some(json!("presence")) {
        let message = tokio::time::timeout(Duration::from_secs(5), slow.next())
            .await
            .expect("welcome and presence within 5 s")
            .expect("channel open")
            .expect("frame");
        if let Message::Text(text) = message {
            first_frames.push(serde_json::from_str(text.as_str()).unwrap());
        }
    }
    assert_eq!(first_frames[0]["type"], "welcome");

    let filler = "x".repeat(90_000);
    for i in 1..=UPDATES {
        app.patch(&format!("/cards/{}", f.card_id))
            .by(&bob)
            .json(json!({ "card": { "content": format!("{i:06}{filler}") } }))
            .send()
            .await
            .expect(200);
    }

    let mut resync = None;
    let mut updates = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while updates.last() != Some(&UPDATES) {
        let message = tokio::time::timeout_at(deadline, slow.next())
            .await
            .expect("the last update within 30 s")
            .expect("channel open")
            .expect("frame");
        let Message::Text(text) = message else {
            continue;
        };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap();
        match frame["type"].as_str() {
            Some("resync") => {
                assert!(resync.is_none(), "one resync for one lag: {frame}");
                assert!(updates.len() < UPDATES, "resync after everything");
                resync = Some(frame["missed"].as_u64().expect("missed count"));
            }
            Some("update") => {
                let content = frame["watchable"]["content"].as_str().unwrap();
                updates.push(content[..6].parse::<usize>().unwrap());
            }
            _ => {}
        }
    }
    let missed = resync.expect("a resync frame") as usize;
    assert!(missed > 0);
    assert_eq!(
        updates.len() + missed,
        UPDATES,
        "every update is either delivered or counted as missed"
    );
    assert!(
        updates.windows(2).all(|w| w[0] < w[1]),
        "updates stay in order"
    );
}
