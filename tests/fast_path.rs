//! The lock fast path (PostgreSQL) against the general path: the same
//! requests with `lock_fast_path` on and off must answer, broadcast and
//! audit the same. The fast path restates the holder, in-force and
//! live-token rules in SQL (`baton::locks::fast_path::sql`); this is what keeps
//! the two statements of each rule in step.

mod common;

use common::{id, lock_body, Backend, TestApp, TestUser};
use serde_json::{json, Value};

/// What one run left: statuses, frames, audit rows, and how many outbox
/// rows the fast path's statements wrote.
type Run = (Vec<u16>, Vec<Value>, Vec<Value>, usize);

/// Saves the card's content with these preconditions: the status, and the
/// error code or the saved version.
async fn save(
    app: &TestApp,
    user: &TestUser,
    card: i64,
    lock_token: Option<&str>,
    if_match: Option<i64>,
    content: &str,
) -> Value {
    let mut req = app.patch(&format!("/cards/{card}")).by(user);
    if let Some(token) = lock_token {
        req = req.header("Lock-Token", token);
    }
    if let Some(version) = if_match {
        req = req.header("If-Match", format!("\"{version}\""));
    }
    let resp = req.json(json!({"card": {"content": content}})).send().await;
    match resp.status {
        200 => json!([200, resp.body["version"]]),
        status => json!([status, resp.body["error"]["code"]]),
    }
}

/// Written by the fast save's SQL (`json_build_object` spaces its keys).
fn is_saved_card(payload: &str) -> bool {
    payload.contains(r#""k" : "record""#) || payload.contains(r#""k":"record""#)
}

/// Run the script on a fresh database; `None` without PostgreSQL.
async fn run(fast_path: bool) -> Option<Run> {
    let app = TestApp::start_with(Backend::Postgres, |s| s.lock_fast_path = fast_path).await?;
    let c = app.cast().await;
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let (bob, carol) = (c.bob.tab("bob-tab"), c.carol.tab("carol-tab"));
    let mut statuses = Vec::new();

    // A free record (fast), conflicts, a renewal (general), a release a
    // reader may not make, a release by the holder's tab (fast), a takeover
    // and a break (general), and a lock the user as a whole holds.
    let first = app.lock_expect(&bob, lock_body("Card", card), 201).await;
    statuses.push(first.status);
    for (user, status) in [(&carol, 409), (&bob, 200), (&c.bob.tab("bob-tab-2"), 409)] {
        statuses.push(
            app.lock_expect(user, lock_body("Card", card), status)
                .await
                .status,
        );
    }
    // Saves while Bob's tab holds the card: his tab with its token (fast),
    // Carol (423), his tab from a stale version (412), his other tab (423),
    // his tab without the token (fast); a reader (403).
    let token = first.body["token"].as_str().expect("a token").to_owned();
    let bob_2 = c.bob.tab("bob-tab-2");
    let mut saves = vec![
        save(&app, &bob, card, Some(&token), Some(1), "b1").await,
        save(&app, &carol, card, None, None, "c1").await,
        save(&app, &bob, card, Some(&token), Some(1), "b2").await,
        save(&app, &bob_2, card, None, None, "b3").await,
        save(&app, &bob, card, None, Some(2), "b4").await,
        save(&app, &c.rita, card, None, None, "r1").await,
    ];
    let by_a_reader = app
        .delete(&format!("/locks/{}", id(&first.body)))
        .by(&c.rita)
        .send()
        .await;
    statuses.push(by_a_reader.status);
    app.release(&bob, id(&first.body)).await;
    // After the release: his tab's token is gone (412), Carol saves freely
    // (fast).
    saves.push(save(&app, &bob, card, Some(&token), None, "b5").await);
    saves.push(save(&app, &carol, card, None, Some(3), "c2").await);
    statuses.extend(saves.iter().filter_map(|s| s[0].as_u64()).map(|s| s as u16));
    let second = app.lock(&carol, "Card", card).await;
    let taken = app.takeover(&c.mia, "Card", card).await;
    assert_ne!(id(&taken), id(&second));
    let broken = app
        .delete(&format!("/locks/{}", id(&taken)))
        .by(&c.root)
        .send()
        .await;
    statuses.push(broken.status);
    let whole = app.lock(&c.bob, "Page", c.case.page_id).await;
    app.release(&c.bob, id(&whole)).await;

    // Every change frame, up to the page lock's end (the last one).
    let mut frames = Vec::new();
    loop {
        let frame = watcher.next_change().await;
        let last = frame["type"] == "destroy" && frame["watchable"]["lockable"]["type"] == "Page";
        frames.push(normalized(frame));
        if last {
            break;
        }
    }
    let audit = app
        .audit(c.case.case_id)
        .await
        .into_iter()
        .map(|(action, _lock, actor, holder)| serde_json::json!([action, actor, holder]))
        .collect();
    let fast_rows = outbox_payloads(&app)
        .await
        .iter()
        .filter(|p| is_lock_notice(p) || is_saved_card(p))
        .count();
    assert_eq!(
        saves,
        [
            json!([200, 2]),
            json!([423, "locked"]),
            json!([412, "stale_version"]),
            json!([423, "locked"]),
            json!([200, 3]),
            json!([403, "forbidden"]),
            json!([412, "lock_lost"]),
            json!([200, 4]),
        ],
        "saves (fast path {fast_path})"
    );
    Some((statuses, frames, audit, fast_rows))
}

/// Every outbox row's payload, oldest first.
async fn outbox_payloads(app: &TestApp) -> Vec<String> {
    use diesel::prelude::*;

    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        payload: String,
    }
    let rows: Vec<Row> = app
        .state
        .db
        .read(|conn| {
            diesel::sql_query("SELECT payload FROM events WHERE payload IS NOT NULL ORDER BY id")
                .load::<Row>(conn)
                .map_err(baton::error::AppError::from)
        })
        .await
        .expect("outbox rows");
    rows.into_iter().map(|r| r.payload).collect()
}

