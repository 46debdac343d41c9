//! Mutual exclusion under contention over real HTTP, on SQLite and
//! PostgreSQL: many clients race for few records; no two holders of a record
//! ever overlap, no token is reused, and nothing answers 500. Clients that
//! wait in line are served one at a time, once each, in join order, and a
//! released record goes to its waiter before anyone racing for it. (Deep
//! locks racing locks inside them: `tests/subtree.rs`.)

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::models::Role;
use common::line::{wait_body, LineHistory};
use common::storm::Storm;
use common::{lock_body, takeover_body, Backend, Fixture, TestApp, TestUser};
use reqwest::Method;
use serde_json::{json, Value};

on_both_backends!(|backend| TestApp::start_with(backend, |s| s.database.db_pool_size = 16) =>
    racing_clients_never_share_a_record,
    concurrent_takeovers_leave_one_lock,
);
on_both_backends!(|backend| LineRace::start(backend, "crosswise") =>
    tabs_waiting_crosswise_leave_everything_at_once,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s| s.database.db_pool_size = 16) =>
    waiting_clients_take_turns_once_each_in_join_order,
    a_released_record_goes_to_its_waiter_before_any_racer,
);
on_both_backends!(|backend| LineRace::start(backend, "leaving") =>
    a_waiter_leaving_as_it_is_granted_is_told_which_happened,
);
on_both_backends!(|backend| LineRace::start(backend, "refreshing") =>
    a_waiter_refreshing_as_it_is_granted_is_told_which_happened,
);

async fn racing_clients_never_share_a_record(app: TestApp) {
    let storm = Storm::seed(&app, "race", 3).await;
    storm.run(Arc::new(app)).await;
}

async fn concurrent_takeovers_leave_one_lock(app: TestApp) {
    let app = Arc::new(app);
    let mut users = Vec::new();
    for i in 0..8 {
        users.push(app.user(&format!("taker{i}")).await);
    }
    let members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    let f = app.case("takeovers", &members).await;

    for round in 0..5 {
        app.post("/locks")
            .by(&users[0].tab(&format!("first-{round}")))
            .json(lock_body("Card", f.card_id))
            .send()
            .await;
        let mut tasks = Vec::new();
        for (i, user) in users.iter().enumerate() {
            let (app, me) = (app.clone(), user.tab(&format!("r{round}-t{i}")));
            tasks.push(actix_web::rt::spawn(async move {
                app.post("/locks")
                    .by(&me)
                    .json(takeover_body("Card", f.card_id))
                    .send()
                    .await
                    .status
            }));
        }
        let mut granted = 0;
        for task in tasks {
            match task.await.unwrap() {
                201 | 200 => granted += 1,
                409 => {}
                other => panic!("takeover answered {other}"),
            }
        }
        assert!(granted >= 1);
        let locks = app
            .get(&format!("/locks?case={}", f.slug))
            .by(&users[0])
            .send()
            .await
            .expect(200);
        let locks = locks.body.as_array().unwrap();
        assert_eq!(
            locks.len(),
            1,
            "exactly one lock after concurrent takeovers: {locks:?}"
        );
        // Clear for the next round.
        let holder = users
            .iter()
            .find(|u| u.id == locks[0]["user"]["id"])
            .unwrap();
        let tab = holder.tab(locks[0]["sessionId"].as_str().unwrap());
        app.delete(&format!("/locks/{}", locks[0]["id"]))
            .by(&tab)
            .send()
            .await
            .expect(204);
    }
}

/// Clients that wait in line, each in its own tab with its edits channel
/// open, several tabs per user.
const WAITING_CLIENTS: usize = 12;
/// How many times each of them holds a record.
const HOLDINGS_PER_CLIENT: usize = 5;

