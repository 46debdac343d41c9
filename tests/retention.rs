//! The audit trail's retention, on both databases: `BATON_AUDIT_RETENTION`
//! (the reaper deletes rows past it, a bounded batch a tick) and `baton
//! audit prune --before DATE` (once, saying how many). Old rows are made by
//! real lock cycles over HTTP, then dated back.

mod common;

use std::time::{Duration, Instant};

use baton::db::schema::events;
use baton::locks::engine::retention::{self, AuditRetention};
use common::{described, lock_body, run_baton, text, Backend, Cast, TestApp, TestUser};
use diesel::prelude::*;

on_both_backends!(TestApp::with_cast =>
    audit_prune_deletes_the_rows_before_the_date_and_says_how_many,
    each_retention_pass_deletes_a_bounded_batch,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        s.audit_retention = Some(Duration::from_secs(90 * 24 * 3600));
        s.reaper_interval = Duration::from_millis(50);
    }) =>
    the_reaper_deletes_audit_rows_past_the_retention,
);
on_both_backends!(TestApp::with_cast =>
    audit_prune_leaves_a_frame_listeners_may_not_have_read,
);

/// `cycles` lock cycles (acquire, release) on the fixture's card: two
/// audit rows each.
async fn lock_cycles(app: &TestApp, user: &TestUser, card: i64, cycles: usize) {
    for _ in 0..cycles {
        let lock = app
            .post("/locks")
            .by(user)
            .json(lock_body("Card", card))
            .send()
            .await
            .expect(201)
            .body;
        app.release(user, common::id(&lock)).await;
    }
}

/// The audit rows' ids, oldest first.
async fn audit_ids(app: &TestApp) -> Vec<i64> {
    app.state
        .db
        .read(|conn| {
            events::table
                .select(events::id)
                .filter(events::action.is_not_null())
                .order(events::id.asc())
                .load::<i64>(conn)
                .map_err(baton::error::AppError::from)
        })
        .await
        .expect("read the trail")
}

/// Dates the audit rows with ids up to `last` back by `days`.
async fn date_back(app: &TestApp, last: i64, days: i64) {
    app.state
        .db
        .write(None, move |tx| {
            let then = tx.now - chrono::Duration::days(days);
            diesel::update(
                events::table
                    .filter(events::action.is_not_null())
                    .filter(events::id.le(last)),
            )
            .set(events::at.eq(then))
            .execute(tx.conn)
            .map_err(baton::error::AppError::from)
        })
        .await
        .expect("date rows back");
}

async fn audit_prune_deletes_the_rows_before_the_date_and_says_how_many((app, c): (TestApp, Cast)) {
    lock_cycles(&app, &c.bob, c.case.card_id, 6).await;
    let ids = audit_ids(&app).await;
    assert_eq!(ids.len(), 12);
    date_back(&app, ids[7], 400).await;
    let before = (chrono::Utc::now() - chrono::Duration::days(200))
        .format("%Y-%m-%d")
        .to_string();

    let output = run_baton(&app.db_url, &["audit", "prune", "--before", &before]);
    assert!(output.status.success(), "{}", described(&output));
    let said = text(&output.stdout);
    assert!(said.contains("deleted 8 audit row"), "{said}");
    assert_eq!(audit_ids(&app).await, ids[8..]);
    // The trail the manager reads keeps the rest.
    let trail = app
        .get("/cases/c/lock_events")
        .by(&c.mia)
        .send()
        .await
        .expect(200)
        .body;
    let shown = trail
        .as_array()
        .or_else(|| trail["lockEvents"].as_array())
        .map_or(0, Vec::len);
    assert_eq!(shown, 4, "{trail}");

    // Again: nothing left to delete.
    let output = run_baton(&app.db_url, &["audit", "prune", "--before", &before]);
    assert!(
        text(&output.stdout).contains("deleted 0 audit row"),
        "{}",
        described(&output)
    );

    // A date that does not parse: exit 2, with an example; nothing deleted.
    for bad in ["yesterday", "2026-02-30", "01/08/2026"] {
        let output = run_baton(&app.db_url, &["audit", "prune", "--before", bad]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{bad}: {}",
            described(&output)
        );
        assert!(
            text(&output.stderr).contains("RFC 3339"),
            "{}",
            described(&output)
        );
    }
    assert_eq!(audit_ids(&app).await, ids[8..]);
}

/// On PostgreSQL an audit row carries its frame to every instance's
/// listener for a minute: a prune, whatever its date, leaves it until then.
/// SQLite's rows carry no frame.
async fn audit_prune_leaves_a_frame_listeners_may_not_have_read((app, c): (TestApp, Cast)) {
    lock_cycles(&app, &c.bob, c.case.card_id, 2).await;
    let ids = audit_ids(&app).await;
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    let output = run_baton(&app.db_url, &["audit", "prune", "--before", &tomorrow]);
    assert!(output.status.success(), "{}", described(&output));
    match app.backend {
        Backend::Postgres => assert_eq!(audit_ids(&app).await, ids),
        Backend::Sqlite => assert_eq!(audit_ids(&app).await, Vec::<i64>::new()),
    }
}

async fn the_reaper_deletes_audit_rows_past_the_retention(app: TestApp) {
    let c = app.cast().await;
    lock_cycles(&app, &c.bob, c.case.card_id, 5).await;
    let ids = audit_ids(&app).await;
    date_back(&app, ids[3], 91).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = audit_ids(&app).await;
        if left == ids[4..] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "rows past the retention are still there: {left:?} of {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Rows inside the retention stay.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(audit_ids(&app).await, ids[4..]);
}

/// A pass looks at no more than a batch of rows, so it holds no long lock
/// however long the trail: 600 rows past the retention take two passes.
async fn each_retention_pass_deletes_a_bounded_batch((app, c): (TestApp, Cast)) {
    lock_cycles(&app, &c.bob, c.case.card_id, 300).await;
    let ids = audit_ids(&app).await;
    assert_eq!(ids.len(), 600);
    date_back(&app, ids[ids.len() - 1], 10).await;
    let keep = AuditRetention {
        keep: Duration::from_secs(24 * 3600),
        frames_live: Duration::from_secs(60),
    };
    let mut passes = Vec::new();
    loop {
        let deleted = app
            .state
            .db
            .write(None, move |tx| retention::prune_due(tx, &keep))
            .await
            .expect("a pass");
        passes.push(deleted);
        if deleted == 0 {
            break;
        }
    }
    assert_eq!(passes, [retention::BATCH as usize, 100, 0]);
    assert_eq!(audit_ids(&app).await, Vec::<i64>::new());
}
