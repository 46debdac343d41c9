//! The waiting line: `POST /locks` with `wait: true`, the hand-off when a
//! lock ends (in join order, with its frames in the documented order), every
//! way a lock can end, waiters that go away, and leaving the line. On both
//! databases; the fast path (PostgreSQL) is on, as in production.

mod common;

use std::time::Duration;

use common::line::wait_body;
use common::{id, lock_body, short_lifetimes, Cast, Tab, TestApp, TestUser};
use serde_json::{json, Value};

on_both_backends!(TestApp::with_cast =>
    waiting_answers_202_with_a_waiter_and_200_when_asked_again,
    waiting_needs_a_tab_and_an_editor,
    the_line_is_in_the_case_the_welcome_and_the_status,
    grants_go_in_join_order_with_the_frames_in_order,
    a_kicked_holders_lock_is_handed_over,
    a_broken_lock_is_handed_over,
    a_removed_users_lock_is_handed_over_and_their_waiters_leave,
    a_takeover_skips_the_line_and_leaves_it_as_it_was,
    a_waiter_leaves_the_line,
    a_waiter_refreshes_its_place,
    deleting_the_record_empties_its_line,
    another_users_tab_with_the_same_session_id_waits_in_its_own_place,
);
on_both_backends!(|backend| TestApp::start_with(backend, lifetimes) =>
    an_expired_lock_is_handed_over,
    a_closed_holders_lock_is_handed_over_after_the_grace,
    an_expired_waiter_is_skipped,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        lifetimes(s);
        s.idle_timeout = Duration::from_millis(1500);
    }) =>
    an_idle_lock_is_handed_over,
);
on_both_backends!(
    |backend| TestApp::start_with(backend, |s| {
        lifetimes(s);
        s.lock_ttl = Duration::from_secs(30);
    }) =>
    a_waiter_whose_tab_closes_leaves_after_the_grace_and_is_skipped,
);
on_both_backends!(|backend| TestApp::start_with(backend, lifetimes_without_reaper) =>
    a_takeover_of_an_overdue_lock_skips_the_line_too,
    deleting_a_page_ends_the_line_of_an_overdue_card_lock,
);

/// Short lifetimes, with a lease of 2 s renewed every 500 ms: a waiter's or
/// holder's tab must keep answering pongs through a whole test, also on a
/// loaded machine.
fn lifetimes(s: &mut baton::config::Settings) {
    short_lifetimes(s);
    s.lock_ttl = Duration::from_secs(2);
    s.heartbeat_interval = Duration::from_millis(500);
}

/// `user`'s tab joins the line for the case's card: 202, its waiter.
async fn wait(app: &TestApp, user: &TestUser, card: i64) -> Value {
    app.lock_expect(user, wait_body("Card", card), 202)
        .await
        .body
}

fn is_destroy_of(frame: &Value, type_name: &str, id: &Value) -> bool {
    frame["type"] == "destroy"
        && frame["watchable"]["type"] == type_name
        && frame["watchable"]["id"] == *id
}

/// Reads a tab's frames until the hand-off of `old_lock` and checks it is
/// the documented three, in order: the old lock's `destroy` (`reason`), the
/// waiter's `destroy` (`granted`), the new lock's `create` for the waiter's
/// tab. Returns the new lock.
async fn expect_hand_off(tab: &mut Tab, old_lock: &Value, reason: &str, waiter: &Value) -> Value {
    let old = tab
        .next_where("the old lock's destroy", |f| {
            is_destroy_of(f, "Lock", &old_lock["id"])
        })
        .await;
    assert_eq!(old["watchable"]["reason"], reason, "{old}");
    let granted = tab.next_change().await;
    assert!(
        is_destroy_of(&granted, "Waiter", &waiter["id"]),
        "after the old lock's destroy, the waiter's: {granted}"
    );
    assert_eq!(granted["watchable"]["reason"], "granted", "{granted}");
    assert_eq!(granted["editorSessionId"], old["editorSessionId"]);
    let created = tab.next_change().await;
    assert_eq!(created["type"], "create", "then the new lock: {created}");
    let lock = created["watchable"].clone();
    assert_eq!(lock["type"], "Lock", "{created}");
    assert_eq!(lock["sessionId"], waiter["sessionId"], "{created}");
    assert_eq!(lock["user"]["id"], waiter["user"]["id"], "{created}");
    assert_eq!(lock["lockable"], waiter["lockable"], "{created}");
    assert_ne!(lock["id"], old_lock["id"], "a new token");
    lock
}

