//! Several `baton serve` processes on one PostgreSQL database behave as one:
//! broadcasts and presence cross instances, locks and the guard hold across
//! them, and `kill -9` of one leaves its locks to expire and be released once
//! by a survivor. Also: a second instance on one SQLite file refuses to start.
//! (PostgreSQL tests run when BATON_TEST_POSTGRES_URL is set.)

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::config::Settings;
use baton::models::Role;
use common::line::{wait_body, LineHistory};
use common::storm::Storm;
use common::{lock_body, takeover_body, Backend, ServerProcess, TestApp, TestUser};
use reqwest::Method;
use serde_json::json;

const LIFETIMES: [(&str, &str); 4] = [
    ("BATON_LOCK_TTL", "1s"),
    ("BATON_HEARTBEAT_INTERVAL", "200ms"),
    ("BATON_DISCONNECT_GRACE", "500ms"),
    ("BATON_REAPER_INTERVAL", "100ms"),
];

fn lifetimes(s: &mut Settings) {
    s.lock_ttl = Duration::from_secs(1);
    s.heartbeat_interval = Duration::from_millis(200);
    s.disconnect_grace = Duration::from_millis(500);
    s.reaper_interval = Duration::from_millis(100);
}

/// A fresh PostgreSQL database (seeded through `app`, itself an instance)
/// and two `baton serve` processes on it.
async fn two_instances() -> Option<(TestApp, ServerProcess, ServerProcess)> {
    let app = TestApp::start_with(Backend::Postgres, lifetimes).await?;
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &LIFETIMES).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &LIFETIMES).await;
    Some((app, a, b))
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_tab_on_b_sees_what_a_did_in_order() {
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let carol = app.user("Carol").await.tab("carol-on-a");
    let rita = app.user("Rita").await.tab("rita-on-b");
    let f = app
        .case("c", &[(&carol, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut tab, _) = app.open_tab_at(&b.base, "c", &rita).await;

    let lock = app
        .req_at(&a.base, Method::POST, "/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.req_at(&a.base, Method::PATCH, &format!("/cards/{}", f.card_id))
        .by(&carol)
        .header("Lock-Token", lock.body["token"].as_str().unwrap())
        .json(json!({ "card": { "content": "through A" } }))
        .send()
        .await
        .expect(200);
    app.req_at(
        &a.base,
        Method::DELETE,
        &format!("/locks/{}", lock.body["id"]),
    )
    .by(&carol)
    .send()
    .await
    .expect(204);

    let seen = [
        tab.next_change().await,
        tab.next_change().await,
        tab.next_change().await,
    ];
    let summary: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|f| {
            (
                f["type"].as_str().unwrap(),
                f["watchable"]["type"].as_str().unwrap(),
                f["editorSessionId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("create", "Lock", "carol-on-a"),
            ("update", "Card", "carol-on-a"),
            ("destroy", "Lock", "carol-on-a")
        ]
    );
    assert_eq!(seen[1]["watchable"]["content"], "through A");
    assert_eq!(seen[2]["watchable"]["reason"], "released");
}

/// Concurrent writes to one record through both instances: every tab, on
/// either instance, sees them in commit order — card versions one by one
/// with no gap, and the lock on another card alternating create / destroy.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn concurrent_writes_reach_every_instance_in_commit_order() {
    const WRITERS_PER_INSTANCE: usize = 3;
    const PATCHES_PER_WRITER: usize = 20;
    const LOCK_CYCLES_PER_INSTANCE: usize = 8;
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let carol = app.user("Carol").await.tab("carol");
    let dave = app.user("Dave").await.tab("dave");
    let rita = app.user("Rita").await;
    let f = app
        .case(
            "c",
            &[
                (&carol, Role::Editor),
                (&dave, Role::Editor),
                (&rita, Role::Reader),
            ],
        )
        .await;
    let locked_card = app.card(&f, "locked back and forth").await;
    let (mut on_a, _) = app.open_tab_at(&a.base, "c", &rita.tab("rita-on-a")).await;
    let (mut on_b, _) = app.open_tab_at(&b.base, "c", &rita.tab("rita-on-b")).await;

    let patches = [(&a.base, &carol), (&b.base, &dave)]
        .into_iter()
        .flat_map(|route| std::iter::repeat_n(route, WRITERS_PER_INSTANCE))
        .map(|(base, who)| {
            let app = &app;
            async move {
                for i in 0..PATCHES_PER_WRITER {
                    app.req_at(base, Method::PATCH, &format!("/cards/{}", f.card_id))
                        .by(who)
                        .json(json!({ "card": { "content": format!("{} {i}", who.email) } }))
                        .send()
                        .await
                        .expect(200);
                }
            }
        });
    // Carol locks and releases the other card through A, Dave through B;
    // each waits for the other with 409s in between.
    let lock_cycles = [(&a.base, &carol), (&b.base, &dave)].map(|(base, who)| {
        let app = &app;
        async move {
            let mut done = 0;
            while done < LOCK_CYCLES_PER_INSTANCE {
                let taken = app
                    .req_at(base, Method::POST, "/locks")
                    .by(who)
                    .json(lock_body("Card", locked_card))
                    .send()
                    .await;
                if taken.status == 409 {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                let lock = taken.expect(201);
                app.req_at(base, Method::DELETE, &format!("/locks/{}", lock.body["id"]))
                    .by(who)
                    .send()
                    .await
                    .expect(204);
                done += 1;
            }
        }
    });
    futures_util::future::join(
        futures_util::future::join_all(patches),
        futures_util::future::join_all(lock_cycles),
    )
    .await;

    let updates = 2 * WRITERS_PER_INSTANCE * PATCHES_PER_WRITER;
    let lock_frames = 2 * 2 * LOCK_CYCLES_PER_INSTANCE;
    for (name, tab) in [("A", &mut on_a), ("B", &mut on_b)] {
        let mut versions = Vec::new();
        let mut lock_changes = Vec::new();
        while versions.len() < updates || lock_changes.len() < lock_frames {
            let frame = tab.next_change().await;
            match frame["watchable"]["type"].as_str() {
                Some("Card") => versions.push(frame["watchable"]["version"].as_i64().unwrap()),
                Some("Lock") => lock_changes.push(frame["type"].as_str().unwrap().to_owned()),
                other => panic!("unexpected frame on {name}: {other:?} {frame}"),
            }
        }
        let expected: Vec<i64> = (2..2 + updates as i64).collect();
        assert_eq!(
            versions, expected,
            "card versions as the tab on {name} saw them"
        );
        let alternating: Vec<&str> = ["create", "destroy"]
            .into_iter()
            .cycle()
            .take(lock_frames)
            .collect();
        assert_eq!(lock_changes, alternating, "lock frames on {name}");
    }
}

/// The outbox is delivered in id order: a broadcast written after one whose
/// transaction is still open waits for it; a rolled-back one leaves a gap
/// that is skipped, and nothing after it is lost.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn the_outbox_waits_for_open_transactions_and_skips_rolled_back_ones() {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;

    let Some((app, a, _b)) = two_instances().await else {
        return;
    };
    let carol = app.user("Carol").await.tab("carol");
    let rita = app.user("Rita").await;
    let f = app
        .case("c", &[(&carol, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut tab, _) = app.open_tab_at(&a.base, "c", &rita.tab("rita")).await;
    let marker = |name: &str| {
        let text = json!({ "type": "update", "watchable": { "type": "Marker", "name": name } });
        let payload = json!({ "k": "frame", "case": f.case_id, "text": text.to_string() });
        format!("INSERT INTO events (payload, at) VALUES ('{payload}', now())")
    };
    let patch = |content: &'static str| {
        app.req_at(&a.base, Method::PATCH, &format!("/cards/{}", f.card_id))
            .by(&carol)
            .json(json!({ "card": { "content": content } }))
            .send()
    };
    let mut other = diesel::PgConnection::establish(&app.db_url).unwrap();

    // A broadcast whose transaction is still open holds back the ones after it.
    other
        .batch_execute(&format!("BEGIN; {}", marker("held")))
        .unwrap();
    patch("after the held one").await.expect(200);
    let early = tokio::time::timeout(Duration::from_millis(300), tab.next_change()).await;
    assert!(
        early.is_err(),
        "delivered before the open transaction ended: {early:?}"
    );
    other.batch_execute("COMMIT").unwrap();
    let first = tab.next_change().await;
    assert_eq!(first["watchable"]["name"], "held", "{first}");
    let second = tab.next_change().await;
    assert_eq!(
        second["watchable"]["content"], "after the held one",
        "{second}"
    );

    // One that rolls back leaves a gap in the ids: skipped, nothing after it lost.
    other
        .batch_execute(&format!("BEGIN; {}; ROLLBACK", marker("rolled back")))
        .unwrap();
    patch("after the gap").await.expect(200);
    let next = tab.next_change().await;
    assert_eq!(next["watchable"]["content"], "after the gap", "{next}");
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn presence_spans_instances() {
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-on-a");
    let carol = app.user("Carol").await.tab("carol-on-b");
    app.case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let (mut on_a, _) = app.open_tab_at(&a.base, "c", &bob).await;
    let (_on_b, welcome) = app.open_tab_at(&b.base, "c", &carol).await;
    assert_eq!(
        welcome["onlineUsers"].as_array().unwrap().len(),
        2,
        "B's welcome counts A's tab"
    );
    let both = on_a
        .next_where("two users online", |f| {
            f["type"] == "presence" && f["onlineUsers"].as_array().unwrap().len() == 2
        })
        .await;
    let names: Vec<&str> = both["onlineUsers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Bob", "Carol"]);
    let case = app
        .req_at(&a.base, Method::GET, "/cases/c")
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(case.body["onlineUsers"].as_array().unwrap().len(), 2);
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn locks_and_the_guard_hold_across_instances() {
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-on-a");
    let carol = app.user("Carol").await.tab("carol-on-b");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);

    let lock = app
        .req_at(&a.base, Method::POST, "/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let held = app
        .req_at(&b.base, Method::POST, "/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(409, "lock_held");
    assert_eq!(held.body["error"]["lock"]["id"], lock.body["id"]);
    app.req_at(&b.base, Method::PATCH, &card)
        .by(&carol)
        .json(json!({ "card": { "content": "no" } }))
        .send()
        .await
        .expect_error(423, "locked");

    // Edit anyway through B; A's stale tab is locked out, and after Carol
    // releases it still cannot write over her work.
    let carols = app
        .req_at(&b.base, Method::POST, "/locks")
        .by(&carol)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.req_at(&b.base, Method::PATCH, &card)
        .by(&carol)
        .json(json!({ "card": { "content": "carol's" } }))
        .send()
        .await
        .expect(200);
    let stale = json!({ "card": { "content": "stale bob" } });
    app.req_at(&a.base, Method::PATCH, &card)
        .by(&bob)
        .header("Lock-Token", lock.body["token"].as_str().unwrap())
        .json(stale.clone())
        .send()
        .await
        .expect_error(423, "locked");
    app.req_at(
        &b.base,
        Method::DELETE,
        &format!("/locks/{}", carols.body["id"]),
    )
    .by(&carol)
    .send()
    .await
    .expect(204);
    app.req_at(&a.base, Method::PATCH, &card)
        .by(&bob)
        .header("Lock-Token", lock.body["token"].as_str().unwrap())
        .json(stale)
        .send()
        .await
        .expect_error(412, "lock_lost");
    let now = app
        .req_at(&a.base, Method::GET, &card)
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(now.body["content"], "carol's");
}

/// One lock cycle and one save of `user` on `card` through `base`: each a
/// single fast statement on PostgreSQL, which leaves the instance knowing
/// the caller (`locks::fast_path::callers`).
async fn lock_save_release(app: &TestApp, base: &str, user: &TestUser, card: i64) {
    let lock = app
        .req_at(base, Method::POST, "/locks")
        .by(user)
        .json(lock_body("Card", card))
        .send()
        .await
        .expect(201);
    app.req_at(base, Method::PATCH, &format!("/cards/{card}"))
        .by(user)
        .json(json!({ "card": { "content": "known" } }))
        .send()
        .await
        .expect(200);
    app.req_at(base, Method::DELETE, &format!("/locks/{}", lock.body["id"]))
        .by(user)
        .send()
        .await
        .expect(204);
}

/// The fast path checks callers from memory while the auth epoch stands
/// still. Every change of access through B is answered on A, which knows
/// the caller, at its very next request: demoted to reader (403 on the
/// acquire and the save), an editor again (201), the account removed
/// (401), signed out (401).
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn access_changed_through_one_instance_holds_at_once_on_the_other() {
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let admin = app.admin("Ada").await;
    let alice = app.user("Alice").await;
    let bob = app.user("Bob").await.tab("bob-on-a");
    let carol = app.user("Carol").await.tab("carol-on-a");
    let f = app
        .case(
            "c",
            &[
                (&alice, Role::Manager),
                (&bob, Role::Editor),
                (&carol, Role::Editor),
            ],
        )
        .await;
    let members = format!("/cases/{}/memberships", f.slug);
    let set_role = |user: &TestUser, role: &str| {
        app.req_at(&b.base, Method::POST, &members)
            .by(&alice)
            .json(json!({ "membership": { "email": user.email, "role": role } }))
    };
    let acquire_on_a = |user: &TestUser| {
        app.req_at(&a.base, Method::POST, "/locks")
            .by(user)
            .json(lock_body("Card", f.card_id))
    };
    lock_save_release(&app, &a.base, &bob, f.card_id).await;
    lock_save_release(&app, &a.base, &carol, f.card_id).await;

    set_role(&bob, "reader").send().await.expect(200);
    acquire_on_a(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.req_at(&a.base, Method::PATCH, &format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(json!({ "card": { "content": "a reader's" } }))
        .send()
        .await
        .expect_error(403, "forbidden");

    set_role(&bob, "editor").send().await.expect(200);
    lock_save_release(&app, &a.base, &bob, f.card_id).await;

    app.req_at(&b.base, Method::DELETE, &format!("/users/{}", carol.id))
        .by(&admin)
        .send()
        .await
        .expect(204);
    acquire_on_a(&carol).send().await.expect(401);

    app.req_at(&b.base, Method::POST, "/auth/logout")
        .by(&bob)
        .send()
        .await
        .expect(204);
    acquire_on_a(&bob).send().await.expect(401);
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_storm_split_across_instances_never_shares_a_record() {
    // Default lifetimes: with a 1 s lease, a client stalled for a second on
    // a loaded machine would lose its lock legitimately, and the storm's
    // bookkeeping would read that as an overlap.
    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &[]).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &[]).await;
    let mut storm = Storm::seed(&app, "storm", 3).await;
    storm.bases = vec![a.base.clone(), b.base.clone()];
    storm.run(Arc::new(app)).await;
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn kill_9_of_an_instance_releases_its_tabs_locks() {
    let Some((app, mut a, b)) = two_instances().await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-on-a");
    let rita = app.user("Rita").await.tab("rita-on-b");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let (mut watcher, _) = app.open_tab_at(&b.base, "c", &rita).await;
    let (_bobs_tab, _) = app.open_tab_at(&a.base, "c", &bob).await;
    let lock = app
        .req_at(&a.base, Method::POST, "/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    // Bob's tab keeps the lock alive through A's heartbeats…
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.req_at(&b.base, Method::GET, &format!("/locks/{}", lock.body["id"]))
        .by(&rita)
        .send()
        .await
        .expect(200);

    // …until A dies without a word.
    a.kill();
    let killed_at = Instant::now();
    // Two things must reach B's tab, in whichever order: the lock's end
    // (after its lease) and Bob leaving (after three missed heartbeats).
    let (mut gone, mut waited, mut alone) = (None, Duration::ZERO, None);
    while gone.is_none() || alone.is_none() {
        let frame = watcher.next().await;
        if frame["type"] == "destroy" && frame["watchable"]["id"] == lock.body["id"] {
            waited = killed_at.elapsed();
            gone = Some(frame);
        } else if frame["type"] == "presence" && frame["onlineUsers"].as_array().unwrap().len() == 1
        {
            alone = Some(frame);
        }
    }
    assert_eq!(gone.unwrap()["watchable"]["reason"], "expired");
    // TTL (1 s) + one reaper interval (100 ms), with slack for a loaded machine.
    assert!(
        waited < Duration::from_millis(1100 + 900),
        "released after {waited:?}"
    );
    assert_eq!(alone.unwrap()["onlineUsers"][0]["user"]["name"], "Rita");

    let audit = app.audit(f.case_id).await;
    let ends: Vec<&str> = audit
        .iter()
        .filter(|(_, id, ..)| *id == lock.body["id"].as_i64().unwrap())
        .map(|(a, ..)| a.as_str())
        .collect();
    assert_eq!(ends, ["acquired", "expired"], "released and audited once");

    // B serves on: the record is free for the next editor.
    app.req_at(&b.base, Method::GET, "/healthz")
        .send()
        .await
        .expect(200);
    let status = app
        .req_at(
            &b.base,
            Method::GET,
            &format!(
                "/locks/status?lockableType=Card&lockableParam={}",
                f.card_id
            ),
        )
        .by(&rita)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "unlocked");
}

/// A holder on A; waiters join its line alternately through A and B, each
/// with its tab open on its own instance. The holder releases, then each new
/// holder in turn: every waiter is granted once, in join order, and sees its
/// grant on its own instance's channel (old lock's `destroy`, its waiter's
/// `destroy` `granted`, its new lock's `create`); watching tabs on A and B
/// see the same history; the audit trail says `handed_off` after each
/// `released`.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn waiters_on_both_instances_are_served_once_in_join_order() {
    const WAITERS: usize = 6;
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    let hal = app.user("Hal").await.tab("holder-on-a");
    let rita = app.user("Rita").await;
    let mut users = Vec::new();
    for i in 0..3 {
        users.push(app.user(&format!("Waiter{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    members.extend([(&hal, Role::Editor), (&rita, Role::Reader)]);
    let f = app.case("c", &members).await;
    let bases = [(&a.base, "a"), (&b.base, "b")];
    let (mut watch_a, _) = app.open_tab_at(&a.base, "c", &rita.tab("watch-a")).await;
    let (mut watch_b, _) = app.open_tab_at(&b.base, "c", &rita.tab("watch-b")).await;
    // Open, so that pongs keep the short lease (1 s) of Hal's lock alive.
    let (_hal_tab, _) = app.open_tab_at(&a.base, "c", &hal).await;

    let held = app.lock_at(&a.base, &hal, "Card", f.card_id).await;

    // Waiter k joins through A when k is even, through B when odd.
    let mut waiting = Vec::new();
    for k in 0..WAITERS {
        let (base, instance) = bases[k % 2];
        let me = users[k % users.len()].tab(&format!("waiter-{k}-on-{instance}"));
        let (tab, _) = app.open_tab_at(base, "c", &me).await;
        let waiter = app
            .req_at(base, Method::POST, "/locks")
            .by(&me)
            .json(wait_body("Card", f.card_id))
            .send()
            .await
            .expect(202)
            .body;
        assert_eq!(
            waiter["position"],
            k + 1,
            "place in line on joining: {waiter}"
        );
        waiting.push((base, me, tab, waiter));
    }
    let ids: Vec<i64> = waiting.iter().map(|w| common::id(&w.3)).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "waiter ids in join order: {ids:?}"
    );

    app.req_at(&a.base, Method::DELETE, &format!("/locks/{}", held["id"]))
        .by(&hal)
        .send()
        .await
        .expect(204);
    let mut previous = common::id(&held);
    let mut granted = Vec::new();
    for (k, (base, me, tab, waiter)) in waiting.iter_mut().enumerate() {
        let grant = tab.await_grant(waiter).await;
        grant.assert_hand_off(waiter, "released");
        assert_eq!(
            grant.ended["watchable"]["id"], previous,
            "waiter {k} was granted the record after another lock than its predecessor's"
        );
        let lock = grant.lock_id();
        let status = app
            .req_at(
                base,
                Method::GET,
                &format!(
                    "/locks/status?lockableType=Card&lockableParam={}",
                    f.card_id
                ),
            )
            .by(me)
            .send()
            .await
            .expect(200);
        assert_eq!(status.body["state"], "owned", "waiter {k}: {}", status.body);
        assert_eq!(status.body["lock"]["id"], lock);
        assert_eq!(
            status.body["waiters"].as_array().map(Vec::len),
            Some(WAITERS - k - 1),
            "the line behind waiter {k}: {}",
            status.body
        );
        app.req_at(base, Method::DELETE, &format!("/locks/{lock}"))
            .by(me)
            .send()
            .await
            .expect(204);
        granted.push(lock);
        previous = lock;
    }

    // Both watchers saw the whole history, the same on A and on B.
    let mut histories = Vec::new();
    for (name, tab) in [("A", &mut watch_a), ("B", &mut watch_b)] {
        let mut frames = Vec::new();
        let mut destroys = 0;
        while destroys < 1 + WAITERS {
            let frame = tab.next_change().await;
            if frame["type"] == "destroy" && frame["watchable"]["type"] == "Lock" {
                destroys += 1;
            }
            frames.push(frame);
        }
        let history = LineHistory::check(&frames);
        history.assert_join_order();
        let record = format!("Card/{}", f.card_id);
        assert_eq!(
            history.joined[&record], ids,
            "joins as the watcher on {name} saw them"
        );
        assert_eq!(
            history.granted[&record], ids,
            "grants as the watcher on {name} saw them"
        );
        let mut locks = vec![common::id(&held)];
        locks.extend(&granted);
        assert_eq!(
            history.locks, locks,
            "locks as the watcher on {name} saw them"
        );
        let summary: Vec<(String, String, i64, String)> = frames
            .iter()
            .filter(|f| f["type"] != "update")
            .map(|f| {
                let w = &f["watchable"];
                (
                    f["type"].as_str().unwrap().to_owned(),
                    w["type"].as_str().unwrap().to_owned(),
                    w["id"].as_i64().unwrap(),
                    w["reason"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        histories.push(summary);
    }
    assert_eq!(
        histories[0], histories[1],
        "A's and B's watchers saw different histories"
    );

    // The audit trail: acquired, the joins, then released / handed_off.
    let mut expected = vec![("acquired".to_owned(), common::id(&held), hal.id)];
    expected.extend(std::iter::repeat_n(
        ("queued".to_owned(), common::id(&held), hal.id),
        WAITERS,
    ));
    expected.push(("released".to_owned(), common::id(&held), hal.id));
    for (k, lock) in granted.iter().enumerate() {
        let holder = waiting[k].1.id;
        expected.push(("handed_off".to_owned(), *lock, holder));
        expected.push(("released".to_owned(), *lock, holder));
    }
    let trail: Vec<(String, i64, i64)> = app
        .audit(f.case_id)
        .await
        .into_iter()
        .map(|(action, lock, _, holder)| (action, lock, holder))
        .collect();
    assert_eq!(trail, expected, "audit trail (action, lock, holder)");
}

/// The holder's instance dies (`kill -9`) while a tab on the other one
/// waits: the lock expires on its own and a surviving reaper hands the
/// record to the waiter, once — the waiting tab sees the `expired` destroy,
/// its grant and its new lock, untagged (baton acted, not a tab).
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn kill_9_of_the_holders_instance_hands_the_record_to_a_waiter_on_the_other() {
    let Some((app, mut a, b)) = two_instances().await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-on-a");
    let carol = app.user("Carol").await.tab("carol-on-b");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let (_bobs_tab, _) = app.open_tab_at(&a.base, "c", &bob).await;
    let (mut carols_tab, _) = app.open_tab_at(&b.base, "c", &carol).await;
    let held = app.lock_at(&a.base, &bob, "Card", f.card_id).await;
    let waiter = app
        .req_at(&b.base, Method::POST, "/locks")
        .by(&carol)
        .json(wait_body("Card", f.card_id))
        .send()
        .await
        .expect(202)
        .body;
    // Both leases (1 s) outlive this only through their tabs' pongs.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    a.kill();
    let grant = carols_tab.await_grant(&waiter).await;
    grant.assert_hand_off(&waiter, "expired");
    assert_eq!(grant.ended["watchable"]["id"], held["id"], "{:?}", grant);
    for frame in [&grant.ended, &grant.granted, &grant.created] {
        assert_eq!(
            frame["editorSessionId"],
            serde_json::Value::Null,
            "a hand-off by the reaper is baton's act: {frame}"
        );
    }
    let lock = grant.lock_id();
    let status = app
        .req_at(
            &b.base,
            Method::GET,
            &format!(
                "/locks/status?lockableType=Card&lockableParam={}",
                f.card_id
            ),
        )
        .by(&carol)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "owned", "{}", status.body);
    assert_eq!(status.body["lock"]["id"], lock);
    // Carol's tab on B keeps the new lock alive past its first lease.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.req_at(&b.base, Method::GET, &format!("/locks/{lock}"))
        .by(&carol)
        .send()
        .await
        .expect(200);

    let trail: Vec<(String, i64, i64)> = app
        .audit(f.case_id)
        .await
        .into_iter()
        .map(|(action, lock, _, holder)| (action, lock, holder))
        .collect();
    let bobs = common::id(&held);
    assert_eq!(
        trail,
        [
            ("acquired".to_owned(), bobs, bob.id),
            ("queued".to_owned(), bobs, bob.id),
            ("expired".to_owned(), bobs, bob.id),
            ("handed_off".to_owned(), lock, carol.id),
        ],
        "audit trail (action, lock, holder)"
    );
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_second_instance_on_one_sqlite_file_refuses_to_start() {
    let (_db, url) = common::TestDb::create(Backend::Sqlite).unwrap();
    let _first = ServerProcess::spawn(&url, "first", &[]).await;
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("DATABASE_URL", &url)
        .env("BATON_JWT_SECRET", "x-secret-x-secret-x-secret-x-secret")
        .output()
        .expect("run baton");
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another baton is already serving"),
        "{stderr}"
    );
}

/// Fencing tokens: every grant on a record (acquire, takeover, hand-off)
/// has a greater token than every earlier grant on it, whichever instance
/// made it; a renewal keeps its token. `bases` are where Ann and Ben send
/// their requests.
async fn tokens_grow_with_every_grant(app: &TestApp, bases: [&str; 2]) {
    let [on_a, on_b] = bases;
    let ann = app.user("Ann").await.tab("ann-tab");
    let ben = app.user("Ben").await.tab("ben-tab");
    let f = app
        .case("c", &[(&ann, Role::Editor), (&ben, Role::Editor)])
        .await;
    let token = |lock: &serde_json::Value| -> i64 {
        lock["token"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("a decimal token: {lock}"))
    };
    let mut tokens = Vec::new();

    // Ann acquires through one instance; her renewal keeps the token.
    let first = app.lock_at(on_a, &ann, "Card", f.card_id).await;
    tokens.push(token(&first));
    let renewed = app
        .req_at(on_a, Method::POST, "/locks")
        .by(&ann)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(200);
    assert_eq!(token(&renewed.body), tokens[0], "a renewal keeps its token");

    // Ben takes over through the other.
    let taken = app
        .req_at(on_b, Method::POST, "/locks")
        .by(&ben)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    tokens.push(token(&taken.body));

    // Ann waits in line through the first; Ben's release hands it to her.
    let (_ann_tab, _) = app.open_tab_at(on_a, "c", &ann).await;
    app.req_at(on_a, Method::POST, "/locks")
        .by(&ann)
        .json(common::line::wait_body("Card", f.card_id))
        .send()
        .await
        .expect(202);
    app.req_at(
        on_b,
        Method::DELETE,
        &format!("/locks/{}", taken.body["id"]),
    )
    .by(&ben)
    .send()
    .await
    .expect(204);
    let status = app
        .req_at(
            on_a,
            Method::GET,
            &format!(
                "/locks/status?lockableType=Card&lockableParam={}",
                f.card_id
            ),
        )
        .by(&ann)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "owned", "{}", status.body);
    tokens.push(token(&status.body["lock"]));

    // Ann releases; Ben acquires afresh through the other instance.
    app.req_at(
        on_a,
        Method::DELETE,
        &format!("/locks/{}", status.body["lock"]["id"]),
    )
    .by(&ann)
    .send()
    .await
    .expect(204);
    let again = app.lock_at(on_b, &ben, "Card", f.card_id).await;
    tokens.push(token(&again));

    // Printed for the record (`-- --nocapture` shows it).
    let across = if on_a == on_b {
        "one instance"
    } else {
        "two instances"
    };
    println!("fencing tokens on {across} (acquire, takeover, hand-off, acquire): {tokens:?}");
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "acquire, takeover, hand-off, acquire: {tokens:?}"
    );
}

/// Frames a team's backend announces (`POST /cases/:slug/events`) through
/// either instance reach a tab on one of them in the order baton accepted
/// them.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn announced_frames_cross_instances_in_the_order_sent() {
    let Some(app) = TestApp::start_with(Backend::Postgres, lifetimes).await else {
        return;
    };
    // A host announces its own records: both instances serve a schema that
    // declares an external type beside the casebook.
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = dir.path().join("invoices.toml");
    std::fs::write(
        &schema,
        format!(
            "{}\n[types.Invoice]\nstore = \"external\"\n",
            include_str!("../examples/schemas/casebook.toml")
        ),
    )
    .expect("write the schema");
    let schema = schema.to_str().expect("a UTF-8 path");
    let mut env = LIFETIMES.to_vec();
    env.push(("BATON_SCHEMA", schema));
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &env).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &env).await;
    let (key, hash) = baton::auth::api_keys::generate();
    app.state
        .db
        .write(None, move |tx| {
            Ok::<_, baton::error::AppError>(baton::models::ApiKey::create(
                tx.conn, "host", &hash, tx.now,
            )?)
        })
        .await
        .expect("add a key");
    let rita = app.user("Rita").await.tab("rita-on-a");
    app.case("c", &[(&rita, Role::Reader)]).await;
    let (mut tab, _) = app.open_tab_at(&a.base, "c", &rita).await;
    for n in 0..12 {
        let base = if n % 2 == 0 { &a.base } else { &b.base };
        app.req_at(base, Method::POST, "/cases/c/events")
            .header("Authorization", format!("Bearer {key}"))
            .json(json!({"type": "update", "watchable": {"type": "Invoice", "param": "inv-1", "n": n}}))
            .send()
            .await
            .expect(202);
    }
    let mut seen = Vec::new();
    while seen.len() < 12 {
        seen.push(tab.next_change().await["watchable"]["n"].clone());
    }
    assert_eq!(seen, (0..12).map(|n| json!(n)).collect::<Vec<_>>());
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn fencing_tokens_grow_across_instances_through_a_hand_off() {
    let Some((app, a, b)) = two_instances().await else {
        return;
    };
    tokens_grow_with_every_grant(&app, [&a.base, &b.base]).await;
}

#[actix_web::test]
async fn fencing_tokens_grow_on_sqlite_through_a_hand_off() {
    let Some(app) = TestApp::start_with(Backend::Sqlite, lifetimes).await else {
        return;
    };
    let base = app.base.clone();
    tokens_grow_with_every_grant(&app, [&base, &base]).await;
}
