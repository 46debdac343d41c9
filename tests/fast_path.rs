//! The lock fast path (PostgreSQL) against the general path: the same
//! requests with `lock_fast_path` on and off must answer, broadcast and
//! audit the same. The fast path restates the holder, in-force and
//! live-token rules in SQL (`baton::models::lock_sql`); this is what keeps
//! the two statements of each rule in step.

mod common;

use common::{id, lock_body, Backend, TestApp};
use serde_json::Value;

/// What one run left: statuses, frames, audit rows, and how many outbox
/// rows the fast path's statements wrote.
type Run = (Vec<u16>, Vec<Value>, Vec<Value>, usize);

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
    let by_a_reader = app
        .delete(&format!("/locks/{}", id(&first.body)))
        .by(&c.rita)
        .send()
        .await;
    statuses.push(by_a_reader.status);
    app.release(&bob, id(&first.body)).await;
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
        .filter(|p| is_lock_notice(p))
        .count();
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
            diesel::sql_query("SELECT payload FROM event_outbox ORDER BY id")
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
    // The fast path took the free acquires and the holders' releases; off,
    // it took nothing.
    assert_eq!((fast.3, general.3), (5, 0), "lock rows the fast path wrote");
    assert_eq!(fast.0, [201, 409, 200, 409, 403, 204]);
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
    app.release(&c.bob.tab("bob-tab"), id(&lock)).await;

    let rows = outbox_payloads(&app).await;
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
