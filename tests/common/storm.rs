//! A mutual-exclusion storm: clients race for a few records over HTTP, each
//! cycle acquire → guarded write under the lock → release, and both the
//! clients' and the audit trail's views are checked for overlapping holders.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use baton::models::Role;
use serde_json::json;

use super::{lock_body, TestApp, TestUser};

pub struct Storm {
    /// Client i talks to `bases[i % bases.len()]` (several instances).
    pub bases: Vec<String>,
    /// Client i is `users[i % users.len()]` in its own tab.
    pub users: Vec<TestUser>,
    pub cards: Vec<i64>,
    pub case_id: i64,
    pub clients: usize,
    pub cycles: usize,
}

/// Cycles a storm runs unless its test sets its own.
///
/// `BATON_TEST_STORM_CYCLES` (a positive number) sets it: `.ci/run` exports
/// 2000, the long storm that finds rare interleavings. Unset, a plain `cargo
/// test` runs 300: every record is still contended, refused and handed from
/// holder to holder many times, in a fraction of the time.
pub fn default_cycles() -> usize {
    const VAR: &str = "BATON_TEST_STORM_CYCLES";
    match std::env::var(VAR) {
        Ok(value) => match value.trim().parse() {
            Ok(cycles) if cycles > 0 => cycles,
            _ => panic!("{VAR}={value:?}: expected a positive number of cycles"),
        },
        Err(std::env::VarError::NotPresent) => 300,
        Err(e) => panic!("{VAR}: {e}"),
    }
}

impl Storm {
    /// A new case `slug` with `records` cards and 4 editors, so that other
    /// tabs of the same user race too; 16 clients of [`default_cycles`]
    /// cycles against `app` itself until the caller says otherwise.
    pub async fn seed(app: &TestApp, slug: &str, records: usize) -> Storm {
        let mut users = Vec::new();
        for i in 0..4 {
            users.push(app.user(&format!("user{i}")).await);
        }
        let members: Vec<(&TestUser, Role)> = users.iter().map(|u| (u, Role::Editor)).collect();
        let f = app.case(slug, &members).await;
        let mut cards = vec![f.card_id];
        for i in 1..records {
            cards.push(app.card(&f, &format!("card {i}")).await);
        }
        Storm {
            bases: vec![app.base.clone()],
            users,
            cards,
            case_id: f.case_id,
            clients: 16,
            cycles: default_cycles(),
        }
    }

    pub async fn run(self, app: Arc<TestApp>) {
        let holders: Arc<Vec<AtomicI64>> =
            Arc::new(self.cards.iter().map(|_| AtomicI64::new(0)).collect());
        let done = Arc::new(AtomicUsize::new(0));
        let tokens = Arc::new(Mutex::new(Vec::<i64>::new()));
        let refused = Arc::new(AtomicUsize::new(0));
        let cards = Arc::new(self.cards.clone());
        let case_id = self.case_id;

        let mut tasks = Vec::new();
        for client in 0..self.clients {
            let me = self.users[client % self.users.len()].tab(&format!("storm-tab-{client}"));
            let base = self.bases[client % self.bases.len()].clone();
            let (app, holders, done, tokens, refused, cards) = (
                app.clone(),
                holders.clone(),
                done.clone(),
                tokens.clone(),
                refused.clone(),
                cards.clone(),
            );
            let cycles = self.cycles;
            tasks.push(actix_web::rt::spawn(async move {
                let mut n = client;
                while done.load(Ordering::SeqCst) < cycles {
                    n = n.wrapping_mul(31).wrapping_add(7);
                    let slot = n % cards.len();
                    let card = cards[slot];
                    let got = app
                        .req_at(&base, reqwest::Method::POST, "/locks")
                        .by(&me)
                        .json(lock_body("Card", card))
                        .send()
                        .await;
                    if got.status != 201 {
                        assert_eq!(got.status, 409, "acquire: {}", got.body);
                        refused.fetch_add(1, Ordering::Relaxed);
                        // Back off, as a person would: 409s answered in a tight
                        // loop would only burn the CPU the holders need.
                        actix_web::rt::time::sleep(Duration::from_millis(10 + (n % 20) as u64))
                            .await;
                        continue;
                    }
                    let token = got.body["id"].as_i64().unwrap();
                    let before = holders[slot].swap(token, Ordering::SeqCst);
                    if before != 0 {
                        // Say how the earlier lock ended, if it did: a lease
                        // that ran out is a slow client, not an overlap.
                        let ended: Vec<_> = app
                            .audit(case_id)
                            .await
                            .into_iter()
                            .filter(|e| e.1 == before)
                            .collect();
                        panic!(
                            "record {card} granted to lock {token} while lock {before} held it; \
                             audit of lock {before}: {ended:?}"
                        );
                    }
                    tokens.lock().unwrap().push(token);

                    let write = app
                        .req_at(&base, reqwest::Method::PATCH, &format!("/cards/{card}"))
                        .by(&me)
                        .header("Lock-Token", token.to_string())
                        .json(
                            json!({ "card": { "content": format!("written under lock {token}") } }),
                        )
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
                    app.req_at(&base, reqwest::Method::DELETE, &format!("/locks/{token}"))
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
        assert!(tokens.len() >= self.cycles);
        let unique: HashSet<_> = tokens.iter().collect();
        assert_eq!(unique.len(), tokens.len(), "a lock token was reused");
        eprintln!(
            "{:?}: {} cycles over {} instance(s), {} refusals (409)",
            app.backend,
            tokens.len(),
            self.bases.len(),
            refused.load(Ordering::Relaxed)
        );

        // Server-side view: per record the audit trail alternates acquired and
        // released of the same lock — never a second acquire before the release.
        let case_id = self.case_id;
        let lock_record: HashMap<i64, i64> = app
            .state
            .db
            .read(move |conn| {
                use baton::db::schema::events::dsl::*;
                use diesel::prelude::*;
                events
                    .filter(case_id.eq(self.case_id))
                    .filter(action.is_not_null())
                    .select((lock_id.assume_not_null(), lockable_id.assume_not_null()))
                    .load::<(i64, i64)>(conn)
                    .map_err(baton::error::AppError::from)
            })
            .await
            .unwrap()
            .into_iter()
            .collect();
        let audit = app.audit(case_id).await;
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
}
