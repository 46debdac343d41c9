//! `GET /metrics` on `BATON_METRICS_BIND`: the counters move after a lock
//! cycle, and the route is absent on the public port. (Its own test binary,
//! one test: a process has one metrics recorder, and other tests' traffic
//! would move the counters too. The backends run one after the other.)

mod common;

use baton::models::Role;
use common::{lock_body, Backend, TestApp};

#[actix_web::test]
async fn metrics_move_after_a_lock_cycle_and_stay_off_the_public_port() {
    lock_cycle_is_counted(Backend::Sqlite).await;
    if cfg!(baton_postgres_tests) {
        lock_cycle_is_counted(Backend::Postgres).await;
    }
}

async fn lock_cycle_is_counted(backend: Backend) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics_bind = format!("127.0.0.1:{port}");
    let bind = metrics_bind.clone();
    let Some(app) = TestApp::start_with(backend, move |s| s.metrics_bind = Some(bind)).await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Editor)])
        .await;
    let scrape = || async {
        let response = reqwest::get(format!("http://{metrics_bind}/metrics"))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.text().await.unwrap()
    };
    let acquired = "baton_lock_events_total{action=\"acquired\"}";
    let released = "baton_lock_events_total{action=\"released\"}";
    let created = "baton_http_requests_total{method=\"POST\",route=\"/locks\",status=\"201\"}";
    let before = scrape().await;

    let (mut tab, _) = app.open_tab("c", &bob).await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    // Someone else asking: 409, from the general path.
    app.post("/locks")
        .by(&rita)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(409, "lock_held");
    let during = scrape().await;
    assert_eq!(value_of(&during, "baton_locks_held"), 1.0, "{during}");
    assert!(value_of(&during, "baton_open_tabs") >= 1.0, "{during}");
    app.delete(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(204);
    tab.next_where("the release", |f| f["type"] == "destroy")
        .await;

    let after = scrape().await;
    let moved = |sample: &str| value_of(&after, sample) - value_of(&before, sample);
    assert_eq!(moved(acquired), 1.0, "{after}");
    assert_eq!(moved(released), 1.0, "{after}");
    assert_eq!(moved(created), 1.0, "{after}");
    assert_eq!(value_of(&after, "baton_locks_held"), 0.0);
    for needle in [
        "baton_http_request_duration_seconds_bucket{method=\"POST\",route=\"/locks\"",
        "baton_db_pool_connections{state=\"in_use\"}",
        "baton_db_pool_waiting",
        "# HELP baton_lock_events_total",
        "# TYPE baton_http_request_duration_seconds histogram",
    ] {
        assert!(after.contains(needle), "missing {needle}:\n{after}");
    }
    let fast = |request: &str, outcome: &str| {
        moved(&format!(
            "baton_lock_fast_path_total{{request=\"{request}\",outcome=\"{outcome}\"}}"
        ))
    };
    if backend == Backend::Postgres {
        assert!(
            after.contains("baton_fanout_delay_seconds_bucket"),
            "{after}"
        );
        // The free record and the holder's release took one statement each;
        // the held record was left to the general path.
        assert_eq!(fast("acquire", "taken"), 1.0, "{after}");
        assert_eq!(fast("acquire", "declined"), 1.0, "{after}");
        assert_eq!(fast("release", "taken"), 1.0, "{after}");
        assert_eq!(fast("release", "declined"), 0.0, "{after}");
    } else {
        assert_eq!(fast("acquire", "taken"), 0.0, "{after}");
        // Every SQLite write went through the group writer: at least the
        // acquire, the refused acquire and the release.
        let groups = value_of(&after, "baton_sqlite_write_group_size_count")
            - value_of(&before, "baton_sqlite_write_group_size_count");
        assert!(groups >= 3.0, "{after}");
    }

    // A hand-off: Rita waits while Bob holds the card, then Bob releases.
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.post("/locks")
        .by(&rita)
        .json(serde_json::json!({ "lock": { "lockableType": "Card", "lockableParam": f.card_id, "wait": true } }))
        .send()
        .await
        .expect(202);
    let waiting = scrape().await;
    assert_eq!(value_of(&waiting, "baton_waiters"), 1.0, "{waiting}");
    app.delete(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(204);
    tab.next_where("the hand-off", |f| {
        f["type"] == "create" && f["watchable"]["sessionId"] == "rita-tab"
    })
    .await;
    let handed = scrape().await;
    let moved = |sample: &str| value_of(&handed, sample) - value_of(&after, sample);
    assert_eq!(value_of(&handed, "baton_waiters"), 0.0, "{handed}");
    assert_eq!(
        moved("baton_handoffs_total{reason=\"released\"}"),
        1.0,
        "{handed}"
    );
    assert_eq!(
        moved("baton_lock_events_total{action=\"handed_off\"}"),
        1.0,
        "{handed}"
    );
    assert_eq!(
        moved("baton_lock_events_total{action=\"queued\"}"),
        1.0,
        "{handed}"
    );
    assert_eq!(moved("baton_wait_seconds_count"), 1.0, "{handed}");

    // Never on the public port.
    let public = reqwest::get(format!("{}/metrics", app.base)).await.unwrap();
    assert_eq!(public.status(), 404);
}

/// The value of one sample line (`name{labels} value`), 0 when absent.
fn value_of(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' '))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0.0)
}
