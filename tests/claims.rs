//! Claims, `POST /locks/claim`: the first free record of many, on both
//! databases. Concurrent claimers each get a different record with one
//! request; a retried claim gets the same record; held candidates are
//! passed over; when every candidate is held, 409 `none_free`.

mod beyond;
mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use baton::models::Role;
use beyond::{
    cards_as_records, case_locks, claim, claim_body, id_set, ids_of, instant, lockable_key,
    more_cards,
};
use common::{id, Cast, TestApp, TestUser};
use serde_json::json;

on_both_backends!(TestApp::with_cast =>
    a_claim_locks_the_first_candidate,
    a_claim_passes_over_held_candidates,
    every_candidate_held_is_none_free,
    a_retried_claim_gets_the_same_record,
    a_tab_holding_a_candidate_gets_the_first_it_holds,
    another_tab_claims_another_record,
    a_claim_of_no_candidates_or_of_more_than_a_hundred_is_invalid,
    a_claim_over_two_cases_is_invalid,
    a_claim_naming_a_record_twice_counts_it_once,
    a_claim_of_an_unknown_record_is_not_found,
    a_reader_or_a_non_member_cannot_claim,
    a_claim_accepts_snake_case_and_numeric_params,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s| s.database.db_pool_size = 16) =>
    concurrent_claimers_each_get_a_different_record,
);

/// As `POST /locks` does, a claim takes `lockable_type`/`lockable_param`
/// and the param as a number.
async fn a_claim_accepts_snake_case_and_numeric_params((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let claimed = app
        .post("/locks/claim")
        .by(&c.bob.tab("bob-tab"))
        .json(json!({ "claim": { "candidates": [
            { "lockable_type": "Card", "lockable_param": f.card_id },
        ] } }))
        .send()
        .await
        .expect(201);
    assert_eq!(lockable_key(&claimed.body), format!("Card/{}", f.card_id));
}

async fn a_claim_locks_the_first_candidate((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 2).await;
    let bob = c.bob.tab("bob-tab");
    let claimed = claim(
        &app,
        &bob,
        &[
            ("Card", cards[1]),
            ("Card", f.card_id),
            ("Edgenote", f.edgenote_id),
        ],
    )
    .await
    .expect(201);
    let lock = &claimed.body;
    assert_eq!(lock["type"], "Lock", "{lock}");
    assert_eq!(lockable_key(lock), format!("Card/{}", cards[1]));
    assert_eq!(lock["depth"], "0", "{lock}");
    assert_eq!(lock["sessionId"], "bob-tab", "{lock}");
    assert_eq!(lock["user"]["id"], c.bob.id, "{lock}");
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), BTreeSet::from([id(lock)]));
}

async fn a_claim_passes_over_held_candidates((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 3).await;
    let carol = c.carol.tab("carol-tab");
    app.lock(&carol, "Card", f.card_id).await;
    app.lock(&carol, "Card", cards[1]).await;
    let candidates = [
        ("Card", f.card_id),
        ("Card", cards[0]),
        ("Card", cards[1]),
        ("Card", cards[2]),
    ];

    let bobs = claim(&app, &c.bob.tab("bob-tab"), &candidates)
        .await
        .expect(201);
    assert_eq!(lockable_key(&bobs.body), format!("Card/{}", cards[0]));
    let mias = claim(&app, &c.mia.tab("mia-tab"), &candidates)
        .await
        .expect(201);
    assert_eq!(lockable_key(&mias.body), format!("Card/{}", cards[2]));
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 4);
}

/// Every candidate held by someone else: 409 `none_free` naming them all,
/// and nothing taken.
async fn every_candidate_held_is_none_free((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", f.card_id).await;
    let mias = app
        .lock(&c.mia.tab("mia-tab"), "Edgenote", f.edgenote_id)
        .await;
    let bobs_other_tab = app.lock(&c.bob.tab("bob-1"), "Page", f.page_id).await;
    let refused = claim(
        &app,
        &c.bob.tab("bob-2"),
        &[
            ("Edgenote", f.edgenote_id),
            ("Card", f.card_id),
            ("Page", f.page_id),
        ],
    )
    .await
    .expect_error(409, "none_free");
    assert_eq!(
        id_set(&refused.body["error"]["locks"]),
        ids_of([&carols, &mias, &bobs_other_tab]),
        "the locks in the way: {}",
        refused.body
    );
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 3);
}