/// The record's line as `GET /locks/status` tells it: waiter ids, first first.
async fn line_of(app: &TestApp, c: &Cast) -> Vec<i64> {
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={}",
            c.case.card_id
        ))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    let waiters = status.body["waiters"].as_array().expect("waiters");
    for (i, waiter) in waiters.iter().enumerate() {
        assert_eq!(waiter["position"], json!(i + 1), "{}", status.body);
    }
    waiters.iter().map(id).collect()
}

async fn waiting_answers_202_with_a_waiter_and_200_when_asked_again((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    let mia = c.mia.tab("mia-tab");
    let held = app.lock(&bob, "Card", card).await;

    let first = wait(&app, &carol, card).await;
    assert_eq!(first["type"], "Waiter");
    assert_eq!(first["table"], "lock_waiters");
    assert_eq!(first["param"], first["id"].to_string());
    assert_eq!(
        first["lockable"],
        json!({ "type": "Card", "table": "cards", "param": card.to_string() })
    );
    assert_eq!(first["caseId"], c.case.case_id);
    assert_eq!(first["user"]["id"], c.carol.id);
    assert_eq!(first["user"]["type"], "User");
    assert_eq!(first["sessionId"], "carol-tab");
    assert_eq!(first["position"], 1);
    assert!(first["createdAt"].is_string() && first["expiresAt"].is_string());

    let second = wait(&app, &mia, card).await;
    assert_eq!(second["position"], 2);

    // The same tab asking again keeps its place (200, the same waiter).
    let again = app.lock_expect(&carol, wait_body("Card", card), 200).await;
    assert_eq!(again.body["id"], first["id"]);
    assert_eq!(again.body["position"], 1);

    // Without `wait`, someone else's lock is still a 409.
    app.lock_error(&carol, lock_body("Card", card), 409, "lock_held")
        .await;
    // The holder asking with `wait` renews its lock (200).
    let renewed = app.lock_expect(&bob, wait_body("Card", card), 200).await;
    assert_eq!(renewed.body["type"], "Lock");
    assert_eq!(renewed.body["id"], held["id"]);

    let audit = app.audit(c.case.case_id).await;
    let queued: Vec<_> = audit.iter().filter(|e| e.0 == "queued").collect();
    assert_eq!(queued.len(), 2, "{audit:?}");
    // Joined while Bob's lock held it: that lock, Bob as holder, the waiter as actor.
    assert_eq!(queued[0].1, id(&held));
    assert_eq!(queued[0].2, Some(c.carol.id));
    assert_eq!(queued[0].3, c.bob.id);
    assert_eq!(queued[1].2, Some(c.mia.id));
}

async fn waiting_needs_a_tab_and_an_editor((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    app.lock(&c.bob.tab("bob-tab"), "Card", card).await;
    // The line is kept per tab: no X-Session-ID, no place.
    let refused = app
        .lock_error(&c.carol, wait_body("Card", card), 422, "invalid")
        .await;
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("X-Session-ID"), "{message}");
    // Even for a free record (a wait that finds it free would lock it).
    app.lock_error(
        &c.carol,
        wait_body("Edgenote", c.case.edgenote_id),
        422,
        "invalid",
    )
    .await;
    // Who may not lock hears that first, tab or not.
    app.lock_error(&c.rita, wait_body("Card", card), 403, "forbidden")
        .await;
    // A reader may not lock, so may not wait.
    app.lock_error(
        &c.rita.tab("rita-tab"),
        wait_body("Card", card),
        403,
        "forbidden",
    )
    .await;
    app.lock_error(
        &c.eve.tab("eve-tab"),
        wait_body("Card", card),
        403,
        "forbidden",
    )
    .await;
    // A free record is simply locked.
    let free = app
        .lock_expect(
            &c.carol.tab("carol-tab"),
            wait_body("Edgenote", c.case.edgenote_id),
            201,
        )
        .await;
    assert_eq!(free.body["type"], "Lock");
}

async fn the_line_is_in_the_case_the_welcome_and_the_status((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    app.lock(&c.bob.tab("bob-tab"), "Card", card).await;
    let carol = wait(&app, &c.carol.tab("carol-tab"), card).await;
    let mia = wait(&app, &c.mia.tab("mia-tab"), card).await;

    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    let waiters = case.body["waiters"].as_array().expect("waiters").clone();
    assert_eq!(waiters, vec![carol.clone(), mia.clone()]);

    let (_tab, welcome) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    assert_eq!(welcome["waiters"], json!([carol, mia]));

    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={card}"
        ))
        .by(&c.carol.tab("carol-tab"))
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "locked");
    assert_eq!(status.body["waiters"], json!([carol, mia]));
    // Another record's line is empty.
    let other = app
        .get(&format!(
            "/locks/status?lockableType=Page&lockableParam={}",
            c.case.page_id
        ))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(other.body["waiters"], json!([]));
}