/// Written by the fast path's SQL (`json_build_object` spaces its keys).
fn is_lock_notice(payload: &str) -> bool {
    payload.contains(r#""k" : "lock""#) || payload.contains(r#""k":"lock""#)
}

/// A frame without what differs between two runs by design: lock ids
/// (sequences), times and the user agent.
fn normalized(mut frame: Value) -> Value {
    let watchable = &mut frame["watchable"];
    for key in [
        "id",
        "param",
        "token",
        "createdAt",
        "expiresAt",
        "lastActivityAt",
        "updatedAt",
        "userAgent",
    ] {
        if let Some(object) = watchable.as_object_mut() {
            object.remove(key);
        }
    }
    frame
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn the_fast_path_answers_broadcasts_and_audits_as_the_general_path_does() {
    let Some(fast) = run(true).await else {
        return;
    };
    let general = run(false).await.expect("PostgreSQL is there");
    assert_eq!(fast.0, general.0, "statuses");
    assert_eq!(fast.1, general.1, "frames");
    assert_eq!(fast.2, general.2, "audit trail");
    // The fast path took the free acquires, the holders' releases and the
    // three saves nothing stood in the way of; off, it took nothing.
    assert_eq!((fast.3, general.3), (8, 0), "rows the fast path wrote");
    assert_eq!(
        fast.0,
        [201, 409, 200, 409, 403, 200, 423, 412, 423, 200, 403, 412, 200, 204]
    );
    assert!(fast.1.len() >= 8, "{:?}", fast.1);
    let actions: Vec<&str> = fast.2.iter().filter_map(|e| e[0].as_str()).collect();
    assert_eq!(
        actions,
        [
            "acquired",
            "released",
            "acquired",
            "overridden",
            "acquired",
            "overridden",
            "acquired",
            "released"
        ]
    );
}

/// The outbox payload type reads what the fast path's SQL writes, and
/// writes it back with exactly the same keys.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn the_outbox_payload_round_trips_the_rows_the_fast_path_writes() {
    use baton::realtime::pg_bus::OutboxPayload;

    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let c = app.cast().await;
    let lock = app
        .lock(&c.bob.tab("bob-tab"), "Card", c.case.card_id)
        .await;
    let saved = save(
        &app,
        &c.bob.tab("bob-tab"),
        c.case.card_id,
        None,
        None,
        "saved",
    )
    .await;
    assert_eq!(saved, json!([200, 2]));
    app.release(&c.bob.tab("bob-tab"), id(&lock)).await;

    let rows = outbox_payloads(&app).await;
    let cards: Vec<&String> = rows.iter().filter(|p| is_saved_card(p)).collect();
    assert_eq!(cards.len(), 1, "one save: {:?}", rows.len());
    let written: Value = serde_json::from_str(cards[0]).expect("JSON");
    let read: OutboxPayload = serde_json::from_str(cards[0]).expect("an OutboxPayload");
    assert!(
        matches!(&read, OutboxPayload::Record(saved)
            if saved.record.record_type == "Card" && saved.record.fields.contains("\"saved\"")),
        "{written}"
    );
    assert_eq!(
        keys(&serde_json::to_value(&read).expect("serialize")),
        keys(&written)
    );

    let locks: Vec<&String> = rows.iter().filter(|p| is_lock_notice(p)).collect();
    assert_eq!(locks.len(), 2, "an acquire and a release: {:?}", rows.len());
    for payload in locks {
        let written: Value = serde_json::from_str(payload).expect("JSON");
        let read: OutboxPayload = serde_json::from_str(payload).expect("an OutboxPayload");
        assert!(matches!(read, OutboxPayload::Lock(_)), "{written}");
        let again: Value = serde_json::to_value(&read).expect("serialize");
        assert_eq!(keys(&again), keys(&written), "the same keys, nested too");
        let reread: OutboxPayload = serde_json::from_value(again).expect("read back");
        assert_eq!(reread, read);
    }
}

/// Every key path of a JSON value, sorted.
fn keys(value: &Value) -> Vec<String> {
    fn walk(value: &Value, prefix: &str, out: &mut Vec<String>) {
        if let Some(object) = value.as_object() {
            for (key, child) in object {
                let path = format!("{prefix}/{key}");
                out.push(path.clone());
                walk(child, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(value, "", &mut out);
    out.sort();
    out
}

/// Saves racing a lock on the same card, through the fast path: once the
/// lock is taken (its `create` frame, in commit order), no save of anyone
/// else commits until it ends. The save's function locks the card's row
/// first and reads the lock after, with a fresh snapshot; this fails if it
/// read the lock from before the acquire committed.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_fast_save_never_lands_inside_someone_elses_lock() {
    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let app = std::sync::Arc::new(app);
    let c = app.cast().await;
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let (bob, carol) = (c.bob.tab("bob-tab"), c.carol.tab("carol-tab"));

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let saver = {
        let (app, stop) = (app.clone(), stop.clone());
        tokio::spawn(async move {
            let mut saved = 0;
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                match save(&app, &bob, card, None, None, &format!("bob {n}")).await[0].as_u64() {
                    Some(200) => saved += 1,
                    Some(423) => {}
                    other => panic!("a save answered {other:?}"),
                }
            }
            saved
        })
    };
    let rounds = 15;
    for _ in 0..rounds {
        let lock = app.lock(&carol, "Card", card).await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        app.release(&carol, id(&lock)).await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let saved = saver.await.expect("the saver");
    assert!(saved > 0, "some saves landed between Carol's locks");

    let mut held = false;
    let (mut locks, mut updates) = (0, 0);
    while locks < 2 * rounds || updates < saved {
        let frame = watcher.next_change().await;
        match (frame["type"].as_str(), frame["editorSessionId"].as_str()) {
            (Some("create"), Some("carol-tab")) => (held, locks) = (true, locks + 1),
            (Some("destroy"), Some("carol-tab")) => (held, locks) = (false, locks + 1),
            (Some("update"), Some("bob-tab")) => {
                assert!(!held, "Bob's save committed inside Carol's lock: {frame}");
                updates += 1;
            }
            _ => {}
        }
    }
}