/// The same tab claiming again gets the same record (200, lease renewed),
/// nothing new taken.
async fn a_retried_claim_gets_the_same_record((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 2).await;
    let bob = c.bob.tab("bob-tab");
    let candidates = [("Card", f.card_id), ("Card", cards[0]), ("Card", cards[1])];
    let first = claim(&app, &bob, &candidates).await.expect(201).body;
    actix_web::rt::time::sleep(std::time::Duration::from_millis(1100)).await;
    let again = claim(&app, &bob, &candidates).await.expect(200).body;
    assert_eq!(again["id"], first["id"], "{again}");
    assert_eq!(again["token"], first["token"], "{again}");
    assert!(
        instant(&again["expiresAt"]) > instant(&first["expiresAt"]),
        "renewed: {} then {}",
        first["expiresAt"],
        again["expiresAt"]
    );
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), BTreeSet::from([id(&first)]), "{listed:?}");
}

/// A tab holding some of the candidates already (by plain locks) gets the
/// first of them in the order given: 200, nothing new taken.
async fn a_tab_holding_a_candidate_gets_the_first_it_holds((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 3).await;
    let bob = c.bob.tab("bob-tab");
    let on_second = app.lock(&bob, "Card", cards[1]).await;
    app.lock(&bob, "Card", cards[2]).await;
    let got = claim(
        &app,
        &bob,
        &[
            ("Card", f.card_id),
            ("Card", cards[0]),
            ("Card", cards[1]),
            ("Card", cards[2]),
        ],
    )
    .await
    .expect(200);
    assert_eq!(got.body["id"], on_second["id"], "{}", got.body);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 2);
}