async fn grants_go_in_join_order_with_the_frames_in_order((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let bob = c.bob.tab("bob-tab");
    let held = app.lock(&bob, "Card", card).await;
    watcher.next_change().await; // its create
                                 // Three tabs wait: Carol, Mia, and Carol again in a second tab.
    let tabs = [
        c.carol.tab("carol-1"),
        c.mia.tab("mia-1"),
        c.carol.tab("carol-2"),
    ];
    let mut waiters = Vec::new();
    for (i, tab) in tabs.iter().enumerate() {
        let waiter = wait(&app, tab, card).await;
        assert_eq!(waiter["position"], json!(i + 1));
        let joined = watcher.next_change().await;
        assert_eq!(joined["type"], "create", "{joined}");
        assert_eq!(joined["watchable"], waiter, "{joined}");
        waiters.push(waiter);
    }

    // Bob releases: Carol's first tab gets it; then each holder releases in turn.
    app.release(&bob, id(&held)).await;
    let mut lock = expect_hand_off(&mut watcher, &held, "released", &waiters[0]).await;
    assert_eq!(
        line_of(&app, &c).await,
        vec![id(&waiters[1]), id(&waiters[2])]
    );
    for (i, tab) in tabs.iter().enumerate().take(2) {
        // The holder's own lock, with a full lease, writable with its token.
        app.patch(&format!("/cards/{card}"))
            .by(tab)
            .header("Lock-Token", lock["token"].as_str().unwrap())
            .json(json!({ "card": { "content": format!("by waiter {i}") } }))
            .send()
            .await
            .expect(200);
        watcher.next_change().await; // the card's update
        app.release(tab, id(&lock)).await;
        lock = expect_hand_off(&mut watcher, &lock, "released", &waiters[i + 1]).await;
    }
    assert!(line_of(&app, &c).await.is_empty());
    // The last holder's release leaves the record free.
    app.release(&tabs[2], id(&lock)).await;
    let last = watcher.next_change().await;
    assert!(is_destroy_of(&last, "Lock", &lock["id"]), "{last}");
    app.lock(&c.bob.tab("bob-tab"), "Card", card).await;

    let audit = app.audit(c.case.case_id).await;
    let handed: Vec<_> = audit.iter().filter(|e| e.0 == "handed_off").collect();
    let holders: Vec<i64> = handed.iter().map(|e| e.3).collect();
    assert_eq!(holders, vec![c.carol.id, c.mia.id, c.carol.id], "{audit:?}");
    // Each hand-off's row follows the release of the lock before it.
    for (i, event) in audit.iter().enumerate() {
        if event.0 == "handed_off" {
            assert_eq!(audit[i - 1].0, "released", "{audit:?}");
        }
    }
}

/// Bob (no tab, so nothing renews his lease) holds the card and Carol's tab
/// (open, so her waiter is renewed) waits; returns the watcher, the lock and
/// the waiter.
async fn bob_holds_carol_waits(app: &TestApp, c: &Cast, bob: &TestUser) -> (Tab, Value, Value) {
    let card = c.case.card_id;
    let carol = c.carol.tab("carol-tab");
    let (watcher, _) = app.open_tab("c", &carol).await;
    let held = app.lock(bob, "Card", card).await;
    let waiter = wait(app, &carol, card).await;
    (watcher, held, waiter)
}

async fn an_expired_lock_is_handed_over(app: TestApp) {
    let c = app.cast().await;
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    let lock = expect_hand_off(&mut carol, &held, "expired", &waiter).await;
    // Carol's tab is open: pongs keep her new lock past its lease.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    app.get(&format!("/locks/{}", lock["id"]))
        .by(&c.carol)
        .send()
        .await
        .expect(200);
}

async fn an_idle_lock_is_handed_over(app: TestApp) {
    let c = app.cast().await;
    let bob = c.bob.tab("bob-tab");
    // Bob's tab is open: his lease is renewed, only idleness ends it.
    let (_bob_tab, _) = app.open_tab("c", &bob).await;
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &bob).await;
    expect_hand_off(&mut carol, &held, "idle", &waiter).await;
}