/// Many tabs ask for the same two cards with `wait: true`, hold what they
/// get briefly (with a guarded write) and release it. A tab that joined a
/// line learns of its grant on its own channel; now and then one gives up
/// waiting (`DELETE /waiters/:id`) as its grant may be coming: 204 and
/// `left`, or 404 because it holds the record already. Never two holders at
/// once (the clients' own bookkeeping and a watching tab's frames), each
/// waiter ends once (granted, or left), grants in join order, and no 5xx.
async fn waiting_clients_take_turns_once_each_in_join_order(app: TestApp) {
    let backend = app.backend;
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("waiter{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    members.push((&mia, Role::Manager));
    let f = app.case("line", &members).await;
    let cards = Arc::new(vec![f.card_id, app.card(&f, "second card").await]);
    let (mut watcher, _) = app.open_tab(&f.slug, &mia.tab("watcher")).await;

    // The lock each card is held by now, as its holder knows it (0: free).
    let holders: Arc<Vec<AtomicI64>> = Arc::new(cards.iter().map(|_| AtomicI64::new(0)).collect());
    let started = Instant::now();
    let mut clients = Vec::new();
    for client in 0..WAITING_CLIENTS {
        let me = users[client % users.len()].tab(&format!("waiting-tab-{client}"));
        let (app, holders, cards, slug) =
            (app.clone(), holders.clone(), cards.clone(), f.slug.clone());
        clients.push(actix_web::rt::spawn(async move {
            let (mut tab, _) = app.open_tab(&slug, &me).await;
            // (card, waiter) for every line this tab joined; locks it held.
            let mut joined: Vec<(i64, i64)> = Vec::new();
            let mut held: Vec<i64> = Vec::new();
            // Waiters this tab took out of their line (204).
            let mut left: Vec<i64> = Vec::new();
            let mut retries = 0;
            for round in 0..HOLDINGS_PER_CLIENT {
                let slot = (client + round) % cards.len();
                let card = cards[slot];
                let lock_id = loop {
                    let asked = app
                        .post("/locks")
                        .by(&me)
                        .json(wait_body("Card", card))
                        .send()
                        .await;
                    match asked.status {
                        201 => {
                            assert_eq!(asked.body["type"], "Lock", "{}", asked.body);
                            assert_eq!(asked.body["sessionId"], me.session.as_deref().unwrap());
                            break Some(common::id(&asked.body));
                        }
                        202 => {
                            let waiter = asked.body;
                            assert_eq!(waiter["type"], "Waiter", "{waiter}");
                            assert_eq!(waiter["sessionId"], me.session.as_deref().unwrap());
                            assert!(waiter["position"].as_i64().is_some_and(|p| p >= 1), "{waiter}");
                            let waiter_id = common::id(&waiter);
                            joined.push((card, waiter_id));
                            if (client + round) % 4 == 3 {
                                // This tab gives up waiting, racing its grant.
                                actix_web::rt::time::sleep(Duration::from_millis((client % 3) as u64)).await;
                                let gone = app.delete(&format!("/waiters/{waiter_id}")).by(&me).send().await;
                                match gone.status {
                                    204 => match tab.await_waiter_end(&waiter).await {
                                        Err(end) => {
                                            assert_eq!(end["watchable"]["reason"], "left", "{end}");
                                            left.push(waiter_id);
                                            break None;
                                        }
                                        Ok(grant) => panic!("waiter {waiter_id} left (204) but was granted: {grant:?}"),
                                    },
                                    // Granted meanwhile: the record is this tab's now.
                                    404 => {}
                                    other => panic!("DELETE /waiters/{waiter_id} answered {other}: {}", gone.body),
                                }
                            }
                            let grant = tab.await_grant(&waiter).await;
                            grant.assert_hand_off(&waiter, "released");
                            break Some(grant.lock_id());
                        }
                        // "Changed hands several times while you asked": the
                        // documented answer to retry.
                        409 if asked.body["error"]["code"] == "conflict" => retries += 1,
                        other => panic!("POST /locks with wait answered {other}: {}", asked.body),
                    }
                };
                let Some(lock_id) = lock_id else {
                    continue;
                };
                if let Err(other) = holders[slot].compare_exchange(0, lock_id, Ordering::SeqCst, Ordering::SeqCst) {
                    panic!("card {card} granted to lock {lock_id} (tab {client}) while lock {other} held it");
                }
                held.push(lock_id);
                // The server agrees this tab holds it: a guarded write passes.
                app.patch(&format!("/cards/{card}"))
                    .by(&me)
                    .header("Lock-Token", lock_id.to_string())
                    .json(json!({ "card": { "content": format!("written under lock {lock_id}") } }))
                    .send()
                    .await
                    .expect(200);
                actix_web::rt::time::sleep(Duration::from_millis(2 + (client % 4) as u64)).await;
                assert_eq!(
                    holders[slot].swap(0, Ordering::SeqCst),
                    lock_id,
                    "card {card}: the holder changed under lock {lock_id}"
                );
                app.delete(&format!("/locks/{lock_id}")).by(&me).send().await.expect(204);
            }
            tab.close();
            (joined, held, left, retries)
        }));
    }
    let mut joined: Vec<(i64, i64)> = Vec::new();
    let mut held: Vec<i64> = Vec::new();
    let mut left: HashSet<i64> = HashSet::new();
    let mut retries = 0;
    for client in clients {
        let (j, h, l, r) = client.await.expect("client panicked");
        joined.extend(j);
        held.extend(h);
        left.extend(l);
        retries += r;
    }
    let took = started.elapsed();
    assert_eq!(
        held.len() + left.len(),
        WAITING_CLIENTS * HOLDINGS_PER_CLIENT
    );
    let unique: HashSet<_> = held.iter().collect();
    assert_eq!(unique.len(), held.len(), "a lock id was handed out twice");
    assert!(
        joined.len() >= WAITING_CLIENTS,
        "too little contention to test the line: only {} waiters",
        joined.len()
    );
    eprintln!(
        "{backend:?}: {} holdings, {} waiters ({} left before their grant), \
         {retries} conflict retries, in {took:?}",
        held.len(),
        joined.len(),
        left.len()
    );

    // The watcher's view: every lock created and destroyed, every waiter
    // created and destroyed.
    let mut frames = Vec::new();
    let (mut creates, mut destroys, mut waiter_ends) = (0, 0, 0);
    while creates < held.len() || destroys < held.len() || waiter_ends < joined.len() {
        let frame = watcher.next_change().await;
        match (frame["type"].as_str(), frame["watchable"]["type"].as_str()) {
            (Some("create"), Some("Lock")) => creates += 1,
            (Some("destroy"), Some("Lock")) => destroys += 1,
            (Some("destroy"), Some("Waiter")) => waiter_ends += 1,
            _ => {}
        }
        frames.push(frame);
    }
    let history = LineHistory::check(&frames);
    history.assert_join_order();
    let mut seen_locks = history.locks.clone();
    seen_locks.sort_unstable();
    let mut held_sorted = held.clone();
    held_sorted.sort_unstable();
    assert_eq!(
        seen_locks, held_sorted,
        "the watcher saw other locks than the clients held"
    );
    // Every waiter was granted once, except those whose tab left the line
    // (204): they ended `left`, and were never granted.
    let mut expected: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (card, waiter) in joined.iter().filter(|(_, w)| !left.contains(w)) {
        expected
            .entry(format!("Card/{card}"))
            .or_default()
            .push(*waiter);
    }
    for ids in expected.values_mut() {
        ids.sort_unstable();
    }
    assert_eq!(
        history.joined.values().map(Vec::len).sum::<usize>(),
        joined.len()
    );
    for (card, waiter) in &joined {
        let want = if left.contains(waiter) {
            "left"
        } else {
            "granted"
        };
        assert_eq!(
            history.ended.get(waiter).map(String::as_str),
            Some(want),
            "how waiter {waiter} on card {card} ended"
        );
    }
    assert_eq!(
        history.granted, expected,
        "grants per card, in the order given"
    );

    // The audit trail agrees: per card, a lock starts (acquired or
    // handed_off) only when none is held, and one hand-off per granted waiter.
    let events = app
        .get(&format!("/cases/{}/lock_events?limit=1000", f.slug))
        .by(&mia)
        .send()
        .await
        .expect(200);
    let mut events: Vec<Value> = events.body.as_array().unwrap().clone();
    events.reverse();
    let mut open: BTreeMap<String, i64> = BTreeMap::new();
    let mut handed_off = 0;
    for event in &events {
        let record = event["lockable"]["param"].as_str().unwrap().to_owned();
        let lock = event["lockId"].as_i64().unwrap();
        match event["action"].as_str().unwrap() {
            action @ ("acquired" | "handed_off") => {
                handed_off += usize::from(action == "handed_off");
                assert_eq!(
                    open.insert(record.clone(), lock),
                    None,
                    "card {record}: lock {lock} {action} while another was held"
                );
            }
            "queued" => assert_eq!(
                open.get(&record),
                Some(&lock),
                "queued behind a lock not held"
            ),
            "released" => assert_eq!(
                open.remove(&record),
                Some(lock),
                "release of a lock not held"
            ),
            other => panic!("unexpected audit action {other}: {event}"),
        }
    }
    assert!(open.is_empty(), "locks left open: {open:?}");
    assert_eq!(
        handed_off,
        joined.len() - left.len(),
        "one hand-off per granted waiter"
    );
}

/// Rounds of the atomic hand-off check.
const HAND_OFF_ROUNDS: usize = 30;
/// Tabs racing (without waiting) for the record as it is released.
const RACERS: usize = 6;

/// A holder with one waiter releases while other tabs race for the record
/// with plain `POST /locks`: none of them ever gets it; the lock after the
/// release is the waiter's, and the audit trail says `released` then
/// `handed_off`, never an `acquired` by a racer in between. Many rounds, the
/// lock ending in turn by `DELETE /locks/:id`, by `DELETE /locks?session=mine`
/// and by a manager breaking it (`overridden`: a break hands off too).
async fn a_released_record_goes_to_its_waiter_before_any_racer(app: TestApp) {
    let backend = app.backend;
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let hal = app.user("Hal").await.tab("holding");
    let wes = app.user("Wes").await.tab("waiting");
    let mut racers = Vec::new();
    for i in 0..3 {
        racers.push(app.user(&format!("racer{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = racers.iter().map(|u| (u, Role::Editor)).collect();
    members.extend([
        (&mia, Role::Manager),
        (&hal, Role::Editor),
        (&wes, Role::Editor),
    ]);
    let f = app.case("handoff", &members).await;
    let card = f.card_id;
    let (mut wes_tab, _) = app.open_tab(&f.slug, &wes).await;
    let breaker = mia.tab("breaker");

    let started = Instant::now();
    let mut expected = Vec::new();
    let mut refusals = 0;
    for round in 0..HAND_OFF_ROUNDS {
        let held = app.lock(&hal, "Card", card).await;
        let held_id = common::id(&held);
        let waiter = app
            .lock_expect(&wes, wait_body("Card", card), 202)
            .await
            .body;
        assert_eq!(waiter["position"], 1, "{waiter}");

        let stop = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(Mutex::new(Vec::<Value>::new()));
        let mut tasks = Vec::new();
        for r in 0..RACERS {
            let me = racers[r % racers.len()].tab(&format!("racer-{r}"));
            let (app, stop, asked, taken) =
                (app.clone(), stop.clone(), asked.clone(), taken.clone());
            tasks.push(actix_web::rt::spawn(async move {
                let mut holders_seen = Vec::new();
                let mut first = true;
                loop {
                    let got = app
                        .post("/locks")
                        .by(&me)
                        .json(lock_body("Card", card))
                        .send()
                        .await;
                    if first {
                        asked.fetch_add(1, Ordering::SeqCst);
                        first = false;
                    }
                    match got.status {
                        409 => {
                            assert_eq!(got.body["error"]["code"], "lock_held", "{}", got.body);
                            holders_seen.push(got.body["error"]["lock"]["sessionId"].clone());
                        }
                        201 | 200 => {
                            // Give it back at once, so the round can end and report.
                            taken.lock().unwrap().push(got.body.clone());
                            app.delete(&format!("/locks/{}", got.body["id"]))
                                .by(&me)
                                .send()
                                .await;
                        }
                        other => panic!("racer's POST /locks answered {other}: {}", got.body),
                    }
                    if stop.load(Ordering::SeqCst) {
                        return holders_seen;
                    }
                    actix_web::rt::task::yield_now().await;
                }
            }));
        }
        // Release while every racer is racing.
        while asked.load(Ordering::SeqCst) < RACERS {
            actix_web::rt::time::sleep(Duration::from_millis(1)).await;
        }
        // The lock ends each way a hand-off follows from a request.
        let ending = match round % 3 {
            0 => {
                app.release(&hal, held_id).await;
                "released"
            }
            1 => {
                app.delete("/locks?session=mine")
                    .by(&hal)
                    .send()
                    .await
                    .expect(204);
                "released"
            }
            _ => {
                app.delete(&format!("/locks/{held_id}"))
                    .by(&breaker)
                    .send()
                    .await
                    .expect(204);
                "overridden"
            }
        };
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
        stop.store(true, Ordering::SeqCst);
        let mut refused_for = Vec::new();
        for task in tasks {
            refused_for.extend(task.await.expect("racer panicked"));
        }
        let taken = taken.lock().unwrap().clone();
        assert!(
            taken.is_empty(),
            "round {round}: racers got the record that waiter {} was in line for: {taken:?}",
            waiter["id"]
        );
        for holder in &refused_for {
            assert!(
                holder == "holding" || holder == "waiting",
                "round {round}: a racer was refused for a lock of tab {holder}"
            );
        }
        refusals += refused_for.len();

        let grant = wes_tab.await_grant(&waiter).await;
        grant.assert_hand_off(&waiter, ending);
        if ending == "overridden" {
            for frame in [&grant.ended, &grant.granted, &grant.created] {
                assert_eq!(frame["editorSessionId"], "breaker", "{frame}");
            }
        }
        let granted_id = grant.lock_id();
        let status = app
            .get(&format!(
                "/locks/status?lockableType=Card&lockableParam={card}"
            ))
            .by(&wes)
            .send()
            .await
            .expect(200);
        assert_eq!(status.body["state"], "owned", "{}", status.body);
        assert_eq!(status.body["lock"]["id"], granted_id);
        app.release(&wes, granted_id).await;
        expected.extend([
            ("acquired", held_id, hal.id),
            ("queued", held_id, hal.id),
            (ending, held_id, hal.id),
            ("handed_off", granted_id, wes.id),
            ("released", granted_id, wes.id),
        ]);
    }
    eprintln!(
        "{backend:?}: {HAND_OFF_ROUNDS} hand-offs raced by {RACERS} tabs ({refusals} refusals) in {:?}",
        started.elapsed()
    );

    let events = app
        .get(&format!("/cases/{}/lock_events?limit=1000", f.slug))
        .by(&mia)
        .send()
        .await
        .expect(200);
    let mut events: Vec<Value> = events.body.as_array().unwrap().clone();
    events.reverse();
    let trail: Vec<(&str, i64, i64)> = events
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["lockId"].as_i64().unwrap(),
                e["holder"]["id"].as_i64().unwrap(),
            )
        })
        .collect();
    for (round, (got, want)) in trail.chunks(5).zip(expected.chunks(5)).enumerate() {
        assert_eq!(
            got, want,
            "audit trail of round {round} (action, lock, holder)"
        );
    }
    assert_eq!(trail.len(), expected.len(), "audit trail: {trail:?}");
    for event in events.iter().filter(|e| e["action"] == "queued") {
        assert_eq!(
            event["actor"]["id"], wes.id,
            "queued is the waiter's act: {event}"
        );
    }
}

/// Rounds of the leave-or-grant race.
const LEAVE_ROUNDS: usize = 40;

/// The leave-or-grant races: Hal holds the case's card, Wes's tab waits for
/// it, and Mia (manager) watches.
struct LineRace {
    app: TestApp,
    mia: TestUser,
    hal: TestUser,
    wes: TestUser,
    f: Fixture,
}

impl LineRace {
    async fn start(backend: Backend, slug: &str) -> Option<LineRace> {
        let app = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await?;
        let mia = app.user("Mia").await;
        let hal = app.user("Hal").await.tab("holding");
        let wes = app.user("Wes").await.tab("waiting");
        let f = app
            .case(
                slug,
                &[
                    (&mia, Role::Manager),
                    (&hal, Role::Editor),
                    (&wes, Role::Editor),
                ],
            )
            .await;
        Some(LineRace {
            app,
            mia,
            hal,
            wes,
            f,
        })
    }

    /// One round: Hal locks, Wes waits, then Hal releases while Wes's tab
    /// sends `request` to its waiter (`/waiters/:id…`), a little later each
    /// round. Returns the waiter's id and the answer to `request`.
    async fn round(&self, round: usize, method: Method, path: &str) -> (i64, common::Resp) {
        let held = common::id(&self.app.lock(&self.hal, "Card", self.f.card_id).await);
        let waiter = self
            .app
            .lock_expect(&self.wes, wait_body("Card", self.f.card_id), 202)
            .await
            .body;
        let waiter_id = common::id(&waiter);
        let release = async {
            self.app
                .delete(&format!("/locks/{held}"))
                .by(&self.hal)
                .send()
                .await
                .expect(204)
        };
        let request = async {
            actix_web::rt::time::sleep(Duration::from_micros(500 * (round % 4) as u64)).await;
            self.app
                .req(method, &path.replace(":id", &waiter_id.to_string()))
                .by(&self.wes)
                .send()
                .await
        };
        let (_, answer) = futures_util::future::join(release, request).await;
        (waiter_id, answer)
    }

    /// What `GET /locks/status` says of the card, for Wes.
    async fn status(&self) -> Value {
        let path = format!(
            "/locks/status?lockableType=Card&lockableParam={}",
            self.f.card_id
        );
        self.app
            .get(&path)
            .by(&self.wes)
            .send()
            .await
            .expect(200)
            .body
    }
}

/// A waiter's tab leaves the line (`DELETE /waiters/:id`) just as the holder
/// releases. Either the leave comes first — 204, its waiter ends `left`, and
/// the record is free — or the grant does — the waiter is gone, so 404, and
/// the tab holds the record. Never 204 for a waiter that was granted: its
/// tab would believe it left while it holds the record, kept alive by its
/// channel's pongs, and nobody else could have it.
async fn a_waiter_leaving_as_it_is_granted_is_told_which_happened(race: LineRace) {
    let backend = race.app.backend;
    let (mut left, mut granted) = (0, 0);
    for round in 0..LEAVE_ROUNDS {
        let (waiter_id, leave) = race.round(round, Method::DELETE, "/waiters/:id").await;
        let status = race.status().await;
        match leave.status {
            204 => {
                left += 1;
                assert_eq!(
                    status["state"], "unlocked",
                    "round {round}: DELETE /waiters/{waiter_id} answered 204 (left the line), \
                     yet the record was handed to that waiter's tab: {status}"
                );
            }
            404 => {
                granted += 1;
                assert_eq!(
                    status["state"], "owned",
                    "round {round}: DELETE /waiters/{waiter_id} answered 404 (no longer in \
                     line), yet the tab does not hold the record: {status}"
                );
            }
            other => panic!(
                "DELETE /waiters/{waiter_id} answered {other}: {}",
                leave.body
            ),
        }
        if status["state"] == "owned" {
            race.app
                .release(&race.wes, common::id(&status["lock"]))
                .await;
        }
    }
    eprintln!("{backend:?}: {left} left first, {granted} granted first");

    // The audit trail agrees with the answers: one hand-off per 404.
    let events = race
        .app
        .get(&format!("/cases/{}/lock_events?limit=1000", race.f.slug))
        .by(&race.mia)
        .send()
        .await
        .expect(200);
    let handed_off = events
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "handed_off")
        .count();
    assert_eq!(handed_off, granted, "hand-offs in the audit trail");
}

/// A waiter's tab refreshes its place (`POST /waiters/:id/refresh`) just as
/// the holder releases. Either the refresh comes first — 200, and the
/// waiter's `update` reaches the watchers before its grant — or the grant
/// does — 404. Never a 200 and an `update` for a waiter already granted.
async fn a_waiter_refreshing_as_it_is_granted_is_told_which_happened(race: LineRace) {
    let backend = race.app.backend;
    let (mut watcher, _) = race
        .app
        .open_tab(&race.f.slug, &race.mia.tab("watcher"))
        .await;
    let (mut refreshed, mut gone) = (Vec::new(), Vec::new());
    for round in 0..LEAVE_ROUNDS {
        let (waiter_id, refresh) = race
            .round(round, Method::POST, "/waiters/:id/refresh")
            .await;
        match refresh.status {
            200 => {
                assert_eq!(refresh.body["id"], waiter_id, "{}", refresh.body);
                refreshed.push(waiter_id);
            }
            404 => gone.push(waiter_id),
            other => panic!(
                "POST /waiters/{waiter_id}/refresh answered {other}: {}",
                refresh.body
            ),
        }
        // Either way the record is the waiter's now.
        let status = race.status().await;
        assert_eq!(status["state"], "owned", "round {round}: {status}");
        race.app
            .release(&race.wes, common::id(&status["lock"]))
            .await;
    }
    eprintln!(
        "{backend:?}: {} refreshed before their grant, {} after (404)",
        refreshed.len(),
        gone.len()
    );

    let mut frames = Vec::new();
    let mut destroys = 0;
    while destroys < 2 * LEAVE_ROUNDS {
        let frame = watcher.next_change().await;
        if frame["type"] == "destroy" && frame["watchable"]["type"] == "Lock" {
            destroys += 1;
        }
        frames.push(frame);
    }
    let history = LineHistory::check(&frames);
    assert_eq!(
        history.refreshed, refreshed,
        "waiters whose refresh answered 200, as updates the watcher saw"
    );
}

/// Rounds of the crosswise leave.
const CROSSWISE_ROUNDS: usize = 30;

/// Hal holds card 1 and waits for card 2; Wes holds card 2 and waits for
/// card 1. Both tabs close at once (`DELETE /locks?session=mine`): each
/// release hands a record to the other tab's place, which that tab is
/// leaving. On PostgreSQL the two transactions take the same rows in
/// opposite orders; whichever way it goes, both answer 204 and nothing is
/// left held or waiting.
async fn tabs_waiting_crosswise_leave_everything_at_once(race: LineRace) {
    let (app, hal, wes) = (&race.app, &race.hal, &race.wes);
    let (one, two) = (race.f.card_id, app.card(&race.f, "the second card").await);
    for round in 0..CROSSWISE_ROUNDS {
        app.lock(hal, "Card", one).await;
        app.lock(wes, "Card", two).await;
        app.lock_expect(hal, wait_body("Card", two), 202).await;
        app.lock_expect(wes, wait_body("Card", one), 202).await;
        let leave = |who: &TestUser| app.delete("/locks?session=mine").by(who).send();
        let (by_hal, by_wes) = futures_util::future::join(leave(hal), leave(wes)).await;
        for (name, answer) in [("Hal", by_hal), ("Wes", by_wes)] {
            assert_eq!(
                answer.status, 204,
                "round {round}: {name}'s DELETE /locks?session=mine: {}",
                answer.body
            );
        }
        for card in [one, two] {
            let path = format!("/locks/status?lockableType=Card&lockableParam={card}");
            let status = app.get(&path).by(&race.mia).send().await.expect(200).body;
            assert_eq!(status["state"], "unlocked", "round {round}: {status}");
            assert_eq!(status["waiters"], json!([]), "round {round}: {status}");
        }
    }
}
