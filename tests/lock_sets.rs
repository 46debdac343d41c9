//! Lock sets, `POST /locks/batch`: all or nothing, in the order asked, on
//! both databases. A refused set takes nothing and broadcasts nothing; sets
//! asked in opposite orders by many clients at once never deadlock, never
//! answer 5xx and never both win in part; a set's locks are ordinary locks
//! afterwards.

mod beyond;
mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use baton::models::Role;
use beyond::{
    assert_held_by, cards_as_records, case_locks, changes_until_marker, created_locks, edit,
    id_set, ids_of, instant, lock_set, lockable_key, marker, more_cards, record,
};
use common::{id, lock_body, takeover_body, Backend, Cast, TestApp, TestUser};
use serde_json::{json, Value};

on_both_backends!(TestApp::with_cast =>
    a_set_is_granted_in_the_order_asked,
    a_set_with_a_record_held_by_someone_else_takes_nothing,
    a_set_names_every_lock_in_its_way,
    records_the_tab_holds_are_renewed_and_included,
    another_tab_of_the_same_user_is_in_the_way,
    a_set_of_no_records_is_invalid,
    a_set_of_fifty_records_is_granted_and_of_fifty_one_invalid,
    a_set_over_two_cases_is_invalid,
    a_set_naming_a_record_twice_locks_it_once,
    a_set_with_an_unknown_record_is_not_found,
    a_set_with_an_unknown_type_is_invalid,
    a_reader_or_a_non_member_cannot_lock_a_set,
    a_sets_locks_are_ordinary_locks,
    a_set_without_a_tab_is_held_by_the_user,
    a_set_accepts_snake_case_and_numeric_params,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s| s.database.db_pool_size = 16) =>
    opposite_order_sets_never_deadlock_or_win_in_part,
);
on_both_backends!(overlapping_sets_in_opposite_orders_are_whole_or_absent,);

async fn a_set_is_granted_in_the_order_asked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 3).await;
    let bob = c.bob.tab("bob-tab");
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let asked = [
        ("Card", cards[2]),
        ("Edgenote", f.edgenote_id),
        ("Card", cards[0]),
        ("Page", f.page_id),
        ("Card", f.card_id),
        ("Card", cards[1]),
    ];
    let granted = lock_set(&app, &bob, &asked).await.expect(201);
    let locks = granted.body["locks"]
        .as_array()
        .unwrap_or_else(|| panic!("no `locks`: {}", granted.body));
    assert_eq!(locks.len(), asked.len(), "{}", granted.body);
    for (lock, (lockable_type, lockable_id)) in locks.iter().zip(asked) {
        assert_eq!(lock["type"], "Lock", "{lock}");
        assert_eq!(lock["table"], "locks", "{lock}");
        assert_eq!(lock["lockable"]["type"], lockable_type, "{lock}");
        assert_eq!(lock["lockable"]["param"], lockable_id.to_string(), "{lock}");
        assert_eq!(lock["depth"], "0", "{lock}");
        assert_eq!(lock["sessionId"], "bob-tab", "{lock}");
        assert_eq!(lock["user"]["id"], c.bob.id, "{lock}");
        assert!(lock["token"].is_string(), "{lock}");
    }
    let granted_ids = ids_of(locks);
    assert_eq!(granted_ids.len(), asked.len(), "one lock per record");
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), granted_ids);

    // One create per lock, tagged with Bob's tab; one `acquired` each.
    let mut seen = BTreeSet::new();
    while seen.len() < asked.len() {
        let frame = watcher.next_change().await;
        assert_eq!(frame["type"], "create", "{frame}");
        assert_eq!(frame["editorSessionId"], "bob-tab", "{frame}");
        seen.insert(id(&frame["watchable"]));
    }
    assert_eq!(seen, granted_ids);
    let acquired: BTreeSet<i64> = app
        .audit(f.case_id)
        .await
        .into_iter()
        .filter(|(action, ..)| action == "acquired")
        .map(|(_, lock, ..)| lock)
        .collect();
    assert_eq!(acquired, granted_ids);
}

