//! One clock: two `baton serve` instances on one PostgreSQL database, one
//! with its wall clock a minute ahead and one a minute behind (libfaketime),
//! agree about every lock, because every lease decision reads the
//! database's clock. Skipped, with a message, without PostgreSQL or
//! libfaketime (Debian package `faketime`; `.ci/run` installs it).

mod common;

use std::time::{Duration, Instant};

use baton::models::Role;
use common::{lock_body, Backend, ServerProcess, TestApp};
use reqwest::Method;
use serde_json::Value;

/// Where Debian and others put libfaketime's multi-threaded library.
const LIBFAKETIME: [&str; 2] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
];

/// The lease these tests watch run out.
const TTL_SECS: u64 = 3;

fn libfaketime() -> Option<&'static str> {
    LIBFAKETIME
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
}

/// An instance whose wall clock is off by `offset` (`"+60s"`, `"-60s"`).
/// The monotonic clock is left alone: timers still tick at the real pace.
async fn skewed_instance(db_url: &str, name: &str, library: &str, offset: &str) -> ServerProcess {
    let ttl = format!("{TTL_SECS}s");
    ServerProcess::spawn(
        db_url,
        name,
        &[
            ("LD_PRELOAD", library),
            ("FAKETIME", offset),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("BATON_LOCK_TTL", &ttl),
            ("BATON_HEARTBEAT_INTERVAL", "250ms"),
            ("BATON_REAPER_INTERVAL", "100ms"),
        ],
    )
    .await
}

/// A fresh database (seeded through the returned in-process instance, whose
/// clock is right) and two instances on it, a minute ahead and a minute
/// behind. `None` without PostgreSQL or libfaketime (saying so).
async fn skewed_pair() -> Option<(TestApp, ServerProcess, ServerProcess)> {
    let Some(library) = libfaketime() else {
        eprintln!(
            "skipped: libfaketime is not installed (apt-get install faketime); \
             looked for {LIBFAKETIME:?}"
        );
        return None;
    };
    let app = TestApp::start_with(Backend::Postgres, |s| {
        s.lock_ttl = Duration::from_secs(TTL_SECS);
    })
    .await?;
    let ahead = skewed_instance(&app.db_url, "ahead", library, "+60s").await;
    let behind = skewed_instance(&app.db_url, "behind", library, "-60s").await;
    Some((app, ahead, behind))
}

fn at(value: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(value.as_str().expect("a timestamp")).expect("RFC 3339")
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn instances_a_minute_apart_agree_about_every_lock() {
    let Some((app, ahead, behind)) = skewed_pair().await else {
        return;
    };
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
    // Rita watches from the instance ahead of time.
    let (mut watcher, _) = app.open_tab_at(&ahead.base, "c", &rita).await;

    // Bob locks through the instance behind (no tab: nothing renews it).
    let asked = Instant::now();
    let lock = app.lock_at(&behind.base, &bob, "Card", f.card_id).await;
    let lease = at(&lock["expiresAt"]) - at(&lock["createdAt"]);
    assert_eq!(lease.num_milliseconds(), (TTL_SECS * 1000) as i64, "{lock}");

    // Both instances say the same about it, and its times are the database's.
    let path = format!("/locks/{}", lock["id"]);
    for base in [&ahead.base, &behind.base] {
        let seen = app
            .req_at(base, Method::GET, &path)
            .by(&rita)
            .send()
            .await
            .expect(200)
            .body;
        assert_eq!(seen["expiresAt"], lock["expiresAt"], "{base}");
    }
    let db_now = app
        .state
        .db
        .read(|conn| baton::db::now(conn).map_err(baton::error::AppError::from))
        .await
        .expect("the database's clock");
    let skew = (at(&lock["createdAt"]).naive_utc() - db_now)
        .num_milliseconds()
        .abs();
    assert!(
        skew < 5_000,
        "createdAt is {skew} ms from the database's clock"
    );

    // Nobody else is granted it meanwhile, through either instance, and the
    // instance a minute ahead does not end it early.
    while asked.elapsed() < Duration::from_millis(TTL_SECS * 1000 - 700) {
        for base in [&ahead.base, &behind.base] {
            app.req_at(base, Method::POST, "/locks")
                .by(&carol)
                .json(lock_body("Card", f.card_id))
                .send()
                .await
                .expect_error(409, "lock_held");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // It lives exactly its lease: it ends (expired) once it has run out.
    let gone = watcher
        .next_where("the lock's end", |frame| {
            frame["type"] == "destroy" && frame["watchable"]["id"] == lock["id"]
        })
        .await;
    let lived = asked.elapsed();
    assert_eq!(gone["watchable"]["reason"], "expired", "{gone}");
    assert!(
        lived >= Duration::from_millis(TTL_SECS * 1000 - 300),
        "ended after {lived:?}, before its {TTL_SECS} s lease"
    );
    assert!(
        lived <= Duration::from_millis(TTL_SECS * 1000 + 2_000),
        "ended only after {lived:?}"
    );
    // Then it is free, once, for whoever asks first.
    let next = app.lock_at(&ahead.base, &carol, "Card", f.card_id).await;
    app.req_at(&behind.base, Method::POST, "/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(409, "lock_held");
    assert_ne!(next["id"], lock["id"]);
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_tab_on_the_skewed_instance_keeps_its_lock_alive() {
    let Some((app, ahead, behind)) = skewed_pair().await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    // Bob's tab is open on the instance behind; his pongs renew his lease
    // there, and the instance ahead must not reap it.
    let (_tab, _) = app.open_tab_at(&behind.base, "c", &bob).await;
    let lock = app.lock_at(&ahead.base, &bob, "Card", f.card_id).await;
    tokio::time::sleep(Duration::from_millis(TTL_SECS * 1000 * 2)).await;
    let still = app
        .req_at(&ahead.base, Method::GET, &format!("/locks/{}", lock["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200)
        .body;
    assert!(
        at(&still["expiresAt"]) > at(&lock["expiresAt"]),
        "renewed by pongs: {still}"
    );
}