async fn another_tab_claims_another_record((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let cards = more_cards(&app, f, 1).await;
    let candidates = [("Card", f.card_id), ("Card", cards[0])];
    let one = claim(&app, &c.bob.tab("bob-1"), &candidates)
        .await
        .expect(201);
    let two = claim(&app, &c.bob.tab("bob-2"), &candidates)
        .await
        .expect(201);
    assert_eq!(lockable_key(&one.body), format!("Card/{}", f.card_id));
    assert_eq!(lockable_key(&two.body), format!("Card/{}", cards[0]));
    claim(&app, &c.bob.tab("bob-3"), &candidates)
        .await
        .expect_error(409, "none_free");
}

async fn a_claim_of_no_candidates_or_of_more_than_a_hundred_is_invalid((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    claim(&app, &bob, &[]).await.expect_error(422, "invalid");
    let mut cards = vec![f.card_id];
    cards.extend(more_cards(&app, f, 100).await);
    claim(&app, &bob, &cards_as_records(&cards))
        .await
        .expect_error(422, "invalid");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
    // A hundred is allowed.
    let got = claim(&app, &bob, &cards_as_records(&cards[..100]))
        .await
        .expect(201);
    assert_eq!(lockable_key(&got.body), format!("Card/{}", f.card_id));
}

async fn a_claim_over_two_cases_is_invalid((app, c): (TestApp, Cast)) {
    let other = app
        .case("other", &[(&c.bob, Role::Editor), (&c.rita, Role::Reader)])
        .await;
    claim(
        &app,
        &c.bob.tab("bob-tab"),
        &[("Card", c.case.card_id), ("Card", other.card_id)],
    )
    .await
    .expect_error(422, "invalid");
    assert!(case_locks(&app, &c.rita, &c.case.slug).await.is_empty());
    assert!(case_locks(&app, &c.rita, &other.slug).await.is_empty());
}

async fn a_claim_naming_a_record_twice_counts_it_once((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let lock = claim(
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
    assert_eq!(lock["lockable"]["type"], "Card");
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 1);
    // Another tab naming Bob's card twice (as a string and a number) finds
    // it held once.
    let refused = app
        .post("/locks/claim")
        .by(&c.carol.tab("carol-tab"))
        .json(json!({ "claim": { "candidates": [
            { "lockableType": "Card", "lockableParam": f.card_id.to_string() },
            { "lockableType": "Card", "lockableParam": f.card_id },
        ] } }))
        .send()
        .await
        .expect_error(409, "none_free")
        .body;
    let locks = refused["error"]["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 1, "{refused}");
    assert_eq!(locks[0]["token"], lock["token"]);
}

async fn a_claim_of_an_unknown_record_is_not_found((app, c): (TestApp, Cast)) {
    let f = &c.case;
    claim(
        &app,
        &c.bob.tab("bob-tab"),
        &[("Card", 999_999), ("Card", f.card_id)],
    )
    .await
    .expect_error(404, "not_found");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

async fn a_reader_or_a_non_member_cannot_claim((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let candidates = [("Card", f.card_id)];
    claim(&app, &c.rita.tab("rita-tab"), &candidates)
        .await
        .expect_error(403, "forbidden");
    claim(&app, &c.eve.tab("eve-tab"), &candidates)
        .await
        .expect_error(403, "forbidden");
    app.post("/locks/claim")
        .json(claim_body(&candidates))
        .send()
        .await
        .expect_error(401, "unauthorized");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

/// Claimers asking at once, as many as there are candidates.
const CLAIMERS: usize = 16;
/// Rounds of the race.
const CLAIM_ROUNDS: usize = 10;

/// Each round, 16 tabs claim one of 16 cards at once, every one with the
/// candidates in the same order (the worst case: all want the first). Each
/// gets a lock (201) on a different card with its single request.
async fn concurrent_claimers_each_get_a_different_record(app: TestApp) {
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("claimer{i}")).await);
    }
    let mut members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    members.push((&mia, Role::Manager));
    let f = app.case("claims", &members).await;
    let mut cards = vec![f.card_id];
    cards.extend(more_cards(&app, &f, CLAIMERS - 1).await);
    let candidates = Arc::new(cards_as_records(&cards));
    let tabs: Vec<TestUser> = (0..CLAIMERS)
        .map(|i| users[i % users.len()].tab(&format!("claim-tab-{i}")))
        .collect();

    for round in 0..CLAIM_ROUNDS {
        let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMERS));
        let mut tasks = Vec::new();
        for me in &tabs {
            let (app, me, barrier, candidates) =
                (app.clone(), me.clone(), barrier.clone(), candidates.clone());
            tasks.push(actix_web::rt::spawn(async move {
                barrier.wait().await;
                let answer = claim(&app, &me, &candidates).await;
                (me, answer)
            }));
        }
        // card → the tab that claimed it
        let mut claimed: HashMap<String, String> = HashMap::new();
        let mut lock_ids = BTreeSet::new();
        for task in tasks {
            let (me, answer) = task.await.expect("claimer panicked");
            let session = me.session.clone().unwrap();
            assert_eq!(
                answer.status, 201,
                "round {round}: tab {session}'s claim: {}",
                answer.body
            );
            assert_eq!(answer.body["sessionId"], session, "{}", answer.body);
            let card = lockable_key(&answer.body);
            if let Some(other) = claimed.insert(card.clone(), session.clone()) {
                panic!("round {round}: {card} claimed by both {other} and {session}");
            }
            lock_ids.insert(id(&answer.body));
        }
        assert_eq!(claimed.len(), CLAIMERS, "round {round}");
        let held = case_locks(&app, &mia, &f.slug).await;
        assert_eq!(ids_of(&held), lock_ids, "round {round}: {held:?}");
        // Everything is taken now: one more claim finds nothing free.
        claim(&app, &mia.tab("late"), &candidates)
            .await
            .expect_error(409, "none_free");
        for me in &tabs {
            app.delete("/locks?session=mine")
                .by(me)
                .send()
                .await
                .expect(204);
        }
    }
}