/// Carol holds one card of Bob's set: 409 naming her lock, and none of the
/// other records was taken, nor broadcast as taken.
async fn a_set_with_a_record_held_by_someone_else_takes_nothing((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 3).await;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", cards[1]).await;
    // Carol's lock reaches the watcher first (on PostgreSQL through the
    // event bus, which may take a moment): what follows it is the set's.
    watcher
        .next_where("Carol's lock", |frame| {
            frame["type"] == "create" && frame["watchable"]["id"] == carols["id"]
        })
        .await;

    let bob = c.bob.tab("bob-tab");
    let asked = [
        ("Card", f.card_id),
        ("Card", cards[0]),
        ("Card", cards[1]),
        ("Card", cards[2]),
        ("Page", f.page_id),
    ];
    let refused = lock_set(&app, &bob, &asked).await;
    assert_held_by(&refused, &[&carols]);
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        refused.body
    );
    // Nothing was taken: only Carol's lock is listed, and each record asked
    // alone is free for Mia.
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), BTreeSet::from([id(&carols)]), "{listed:?}");
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={}",
            cards[2]
        ))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "unlocked", "{}", status.body);

    // …and nothing was broadcast: the next change the watcher sees is the
    // marker's lock.
    let marker = marker(&app, &c.mia.tab("mia-tab"), "Edgenote", f.edgenote_id).await;
    let frames = changes_until_marker(&mut watcher, marker).await;
    assert_eq!(
        created_locks(&frames),
        vec![marker],
        "frames after a refused set: {frames:?}"
    );
}

/// Two people hold records of Bob's set: `locks` names both, `lock` one of them.
async fn a_set_names_every_lock_in_its_way((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 2).await;
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", cards[0]).await;
    let mias = app
        .lock(&c.mia.tab("mia-tab"), "Edgenote", f.edgenote_id)
        .await;
    let refused = lock_set(
        &app,
        &c.bob.tab("bob-tab"),
        &[
            ("Card", f.card_id),
            ("Edgenote", f.edgenote_id),
            ("Card", cards[1]),
            ("Card", cards[0]),
        ],
    )
    .await;
    assert_held_by(&refused, &[&carols, &mias]);
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&carols, &mias]));
}

/// A record the asking tab holds already is renewed (same lock, later
/// lease) and included in its place.
async fn records_the_tab_holds_are_renewed_and_included((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 2).await;
    let bob = c.bob.tab("bob-tab");
    let held = app.lock(&bob, "Card", cards[0]).await;
    actix_web::rt::time::sleep(std::time::Duration::from_millis(1100)).await;

    let asked = [("Card", f.card_id), ("Card", cards[0]), ("Card", cards[1])];
    let granted = lock_set(&app, &bob, &asked).await.expect(201);
    let locks = granted.body["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 3, "{}", granted.body);
    assert_eq!(locks[1]["id"], held["id"], "the held lock, in its place");
    assert_eq!(locks[1]["token"], held["token"]);
    assert!(
        instant(&locks[1]["expiresAt"]) > instant(&held["expiresAt"]),
        "the held lock's lease is renewed: {} then {}",
        held["expiresAt"],
        locks[1]["expiresAt"]
    );
    for (lock, (_, card)) in locks.iter().zip(asked) {
        assert_eq!(lockable_key(lock), format!("Card/{card}"));
    }
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 3);

    // Asking the same set again renews all three, taking nothing new.
    let again = lock_set(&app, &bob, &asked).await.expect(201);
    assert_eq!(id_set(&again.body["locks"]), ids_of(locks));
}

/// Bob's other tab holds a record of the set: someone else, so 409.
async fn another_tab_of_the_same_user_is_in_the_way((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let other_tab = app.lock(&c.bob.tab("bob-1"), "Card", f.card_id).await;
    let refused = lock_set(
        &app,
        &c.bob.tab("bob-2"),
        &[("Edgenote", f.edgenote_id), ("Card", f.card_id)],
    )
    .await;
    assert_held_by(&refused, &[&other_tab]);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 1);
}

async fn a_set_of_no_records_is_invalid((app, c): (TestApp, Cast)) {
    lock_set(&app, &c.bob.tab("bob-tab"), &[])
        .await
        .expect_error(422, "invalid");
}

async fn a_set_of_fifty_records_is_granted_and_of_fifty_one_invalid((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let mut cards = vec![f.card_id];
    cards.extend(more_cards(&app, f, 50).await);
    let bob = c.bob.tab("bob-tab");

    lock_set(&app, &bob, &cards_as_records(&cards))
        .await
        .expect_error(422, "invalid");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());

    let granted = lock_set(&app, &bob, &cards_as_records(&cards[..50]))
        .await
        .expect(201);
    assert_eq!(granted.body["locks"].as_array().unwrap().len(), 50);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 50);
}

