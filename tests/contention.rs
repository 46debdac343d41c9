//! Mutual exclusion under contention over real HTTP, on SQLite and
//! PostgreSQL: many clients race for few records; no two holders of a record
//! ever overlap, no token is reused, and nothing answers 500.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use baton::auth::Role;
use common::{lock_body, takeover_body, Backend, TestApp, TestUser};
use serde_json::json;

on_both_backends!(
    racing_clients_never_share_a_record,
    concurrent_takeovers_leave_one_lock
);

const CLIENTS: usize = 16;
const RECORDS: usize = 3;
const CYCLES: usize = 2_000;

async fn racing_clients_never_share_a_record(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await else {
        return;
    };
    let app = Arc::new(app);
    // 4 users with 4 tabs each: another tab of the same user must be refused too.
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("user{i}")).await);
    }
    let members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
    let f = app.case("race", &members).await;
    let mut cards = vec![f.card_id];
    for i in 1..RECORDS {
        cards.push(app.card(&f, &format!("card {i}")).await);
    }

    // Client-side view: who holds each record right now (0 = nobody).
    let holders: Arc<Vec<AtomicI64>> = Arc::new((0..RECORDS).map(|_| AtomicI64::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(Mutex::new(Vec::<i64>::new()));
    let statuses = Arc::new(Mutex::new(HashMap::<u16, usize>::new()));

    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let me = users[client % 4].tab(&format!("tab-{client}"));
        let (app, holders, done, tokens, statuses, cards) = (
            app.clone(),
            holders.clone(),
            done.clone(),
            tokens.clone(),
            statuses.clone(),
            cards.clone(),
        );
        tasks.push(actix_web::rt::spawn(async move {
            let mut n = client;
            while done.load(Ordering::SeqCst) < CYCLES {
                n = n.wrapping_mul(31).wrapping_add(7);
                let slot = n % RECORDS;
                let card = cards[slot];
                let got = app
                    .post("/locks")
                    .by(&me)
                    .json(lock_body("Card", card))
                    .send()
                    .await;
                *statuses.lock().unwrap().entry(got.status).or_default() += 1;
                if got.status != 201 {
                    assert_eq!(got.status, 409, "acquire: {}", got.body);
                    // Back off a little, as a person would: spinning only burns CPU.
                    actix_web::rt::time::sleep(std::time::Duration::from_millis(
                        1 + (n % 4) as u64,
                    ))
                    .await;
                    continue;
                }
                let token = got.body["id"].as_i64().unwrap();
                let before = holders[slot].swap(token, Ordering::SeqCst);
                assert_eq!(
                    before, 0,
                    "record {card} granted to lock {token} while lock {before} held it"
                );
                tokens.lock().unwrap().push(token);

                let write = app
                    .patch(&format!("/cards/{card}"))
                    .by(&me)
                    .header("Lock-Token", token.to_string())
                    .json(json!({ "card": { "content": format!("written under lock {token}") } }))
                    .send()
                    .await;
                assert_eq!(
                    write.status, 200,
                    "guarded write under own lock: {}",
                    write.body
                );

                let still = holders[slot].swap(0, Ordering::SeqCst);
                assert_eq!(
                    still, token,
                    "record {card}: holder changed under lock {token}"
                );
                app.delete(&format!("/locks/{token}"))
                    .by(&me)
                    .send()
                    .await
                    .expect(204);
                done.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    for task in tasks {
        task.await.expect("client panicked");
    }

    let tokens = tokens.lock().unwrap().clone();
    assert!(tokens.len() >= CYCLES);
    let unique: HashSet<_> = tokens.iter().collect();
    assert_eq!(unique.len(), tokens.len(), "a lock token was reused");
    eprintln!(
        "{backend:?}: {} cycles, statuses {:?}",
        tokens.len(),
        statuses.lock().unwrap()
    );

    // Server-side view: per record the audit trail alternates acquired/released
    // of the same lock — no second acquire before the release.
    let audit = app.audit(f.case_id).await;
    let lock_record: HashMap<i64, i64> = app
        .state
        .db
        .read(move |conn| {
            use baton::db::schema::lock_events::dsl::*;
            use diesel::prelude::*;
            lock_events
                .filter(case_id.eq(f.case_id))
                .select((lock_id, lockable_id))
                .load::<(i64, i64)>(conn)
                .map_err(baton::error::AppError::from)
        })
        .await
        .unwrap()
        .into_iter()
        .collect();
    let mut open: HashMap<i64, i64> = HashMap::new();
    for (action, lock, ..) in &audit {
        let record = lock_record[lock];
        match action.as_str() {
            "acquired" => assert!(
                open.insert(record, *lock).is_none(),
                "overlap on record {record} at lock {lock}"
            ),
            "released" => assert_eq!(
                open.remove(&record),
                Some(*lock),
                "release of a lock not holding {record}"
            ),
            other => panic!("unexpected audit action {other}"),
        }
    }
    assert!(open.is_empty());
    assert_eq!(audit.len(), tokens.len() * 2);
}

async fn concurrent_takeovers_leave_one_lock(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await else {
        return;
    };
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