async fn a_closed_holders_lock_is_handed_over_after_the_grace(app: TestApp) {
    let c = app.cast().await;
    let bob = c.bob.tab("bob-tab");
    let (bob_tab, _) = app.open_tab("c", &bob).await;
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &bob).await;
    let closed = std::time::Instant::now();
    bob_tab.close();
    expect_hand_off(&mut carol, &held, "disconnected", &waiter).await;
    assert!(
        closed.elapsed() >= Duration::from_millis(400),
        "after the grace"
    );
}

async fn a_kicked_holders_lock_is_handed_over((app, c): (TestApp, Cast)) {
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    app.delete("/admin/sessions/bob-tab")
        .by(&c.root)
        .send()
        .await
        .expect(204);
    expect_hand_off(&mut carol, &held, "kicked", &waiter).await;
}

async fn a_broken_lock_is_handed_over((app, c): (TestApp, Cast)) {
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    // Mia (manager) breaks Bob's lock: not a takeover, so the line is served.
    app.delete(&format!("/locks/{}", held["id"]))
        .by(&c.mia.tab("mia-tab"))
        .send()
        .await
        .expect(204);
    expect_hand_off(&mut carol, &held, "overridden", &waiter).await;
}

async fn a_removed_users_lock_is_handed_over_and_their_waiters_leave((app, c): (TestApp, Cast)) {
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    // Bob also waits for the page Mia holds.
    let page_lock = app
        .lock(&c.mia.tab("mia-tab"), "Page", c.case.page_id)
        .await;
    let bobs_place = app
        .lock_expect(
            &c.bob.tab("bob-tab"),
            wait_body("Page", c.case.page_id),
            202,
        )
        .await
        .body;
    carol.next_change().await; // his waiter's create
    app.delete(&format!("/users/{}", c.bob.id))
        .by(&c.root)
        .send()
        .await
        .expect(204);
    let left = carol
        .next_where("Bob's waiter leaving", |f| {
            is_destroy_of(f, "Waiter", &bobs_place["id"])
        })
        .await;
    assert_eq!(left["watchable"]["reason"], "kicked");
    expect_hand_off(&mut carol, &held, "kicked", &waiter).await;
    // Mia's page lock is untouched, its line empty.
    app.get(&format!("/locks/{}", page_lock["id"]))
        .by(&c.mia)
        .send()
        .await
        .expect(200);
}