async fn a_set_over_two_cases_is_invalid((app, c): (TestApp, Cast)) {
    let other = app
        .case("other", &[(&c.bob, Role::Editor), (&c.rita, Role::Reader)])
        .await;
    lock_set(
        &app,
        &c.bob.tab("bob-tab"),
        &[("Card", c.case.card_id), ("Card", other.card_id)],
    )
    .await
    .expect_error(422, "invalid");
    assert!(case_locks(&app, &c.rita, &c.case.slug).await.is_empty());
    assert!(case_locks(&app, &c.rita, &other.slug).await.is_empty());
}

async fn a_set_naming_a_record_twice_locks_it_once((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let set = lock_set(
        &app,
        &bob,
        &[
            ("Card", f.card_id),
            ("Page", f.page_id),
            ("Card", f.card_id),
        ],
    )
    .await
    .expect(201)
    .body;
    let tokens: Vec<&str> = set["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["token"].as_str().unwrap())
        .collect();
    assert_eq!(tokens.len(), 3, "one lock per place asked: {set}");
    assert_eq!(tokens[0], tokens[2], "the same lock at both places: {set}");
    assert_ne!(tokens[0], tokens[1]);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 2);
    // The param as a number and as a string names the same record.
    let again = app
        .post("/locks/batch")
        .by(&bob)
        .json(json!({ "locks": [
            record("Card", f.card_id),
            { "lockableType": "Card", "lockableParam": f.card_id },
        ] }))
        .send()
        .await
        .expect(201)
        .body;
    assert_eq!(again["locks"][0]["token"], tokens[0]);
    assert_eq!(again["locks"][1]["token"], tokens[0]);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 2);
}

