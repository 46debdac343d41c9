//! Mutual exclusion under contention over real HTTP, on SQLite and
//! PostgreSQL: many clients race for few records; no two holders of a record
//! ever overlap, no token is reused, and nothing answers 500.

mod common;

use std::sync::Arc;

use baton::models::Role;
use common::storm::Storm;
use common::{lock_body, takeover_body, Backend, TestApp, TestUser};

on_both_backends!(
    racing_clients_never_share_a_record,
    concurrent_takeovers_leave_one_lock
);

async fn racing_clients_never_share_a_record(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await else {
        return;
    };
    let storm = Storm::seed(&app, "race", 3).await;
    storm.run(Arc::new(app)).await;
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