async fn a_takeover_skips_the_line_and_leaves_it_as_it_was((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    // Mia waits too, then takes it over: her own place ends, Carol's stays.
    let mia = c.mia.tab("mia-tab");
    let mias_place = wait(&app, &mia, card).await;
    carol
        .next_where("Mia's waiter's create", |f| {
            f["type"] == "create" && f["watchable"]["id"] == mias_place["id"]
        })
        .await;
    let taken = app
        .lock_expect(&mia, json!({ "lock": { "lockableType": "Card", "lockableParam": card, "takeover": true, "wait": true } }), 201)
        .await
        .body;
    let old = carol.next_change().await;
    assert!(is_destroy_of(&old, "Lock", &held["id"]), "{old}");
    assert_eq!(old["watchable"]["reason"], "overridden");
    let created = carol.next_change().await;
    assert_eq!(created["type"], "create", "no hand-off: {created}");
    assert_eq!(created["watchable"]["id"], taken["id"]);
    let left = carol.next_change().await;
    assert!(is_destroy_of(&left, "Waiter", &mias_place["id"]), "{left}");
    assert_eq!(left["watchable"]["reason"], "left");
    assert_eq!(line_of(&app, &c).await, vec![id(&waiter)]);

    // When Mia is done, Carol — still first in line — gets it.
    app.release(&mia, id(&taken)).await;
    expect_hand_off(&mut carol, &taken, "released", &waiter).await;

    let audit = app.audit(c.case.case_id).await;
    let actions: Vec<&str> = audit.iter().map(|e| e.0.as_str()).collect();
    let from_takeover = actions.iter().position(|a| *a == "overridden").unwrap();
    assert_eq!(actions[from_takeover + 1], "acquired", "{actions:?}");
    assert_eq!(*actions.last().unwrap(), "handed_off", "{actions:?}");
}

async fn a_waiter_whose_tab_closes_leaves_after_the_grace_and_is_skipped(app: TestApp) {
    let c = app.cast().await;
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let bob = c.bob.tab("bob-tab");
    let held = app.lock(&bob, "Card", card).await;
    let carol = c.carol.tab("carol-tab");
    let (carol_tab, _) = app.open_tab("c", &carol).await;
    let carols_place = wait(&app, &carol, card).await;
    let mia = c.mia.tab("mia-tab");
    let (_mia_tab, _) = app.open_tab("c", &mia).await;
    let mias_place = wait(&app, &mia, card).await;

    carol_tab.close();
    let left = watcher
        .next_where("Carol's waiter leaving", |f| {
            is_destroy_of(f, "Waiter", &carols_place["id"])
        })
        .await;
    assert_eq!(left["watchable"]["reason"], "disconnected");
    assert_eq!(line_of(&app, &c).await, vec![id(&mias_place)]);

    app.release(&bob, id(&held)).await;
    expect_hand_off(&mut watcher, &held, "released", &mias_place).await;
}

async fn an_expired_waiter_is_skipped(app: TestApp) {
    let c = app.cast().await;
    let card = c.case.card_id;
    let bob = c.bob.tab("bob-tab");
    let (mut bob_tab, _) = app.open_tab("c", &bob).await;
    let held = app.lock(&bob, "Card", card).await;
    // Carol waits from a tab without a channel: nothing renews her place.
    let carols_place = wait(&app, &c.carol.tab("carol-tab"), card).await;
    let mia = c.mia.tab("mia-tab");
    let (_mia_tab, _) = app.open_tab("c", &mia).await;
    let mias_place = wait(&app, &mia, card).await;
    let gone = bob_tab
        .next_where("Carol's waiter expiring", |f| {
            is_destroy_of(f, "Waiter", &carols_place["id"])
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "expired");
    app.release(&bob, id(&held)).await;
    expect_hand_off(&mut bob_tab, &held, "released", &mias_place).await;
}

async fn a_waiter_leaves_the_line((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let bob = c.bob.tab("bob-tab");
    let held = app.lock(&bob, "Card", card).await;
    let carol = c.carol.tab("carol-tab");
    let carols_place = wait(&app, &carol, card).await;
    let mia = c.mia.tab("mia-tab");
    let mias_place = wait(&app, &mia, card).await;
    for _ in 0..3 {
        watcher.next_change().await; // the lock's and the waiters' creates
    }

    // Only its own user may take a place out of the line.
    let path = format!("/waiters/{}", carols_place["id"]);
    app.delete(&path)
        .by(&mia)
        .send()
        .await
        .expect_error(403, "forbidden");
    // Someone outside the case is not told whose place it is.
    let refused = app
        .delete(&path)
        .by(&c.eve)
        .send()
        .await
        .expect_error(403, "forbidden");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(!message.contains("Carol"), "{message}");
    app.delete(&path).by(&carol).send().await.expect(204);
    let left = watcher.next_change().await;
    assert!(
        is_destroy_of(&left, "Waiter", &carols_place["id"]),
        "{left}"
    );
    assert_eq!(left["watchable"]["reason"], "left");
    assert_eq!(left["editorSessionId"], "carol-tab");
    app.delete(&path)
        .by(&carol)
        .send()
        .await
        .expect_error(404, "not_found");
    // Mia moves up.
    assert_eq!(line_of(&app, &c).await, vec![id(&mias_place)]);

    // Leaving the page (every lock and place of the tab) leaves lines too.
    app.delete("/locks?session=mine")
        .by(&mia)
        .send()
        .await
        .expect(204);
    let left = watcher.next_change().await;
    assert!(is_destroy_of(&left, "Waiter", &mias_place["id"]), "{left}");
    assert!(line_of(&app, &c).await.is_empty());
    // Nobody waits now: Bob's release frees the record.
    app.release(&bob, id(&held)).await;
    app.lock(&c.carol.tab("carol-tab"), "Card", card).await;
}

async fn a_waiter_refreshes_its_place((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    app.lock(&c.bob.tab("bob-tab"), "Card", card).await;
    let carol = c.carol.tab("carol-tab");
    let place = wait(&app, &carol, card).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let path = format!("/waiters/{}/refresh", place["id"]);
    let refreshed = app.post(&path).by(&carol).send().await.expect(200);
    assert_eq!(refreshed.body["id"], place["id"]);
    let at = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap();
    assert!(
        at(&refreshed.body["expiresAt"]) > at(&place["expiresAt"]),
        "{} after {}",
        refreshed.body,
        place
    );
    // Another tab of Carol's, or someone else, may not.
    app.post(&path)
        .by(&c.carol.tab("carol-2"))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post(&path)
        .by(&c.mia.tab("mia-tab"))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/waiters/999999/refresh")
        .by(&carol)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn deleting_the_record_empties_its_line((app, c): (TestApp, Cast)) {
    let card = c.case.card_id;
    let (mut watcher, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    let bob = c.bob.tab("bob-tab");
    let held = app.lock(&bob, "Card", card).await;
    let place = wait(&app, &c.carol.tab("carol-tab"), card).await;
    for _ in 0..2 {
        watcher.next_change().await; // the lock's and the waiter's creates
    }
    app.delete(&format!("/cards/{card}"))
        .by(&bob)
        .header("Lock-Token", held["token"].as_str().unwrap())
        .send()
        .await
        .expect(204);
    let old = watcher.next_change().await;
    assert!(is_destroy_of(&old, "Lock", &held["id"]), "{old}");
    let left = watcher.next_change().await;
    assert!(is_destroy_of(&left, "Waiter", &place["id"]), "{left}");
    assert_eq!(left["watchable"]["reason"], "left");
    let gone = watcher.next_change().await;
    assert_eq!(
        gone["watchable"]["type"], "Card",
        "no lock for Carol: {gone}"
    );
    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    assert_eq!(case.body["waiters"], json!([]));
    assert_eq!(case.body["activeLocks"], json!([]));
}

/// Short leases, and a reaper that does not come by during the test: a lock
/// past its lease is found overdue by the request that meets it.
fn lifetimes_without_reaper(s: &mut baton::config::Settings) {
    lifetimes(s);
    s.reaper_interval = Duration::from_secs(600);
}

/// Bob's lock (no tab renews it) is past its lease, not yet reaped, and
/// Carol waits. Mia's "Edit anyway" skips the line: Carol is not handed the
/// record only to be overridden at once; she keeps her place.
async fn a_takeover_of_an_overdue_lock_skips_the_line_too(app: TestApp) {
    let c = app.cast().await;
    let card = c.case.card_id;
    let (mut carol, held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mia = c.mia.tab("mia-tab");
    let taken = app
        .lock_expect(&mia, common::takeover_body("Card", card), 201)
        .await
        .body;
    assert_eq!(taken["user"]["name"], "Mia", "{taken}");
    let old = carol
        .next_where("Bob's lock's destroy", |f| {
            is_destroy_of(f, "Lock", &held["id"])
        })
        .await;
    assert_eq!(old["watchable"]["reason"], "expired");
    let created = carol.next_change().await;
    assert_eq!(created["type"], "create", "{created}");
    assert_eq!(
        created["watchable"]["id"], taken["id"],
        "no hand-off: {created}"
    );
    assert_eq!(line_of(&app, &c).await, vec![id(&waiter)]);

    app.release(&mia, id(&taken)).await;
    expect_hand_off(&mut carol, &taken, "released", &waiter).await;
}

/// A page is deleted while a card on it has an overdue lock with a line:
/// the lock ends with its line, and nobody is handed a card that is going.
async fn deleting_a_page_ends_the_line_of_an_overdue_card_lock(app: TestApp) {
    let c = app.cast().await;
    let (mut carol, _held, waiter) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    app.delete(&format!("/pages/{}", c.case.page_id))
        .by(&c.mia.tab("mia-tab"))
        .send()
        .await
        .expect(204);
    let left = carol
        .next_where("Carol's waiter's destroy", |f| {
            is_destroy_of(f, "Waiter", &waiter["id"])
        })
        .await;
    assert_eq!(left["watchable"]["reason"], "left", "{left}");
    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    assert_eq!(case.body["activeLocks"], json!([]), "{}", case.body);
    assert_eq!(case.body["waiters"], json!([]), "{}", case.body);
}

/// Session ids are not secret (every lock and waiter shows its tab's). A tab
/// is a user and a session id: Mia sending Carol's session id waits in a
/// place of her own, and Carol's stays hers.
async fn another_users_tab_with_the_same_session_id_waits_in_its_own_place(
    (app, c): (TestApp, Cast),
) {
    let card = c.case.card_id;
    let (_carol_tab, _held, carols) = bob_holds_carol_waits(&app, &c, &c.bob.tab("bob-tab")).await;
    let mias = app
        .lock_expect(&c.mia.tab("carol-tab"), wait_body("Card", card), 202)
        .await
        .body;
    assert_ne!(mias["id"], carols["id"]);
    assert_eq!(mias["user"]["name"], "Mia", "{mias}");
    assert_eq!(line_of(&app, &c).await, vec![id(&carols), id(&mias)]);
    let again = app
        .lock_expect(&c.carol.tab("carol-tab"), wait_body("Card", card), 200)
        .await
        .body;
    assert_eq!(again["id"], carols["id"]);
    assert_eq!(again["user"]["name"], "Carol", "{again}");
}