async fn a_set_with_an_unknown_record_is_not_found((app, c): (TestApp, Cast)) {
    let f = &c.case;
    lock_set(
        &app,
        &c.bob.tab("bob-tab"),
        &[("Card", f.card_id), ("Card", 999_999)],
    )
    .await
    .expect_error(404, "not_found");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

async fn a_set_with_an_unknown_type_is_invalid((app, c): (TestApp, Cast)) {
    let f = &c.case;
    lock_set(
        &app,
        &c.bob.tab("bob-tab"),
        &[("Card", f.card_id), ("cards", f.card_id)],
    )
    .await
    .expect_error(422, "invalid");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

async fn a_reader_or_a_non_member_cannot_lock_a_set((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let asked = [("Card", f.card_id), ("Page", f.page_id)];
    lock_set(&app, &c.rita.tab("rita-tab"), &asked)
        .await
        .expect_error(403, "forbidden");
    lock_set(&app, &c.eve.tab("eve-tab"), &asked)
        .await
        .expect_error(403, "forbidden");
    app.post("/locks/batch")
        .json(beyond::set_body(&asked))
        .send()
        .await
        .expect_error(401, "unauthorized");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

/// After a set: each lock refreshes, writes, guards and ends on its own,
/// and can be taken over like any lock.
async fn a_sets_locks_are_ordinary_locks((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let second = app.card(f, "second").await;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    let granted = lock_set(
        &app,
        &bob,
        &[
            ("Card", f.card_id),
            ("Card", second),
            ("Edgenote", f.edgenote_id),
        ],
    )
    .await
    .expect(201);
    let locks: Vec<Value> = granted.body["locks"].as_array().unwrap().clone();
    let (first_lock, second_lock, note_lock) = (&locks[0], &locks[1], &locks[2]);

    // Refresh.
    let refreshed = app
        .post(&format!("/locks/{}/refresh", first_lock["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(refreshed.body["id"], first_lock["id"]);
    // GET /locks/:id and the status.
    let shown = app
        .get(&format!("/locks/{}", second_lock["id"]))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["depth"], "0");
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={second}"
        ))
        .by(&carol)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["state"], "locked", "{}", status.body);
    assert_eq!(status.body["lock"]["id"], second_lock["id"]);

    // The guard: Carol is locked out, Bob writes with his token.
    let locked = app
        .patch(&format!("/cards/{second}"))
        .by(&carol)
        .json(edit("carol's"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(locked.body["error"]["lock"]["id"], second_lock["id"]);
    app.patch(&format!("/cards/{second}"))
        .by(&bob)
        .header("Lock-Token", second_lock["token"].as_str().unwrap())
        .json(edit("bob's"))
        .send()
        .await
        .expect(200);
    // A plain lock is refused with the set's lock.
    let refused = app
        .lock_error(&carol, lock_body("Card", second), 409, "lock_held")
        .await;
    assert_eq!(refused.body["error"]["lock"]["id"], second_lock["id"]);

    // Release one: the others stay.
    app.release(&bob, id(first_lock)).await;
    app.lock(&carol, "Card", f.card_id).await;
    // Take one over: the others stay.
    app.lock_expect(&carol, takeover_body("Edgenote", f.edgenote_id), 201)
        .await;
    app.assert_lock_gone(&c.rita, id(note_lock)).await;
    app.get(&format!("/locks/{}", second_lock["id"]))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    // Leaving the tab releases what is left of the set.
    app.delete("/locks?session=mine")
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.assert_lock_gone(&c.rita, id(second_lock)).await;
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert!(
        listed.iter().all(|l| l["sessionId"] == "carol-tab"),
        "{listed:?}"
    );
}

/// Clients that ask for the same cards at once, half in ascending and half
/// in descending order.
const SET_CLIENTS: usize = 8;
/// How many cards every set asks for.
const SET_SIZE: usize = 5;
/// Rounds of the race.
const SET_ROUNDS: usize = 40;

/// Each round, every client asks for the same five cards at once (half
/// ascending, half descending). Every answer is 201 or 409; at most one
/// client wins, and then it holds all five and every 409 names only its
/// locks; with no winner, nobody holds any. The watcher sees exactly the
/// winners' locks created.
async fn opposite_order_sets_never_deadlock_or_win_in_part(app: TestApp) {
    let backend = app.backend;
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("setter{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    members.push((&mia, Role::Manager));
    let f = app.case("sets", &members).await;
    let mut cards = vec![f.card_id];
    cards.extend(beyond::more_cards(&app, &f, SET_SIZE - 1).await);
    let ascending = cards_as_records(&cards);
    let descending: Vec<(&str, i64)> = ascending.iter().rev().copied().collect();
    let (mut watcher, _) = app.open_tab(&f.slug, &mia.tab("watcher")).await;
    let tabs: Vec<TestUser> = (0..SET_CLIENTS)
        .map(|client| users[client % users.len()].tab(&format!("set-tab-{client}")))
        .collect();

    let mut granted_ids = BTreeSet::new();
    let (mut wins, mut refusals) = (0, 0);
    for round in 0..SET_ROUNDS {
        let barrier = Arc::new(tokio::sync::Barrier::new(SET_CLIENTS));
        let mut tasks = Vec::new();
        for (client, me) in tabs.iter().enumerate() {
            let asked = if client % 2 == 0 {
                ascending.clone()
            } else {
                descending.clone()
            };
            let (app, me, barrier) = (app.clone(), me.clone(), barrier.clone());
            tasks.push(actix_web::rt::spawn(async move {
                barrier.wait().await;
                let answer = lock_set(&app, &me, &asked).await;
                (me, asked, answer)
            }));
        }
        let mut winner = None;
        let mut refused = Vec::new();
        for task in tasks {
            let (me, asked, answer) = task.await.expect("client panicked");
            match answer.status {
                201 => {
                    assert!(
                        winner.is_none(),
                        "round {round}: two sets over the same cards both granted"
                    );
                    winner = Some((me, asked, answer.body));
                }
                409 => {
                    assert_eq!(
                        answer.body["error"]["code"], "lock_held",
                        "round {round}: {}",
                        answer.body
                    );
                    assert!(
                        answer.body["error"]["locks"]
                            .as_array()
                            .is_some_and(|l| !l.is_empty()),
                        "round {round}: a 409 names the locks in its way: {}",
                        answer.body
                    );
                    refused.push(answer.body);
                }
                other => panic!(
                    "round {round}: POST /locks/batch answered {other}: {}",
                    answer.body
                ),
            }
        }
        refusals += refused.len();
        let held = case_locks(&app, &mia, &f.slug).await;
        match winner {
            Some((me, asked, body)) => {
                wins += 1;
                let locks = body["locks"].as_array().unwrap();
                assert_eq!(locks.len(), SET_SIZE, "round {round}: {body}");
                for (lock, (_, card)) in locks.iter().zip(&asked) {
                    assert_eq!(lockable_key(lock), format!("Card/{card}"), "round {round}");
                    assert_eq!(lock["sessionId"], me.session.as_deref().unwrap());
                }
                let won = ids_of(locks);
                assert_eq!(
                    ids_of(&held),
                    won,
                    "round {round}: the case's locks are the winner's set, whole: {held:?}"
                );
                for body in &refused {
                    let named = id_set(&body["error"]["locks"]);
                    assert!(
                        named.is_subset(&won),
                        "round {round}: a 409 names locks that were never granted: {body}"
                    );
                }
                granted_ids.extend(won);
                app.delete("/locks?session=mine")
                    .by(&me)
                    .send()
                    .await
                    .expect(204);
            }
            None => assert!(
                held.is_empty(),
                "round {round}: no set granted, yet locks are held: {held:?}"
            ),
        }
    }
    eprintln!(
        "{backend:?}: {SET_ROUNDS} rounds of {SET_CLIENTS} opposite-order sets: \
         {wins} granted, {refusals} refused"
    );
    assert!(wins > 0, "no set was ever granted");

    let marker = marker(&app, &users[0].tab("marker"), "Edgenote", f.edgenote_id).await;
    let frames = changes_until_marker(&mut watcher, marker).await;
    let created: BTreeSet<i64> = created_locks(&frames)
        .into_iter()
        .filter(|id| *id != marker)
        .collect();
    assert_eq!(
        created, granted_ids,
        "the locks the watcher saw created are the granted sets'"
    );
    assert_eq!(
        created_locks(&frames).len(),
        wins * SET_SIZE + 1,
        "one create per granted lock"
    );
}

/// Without `X-Session-ID` the user as a whole holds the set's locks, and
/// asking again renews them.
async fn a_set_without_a_tab_is_held_by_the_user((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let asked = [("Card", f.card_id), ("Edgenote", f.edgenote_id)];
    let first = lock_set(&app, &c.carol, &asked).await.expect(201);
    for lock in first.body["locks"].as_array().unwrap() {
        assert!(lock["sessionId"].is_null(), "{lock}");
        assert_eq!(lock["user"]["id"], c.carol.id, "{lock}");
    }
    let again = lock_set(&app, &c.carol, &asked).await.expect(201);
    assert_eq!(
        id_set(&again.body["locks"]),
        id_set(&first.body["locks"]),
        "{}",
        again.body
    );
    let refused = lock_set(&app, &c.bob, &asked).await;
    assert_eq!(refused.status, 409, "{}", refused.body);
}

/// As `POST /locks` does (the Gala seed's own request), a set takes
/// `lockable_type`/`lockable_param` and the param as a number.
async fn a_set_accepts_snake_case_and_numeric_params((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let granted = app
        .post("/locks/batch")
        .by(&c.bob.tab("bob-tab"))
        .json(json!({ "locks": [
            { "lockable_type": "Card", "lockable_param": f.card_id },
            { "lockableType": "Page", "lockableParam": f.page_id },
        ] }))
        .send()
        .await
        .expect(201);
    let locks = granted.body["locks"].as_array().unwrap();
    assert_eq!(lockable_key(&locks[0]), format!("Card/{}", f.card_id));
    assert_eq!(lockable_key(&locks[1]), format!("Page/{}", f.page_id));
}

/// Clients of the overlapping race.
const OVERLAP_CLIENTS: usize = 8;
/// The cards their windows are taken from.
const OVERLAP_POOL: usize = 8;
/// Cards per set.
const OVERLAP_SET: usize = 4;
/// Sets each client asks for.
const OVERLAP_TRIES: usize = 40;

/// Clients loop over windows of 4 of 8 cards (windows overlap in every
/// way; even clients ask in ascending order, odd ones in descending),
/// without pause: a granted set is held a moment and released. No card is
/// ever granted to two clients at once (their own bookkeeping, and the
/// watcher's replay of every lock created and destroyed, in commit order),
/// every 201 is the whole set in the order asked, no refused set left a
/// lock behind, and nothing answers 5xx.
async fn overlapping_sets_in_opposite_orders_are_whole_or_absent(backend: Backend) {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let Some(app) = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await else {
        return;
    };
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("overlapper{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    members.push((&mia, Role::Manager));
    let f = app.case("overlap", &members).await;
    let mut cards = vec![f.card_id];
    cards.extend(beyond::more_cards(&app, &f, OVERLAP_POOL - 1).await);
    let cards = Arc::new(cards);
    let (mut watcher, _) = app.open_tab(&f.slug, &mia.tab("watcher")).await;
    // Per card: 0 when free, else the holding client + 1.
    let holders: Arc<Vec<AtomicUsize>> =
        Arc::new((0..OVERLAP_POOL).map(|_| AtomicUsize::new(0)).collect());

    let mut clients = Vec::new();
    for client in 0..OVERLAP_CLIENTS {
        let me = users[client % users.len()].tab(&format!("overlap-tab-{client}"));
        let (app, cards, holders) = (app.clone(), cards.clone(), holders.clone());
        clients.push(actix_web::rt::spawn(async move {
            let mut granted: Vec<i64> = Vec::new();
            let mut refused = 0;
            for attempt in 0..OVERLAP_TRIES {
                let start = (client / 2 + attempt) % (OVERLAP_POOL - OVERLAP_SET + 1);
                let mut slots: Vec<usize> = (start..start + OVERLAP_SET).collect();
                if client % 2 == 1 {
                    slots.reverse();
                }
                let asked: Vec<(&str, i64)> = slots.iter().map(|&i| ("Card", cards[i])).collect();
                let answer = lock_set(&app, &me, &asked).await;
                match answer.status {
                    201 => {
                        let locks = answer.body["locks"].as_array().unwrap();
                        assert_eq!(locks.len(), OVERLAP_SET, "{}", answer.body);
                        for (lock, (_, card)) in locks.iter().zip(&asked) {
                            assert_eq!(lockable_key(lock), format!("Card/{card}"));
                            assert_eq!(lock["sessionId"], me.session.as_deref().unwrap());
                            granted.push(id(lock));
                        }
                        for &slot in &slots {
                            if let Err(other) = holders[slot].compare_exchange(
                                0,
                                client + 1,
                                Ordering::SeqCst,
                                Ordering::SeqCst,
                            ) {
                                panic!(
                                    "card {} granted to client {client} while client {} held it",
                                    cards[slot],
                                    other - 1
                                );
                            }
                        }
                        actix_web::rt::time::sleep(std::time::Duration::from_millis(1)).await;
                        for &slot in &slots {
                            assert_eq!(holders[slot].swap(0, Ordering::SeqCst), client + 1);
                        }
                        app.delete("/locks?session=mine")
                            .by(&me)
                            .send()
                            .await
                            .expect(204);
                    }
                    409 => {
                        assert_eq!(answer.body["error"]["code"], "lock_held", "{}", answer.body);
                        assert!(
                            answer.body["error"]["locks"]
                                .as_array()
                                .is_some_and(|l| !l.is_empty()),
                            "{}",
                            answer.body
                        );
                        refused += 1;
                    }
                    other => panic!("POST /locks/batch answered {other}: {}", answer.body),
                }
            }
            (granted, refused)
        }));
    }
    let mut granted = BTreeSet::new();
    let mut refused = 0;
    for client in clients {
        let (ids, r) = client.await.expect("client panicked");
        granted.extend(ids);
        refused += r;
    }
    let wins = granted.len() / OVERLAP_SET;
    eprintln!(
        "{backend:?}: {} overlapping sets: {wins} granted, {refused} refused",
        OVERLAP_CLIENTS * OVERLAP_TRIES
    );
    assert!(wins > 0, "no set was ever granted");
    assert!(case_locks(&app, &mia, &f.slug).await.is_empty());

    // Replay every lock change the watcher saw, in commit order.
    let marker = marker(&app, &users[0].tab("marker"), "Edgenote", f.edgenote_id).await;
    let frames = changes_until_marker(&mut watcher, marker).await;
    let mut open: HashMap<String, i64> = HashMap::new();
    let mut created = BTreeSet::new();
    for frame in &frames {
        let lock = &frame["watchable"];
        if lock["type"] != "Lock" || lock["id"] == marker {
            continue;
        }
        let record = lockable_key(lock);
        match frame["type"].as_str() {
            Some("create") => {
                created.insert(id(lock));
                if let Some(other) = open.insert(record.clone(), id(lock)) {
                    panic!(
                        "{record}: lock {} created while lock {other} held it",
                        lock["id"]
                    );
                }
            }
            Some("destroy") => assert_eq!(
                open.remove(&record),
                Some(id(lock)),
                "{record}: destroy of a lock not held: {frame}"
            ),
            _ => {}
        }
    }
    assert!(open.is_empty(), "locks left open: {open:?}");
    assert_eq!(created, granted, "the locks created are the granted sets'");
}
