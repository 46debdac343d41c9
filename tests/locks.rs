//! The lock engine over real HTTP, on SQLite and PostgreSQL: every row of
//! the contract's lock table, the guard, takeover, the audit trail, the
//! reaper, and the events each change hands to the realtime layer.

mod common;

use std::sync::Arc;
use std::time::Duration;

use baton::db::Frame;
use baton::models::Role;
use common::{lock_body, takeover_body, Backend, TestApp};
use serde_json::{json, Value};
use tokio::sync::broadcast::Receiver;

on_both_backends!(
    acquire_renew_and_conflict,
    lockable_lookup_errors,
    takeover_rules,
    read_status_and_list,
    refresh_release_and_break,
    release_a_whole_tab,
    the_guard,
    deletes_respect_child_locks,
    takeover_story_lock_token,
    takeover_story_if_match,
    reaper_ends_expired_and_idle_locks,
    events_after_commit,
    audit_trail_route,
);

/// Frames as they arrive (on PostgreSQL they come back through LISTEN, a
/// moment after the response), until `done` says enough; 5 s at most.
async fn frames_until(
    rx: &mut Receiver<Arc<Frame>>,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done(&out) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(frame)) => out.push(frame.json()),
            _ => panic!("frames so far: {out:?}"),
        }
    }
    out
}

/// Exactly `n` frames.
async fn frames(rx: &mut Receiver<Arc<Frame>>, n: usize) -> Vec<Value> {
    frames_until(rx, |got| got.len() >= n).await
}

async fn acquire_renew_and_conflict(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let bob_tab = bob.tab("bob-tab-1");

    let first = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let lock = &first.body;
    assert_eq!(lock["type"], "Lock");
    assert_eq!(lock["table"], "locks");
    assert_eq!(
        lock["lockable"],
        json!({ "type": "Card", "table": "cards", "param": f.card_id.to_string() })
    );
    assert_eq!(lock["sessionId"], "bob-tab-1");
    assert_eq!(lock["user"]["name"], "Bob");
    assert_eq!(lock["token"], lock["param"]);

    tokio::time::sleep(Duration::from_millis(20)).await;
    let again = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(200);
    assert_eq!(again.body["id"], lock["id"], "re-entrant: the same lock");
    assert!(
        again.body["expiresAt"].as_str() > lock["expiresAt"].as_str(),
        "lease renewed"
    );

    // Another tab of the same user, and another user: 409 with the holder's lock.
    let other_tab = app
        .post("/locks")
        .by(&bob.tab("bob-tab-2"))
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(409, "lock_held");
    assert_eq!(other_tab.body["error"]["lock"]["id"], lock["id"]);
    let held = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(409, "lock_held");
    assert_eq!(held.body["error"]["lock"]["user"]["name"], "Bob");
    assert!(held.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Bob"));

    // Without a session id the user as a whole holds it.
    let by_user = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Edgenote", f.edgenote_id))
        .send()
        .await
        .expect(201);
    let again = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Edgenote", f.edgenote_id))
        .send()
        .await
        .expect(200);
    assert_eq!(again.body["id"], by_user.body["id"]);
    assert!(by_user.body["sessionId"].is_null());

    // The Gala seed's own request: snake_case fields and the param as a
    // number. 201; the same request with the param as a string renews it.
    let seed = app
        .post("/locks")
        .by(&carol)
        .json(json!({ "lock": { "lockable_type": "Page", "lockable_param": f.page_id } }))
        .send()
        .await
        .expect(201);
    let renewed = app
        .post("/locks")
        .by(&carol)
        .json(
            json!({ "lock": { "lockable_type": "Page", "lockable_param": f.page_id.to_string() } }),
        )
        .send()
        .await
        .expect(200);
    assert_eq!(renewed.body["id"], seed.body["id"]);
    // Neither a negative number nor a fraction is an id.
    for param in [json!(-1), json!(1.5), json!("1.5")] {
        app.post("/locks")
            .by(&carol)
            .json(json!({ "lock": { "lockableType": "Page", "lockableParam": param } }))
            .send()
            .await
            .expect_error(422, "invalid");
    }
}

async fn lockable_lookup_errors(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let rita = app.user("Rita").await;
    let eve = app.user("Eve").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;

    app.post("/locks")
        .by(&bob)
        .json(lock_body("Comment", 1))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post("/locks")
        .by(&bob)
        .json(json!({ "lock": { "lockableParam": "1" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post("/locks")
        .by(&bob)
        .json(lock_body("Card", 999_999))
        .send()
        .await
        .expect_error(404, "not_found");
    app.post("/locks")
        .by(&bob)
        .json(json!({ "lock": { "lockableType": "Card", "lockableParam": "abc" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post("/locks")
        .by(&bob)
        .json(json!({ "lock": { "lockableType": "cards", "lockableParam": "1" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.post("/locks")
        .by(&rita)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/locks")
        .by(&eve)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/locks")
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect_error(401, "unauthorized");
    // A case is lockable too.
    app.post("/locks")
        .by(&bob)
        .json(lock_body("Case", f.case_id))
        .send()
        .await
        .expect(201);
}

async fn takeover_rules(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let mia = app.user("Mia").await; // manager
    let bob = app.user("Bob").await; // editor
    let carol = app.user("Carol").await; // editor
    let root = app.admin("Root").await; // site admin, not a member
    let f = app
        .case(
            "c",
            &[
                (&mia, Role::Manager),
                (&bob, Role::Editor),
                (&carol, Role::Editor),
            ],
        )
        .await;
    let bob_tab = bob.tab("bob-1");

    // Takeover of an unlocked record is a plain acquire.
    let bobs = app
        .post("/locks")
        .by(&bob_tab)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    // From the holding tab it is re-entrant.
    let same = app
        .post("/locks")
        .by(&bob_tab)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(200);
    assert_eq!(same.body["id"], bobs.body["id"]);

    // Equal rank may take over; a new lock (new token) is granted.
    let carols = app
        .post("/locks")
        .by(&carol.tab("carol-1"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    assert_ne!(carols.body["id"], bobs.body["id"]);
    assert_eq!(carols.body["user"]["name"], "Carol");
    app.get(&format!("/locks/{}", bobs.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");

    // Another tab of the same user may take over.
    let carol2 = app
        .post("/locks")
        .by(&carol.tab("carol-2"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    // A manager over an editor: yes. An editor over a manager: 403 outranked.
    let mias = app
        .post("/locks")
        .by(&mia.tab("mia-1"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let refused = app
        .post("/locks")
        .by(&bob_tab)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect_error(403, "outranked");
    assert_eq!(refused.body["error"]["lock"]["id"], mias.body["id"]);

    // A site admin outranks every case role.
    let roots = app
        .post("/locks")
        .by(&root.tab("root-1"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.post("/locks")
        .by(&mia.tab("mia-1"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect_error(403, "outranked");

    // Audit: every takeover is `overridden` (actor = taker, holder = former) then `acquired`.
    let audit = app.audit(f.case_id).await;
    let lock_id = |v: &serde_json::Value| v["id"].as_i64().unwrap();
    assert_eq!(
        audit,
        vec![
            ("acquired".into(), lock_id(&bobs.body), Some(bob.id), bob.id),
            (
                "overridden".into(),
                lock_id(&bobs.body),
                Some(carol.id),
                bob.id
            ),
            (
                "acquired".into(),
                lock_id(&carols.body),
                Some(carol.id),
                carol.id
            ),
            (
                "overridden".into(),
                lock_id(&carols.body),
                Some(carol.id),
                carol.id
            ),
            (
                "acquired".into(),
                lock_id(&carol2.body),
                Some(carol.id),
                carol.id
            ),
            (
                "overridden".into(),
                lock_id(&carol2.body),
                Some(mia.id),
                carol.id
            ),
            ("acquired".into(), lock_id(&mias.body), Some(mia.id), mia.id),
            (
                "overridden".into(),
                lock_id(&mias.body),
                Some(root.id),
                mia.id
            ),
            (
                "acquired".into(),
                lock_id(&roots.body),
                Some(root.id),
                root.id
            ),
        ]
    );
}

async fn read_status_and_list(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let rita = app.user("Rita").await;
    let eve = app.user("Eve").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    let bob_tab = bob.tab("bob-1");
    let status_path = format!(
        "/locks/status?lockableType=Card&lockableParam={}",
        f.card_id
    );

    let unlocked = app.get(&status_path).by(&rita).send().await.expect(200);
    assert_eq!(unlocked.body, json!({ "state": "unlocked" }));

    let lock = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let id = lock.body["id"].as_i64().unwrap();

    let owned = app.get(&status_path).by(&bob_tab).send().await.expect(200);
    assert_eq!(owned.body["state"], "owned");
    assert_eq!(owned.body["lock"]["id"], id);
    let locked = app.get(&status_path).by(&rita).send().await.expect(200);
    assert_eq!(locked.body["state"], "locked");
    let other_tab = app
        .get(&status_path)
        .by(&bob.tab("bob-2"))
        .send()
        .await
        .expect(200);
    assert_eq!(other_tab.body["state"], "locked");
    let snake = app
        .get(&format!(
            "/locks/status?lockable_type=Card&lockable_param={}",
            f.card_id
        ))
        .by(&rita)
        .send()
        .await
        .expect(200);
    assert_eq!(snake.body["state"], "locked");
    app.get("/locks/status?lockableType=Nope&lockableParam=1")
        .by(&rita)
        .send()
        .await
        .expect_error(422, "invalid");
    app.get(&status_path)
        .by(&eve)
        .send()
        .await
        .expect_error(403, "forbidden");

    let shown = app
        .get(&format!("/locks/{id}"))
        .by(&rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body, lock.body);
    app.get(&format!("/locks/{id}"))
        .by(&eve)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.get("/locks/999999")
        .by(&rita)
        .send()
        .await
        .expect_error(404, "not_found");

    let list = app.get("/locks?case=c").by(&rita).send().await.expect(200);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    assert_eq!(list.body[0]["id"], id);
    app.get("/locks")
        .by(&rita)
        .send()
        .await
        .expect_error(422, "invalid");
    app.get("/locks?case=c")
        .by(&eve)
        .send()
        .await
        .expect_error(403, "forbidden");
    let case = app.get("/cases/c").by(&rita).send().await.expect(200);
    assert_eq!(case.body["activeLocks"][0]["id"], id);
}

async fn refresh_release_and_break(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let mia = app.user("Mia").await;
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let rita = app.user("Rita").await;
    let f = app
        .case(
            "c",
            &[
                (&mia, Role::Manager),
                (&bob, Role::Editor),
                (&carol, Role::Editor),
                (&rita, Role::Reader),
            ],
        )
        .await;
    let bob_tab = bob.tab("bob-1");

    let lock = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let id = lock.body["id"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let refreshed = app
        .post(&format!("/locks/{id}/refresh"))
        .by(&bob_tab)
        .send()
        .await
        .expect(200);
    assert!(refreshed.body["expiresAt"].as_str() > lock.body["expiresAt"].as_str());
    assert!(refreshed.body["lastActivityAt"].as_str() > lock.body["lastActivityAt"].as_str());
    app.post(&format!("/locks/{id}/refresh"))
        .by(&carol)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post(&format!("/locks/{id}/refresh"))
        .by(&bob.tab("bob-2"))
        .send()
        .await
        .expect_error(403, "forbidden");

    // A reader cannot break it; the holder releases it.
    app.delete(&format!("/locks/{id}"))
        .by(&rita)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.delete(&format!("/locks/{id}"))
        .by(&bob_tab)
        .send()
        .await
        .expect(204);
    app.delete(&format!("/locks/{id}"))
        .by(&bob_tab)
        .send()
        .await
        .expect_error(404, "not_found");
    app.post(&format!("/locks/{id}/refresh"))
        .by(&bob_tab)
        .send()
        .await
        .expect_error(404, "not_found");

    // An editor breaks an editor's lock; an editor cannot break a manager's.
    let second = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let second_id = second.body["id"].as_i64().unwrap();
    app.delete(&format!("/locks/{second_id}"))
        .by(&carol)
        .send()
        .await
        .expect(204);
    let mias = app
        .post("/locks")
        .by(&mia)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let refused = app
        .delete(&format!("/locks/{}", mias.body["id"]))
        .by(&carol)
        .send()
        .await
        .expect_error(403, "outranked");
    assert_eq!(refused.body["error"]["lock"]["id"], mias.body["id"]);

    let audit = app.audit(f.case_id).await;
    let actions: Vec<(&str, Option<i64>, i64)> = audit
        .iter()
        .map(|(a, _, actor, holder)| (a.as_str(), *actor, *holder))
        .collect();
    assert_eq!(
        actions,
        vec![
            ("acquired", Some(bob.id), bob.id),
            ("released", Some(bob.id), bob.id),
            ("acquired", Some(bob.id), bob.id),
            ("overridden", Some(carol.id), bob.id),
            ("acquired", Some(mia.id), mia.id),
        ]
    );
}

async fn release_a_whole_tab(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let f = app.case("c", &[(&bob, Role::Editor)]).await;
    let tab1 = bob.tab("tab-1");
    let tab2 = bob.tab("tab-2");
    app.post("/locks")
        .by(&tab1)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.post("/locks")
        .by(&tab1)
        .json(lock_body("Page", f.page_id))
        .send()
        .await
        .expect(201);
    app.post("/locks")
        .by(&tab2)
        .json(lock_body("Edgenote", f.edgenote_id))
        .send()
        .await
        .expect(201);

    app.delete("/locks?session=mine")
        .by(&bob)
        .send()
        .await
        .expect_error(422, "invalid");
    app.delete("/locks?session=all")
        .by(&tab1)
        .send()
        .await
        .expect_error(422, "invalid");
    app.delete("/locks?session=mine")
        .by(&tab1)
        .send()
        .await
        .expect(204);

    let left = app.get("/locks?case=c").by(&bob).send().await.expect(200);
    let left = left.body.as_array().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["sessionId"], "tab-2");
}

async fn the_guard(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);
    let bob_tab = bob.tab("bob-1");
    let edit = |text: &str| json!({ "card": { "content": text } });

    // Unlocked: anyone with the role may write.
    app.patch(&card)
        .by(&carol)
        .json(edit("carol, unlocked"))
        .send()
        .await
        .expect(200);

    let lock = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let token = lock.body["token"].as_str().unwrap().to_owned();

    // Someone else: 423 with the lock and the record.
    let locked = app
        .patch(&card)
        .by(&carol)
        .json(edit("carol, locked out"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(locked.body["error"]["lock"]["id"], lock.body["id"]);
    assert_eq!(
        locked.body["error"]["lockable"]["content"],
        "carol, unlocked"
    );
    // The same user in another tab is someone else too.
    app.patch(&card)
        .by(&bob.tab("bob-2"))
        .json(edit("other tab"))
        .send()
        .await
        .expect_error(423, "locked");
    app.delete(&card)
        .by(&carol)
        .send()
        .await
        .expect_error(423, "locked");

    // The holder writes, with or without its token; activity is renewed.
    tokio::time::sleep(Duration::from_millis(20)).await;
    app.patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", &token)
        .json(edit("bob 1"))
        .send()
        .await
        .expect(200);
    let renewed = app
        .get(&format!("/locks/{token}"))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert!(renewed.body["lastActivityAt"].as_str() > lock.body["lastActivityAt"].as_str());
    app.patch(&card)
        .by(&bob_tab)
        .json(edit("bob 2"))
        .send()
        .await
        .expect(200);

    // A token that is not the current lock is lost (412), even for the holder.
    app.patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", "999999")
        .json(edit("x"))
        .send()
        .await
        .expect_error(412, "lock_lost");
    app.patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", "twelve")
        .json(edit("x"))
        .send()
        .await
        .expect_error(400, "bad_request");

    // After release nobody holds it, yet the old token still gets 412.
    app.delete(&format!("/locks/{token}"))
        .by(&bob_tab)
        .send()
        .await
        .expect(204);
    let lost = app
        .patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", &token)
        .json(edit("stale"))
        .send()
        .await
        .expect_error(412, "lock_lost");
    assert_eq!(lost.body["error"]["current"]["content"], "bob 2");
    app.delete(&card)
        .by(&bob_tab)
        .header("Lock-Token", &token)
        .send()
        .await
        .expect_error(412, "lock_lost");

    let now = app.get(&card).by(&carol).send().await.expect(200);
    assert_eq!(now.body["content"], "bob 2");
    assert_eq!(now.body["version"], 4);

    // The holder deletes its record: the lock goes with it.
    let lock = app
        .post("/locks")
        .by(&bob_tab)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.delete(&card).by(&bob_tab).send().await.expect(204);
    app.get(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
    let audit = app.audit(f.case_id).await;
    assert_eq!(audit.last().unwrap().0, "released");
}

async fn deletes_respect_child_locks(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let mia = app.user("Mia").await;
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let f = app
        .case(
            "c",
            &[
                (&mia, Role::Manager),
                (&bob, Role::Editor),
                (&carol, Role::Editor),
            ],
        )
        .await;

    let bobs = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let refused = app
        .delete(&format!("/pages/{}", f.page_id))
        .by(&carol)
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(refused.body["error"]["lock"]["id"], bobs.body["id"]);
    app.delete("/cases/c")
        .by(&mia)
        .send()
        .await
        .expect_error(423, "locked");
    app.get(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .send()
        .await
        .expect(200);

    // Bob may delete the page: his own card lock is released with it.
    app.delete(&format!("/pages/{}", f.page_id))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.get(&format!("/locks/{}", bobs.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
    app.delete("/cases/c").by(&mia).send().await.expect(204);
}

/// A locks and edits, B takes over, B saves, B releases, A saves with its
/// Lock-Token → 412 lock_lost, and B's content survives.
async fn takeover_story_lock_token(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let a = app.user("Ann").await.tab("ann-tab");
    let b = app.user("Ben").await.tab("ben-tab");
    let f = app
        .case("c", &[(&a, Role::Editor), (&b, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);

    let a_lock = app
        .post("/locks")
        .by(&a)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let a_token = a_lock.body["token"].as_str().unwrap().to_owned();
    app.patch(&card)
        .by(&a)
        .header("Lock-Token", &a_token)
        .json(json!({ "card": { "content": "A1" } }))
        .send()
        .await
        .expect(200);

    let b_lock = app
        .post("/locks")
        .by(&b)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let b_token = b_lock.body["token"].as_str().unwrap().to_owned();
    app.patch(&card)
        .by(&b)
        .header("Lock-Token", &b_token)
        .json(json!({ "card": { "content": "B1" } }))
        .send()
        .await
        .expect(200);
    app.delete(&format!("/locks/{b_token}"))
        .by(&b)
        .send()
        .await
        .expect(204);

    let lost = app
        .patch(&card)
        .by(&a)
        .header("Lock-Token", &a_token)
        .json(json!({ "card": { "content": "A2, from a stale tab" } }))
        .send()
        .await
        .expect_error(412, "lock_lost");
    assert_eq!(lost.body["error"]["current"]["content"], "B1");
    let now = app.get(&card).by(&a).send().await.expect(200);
    assert_eq!(now.body["content"], "B1");
}

/// The same story when A only sends a stale If-Match.
async fn takeover_story_if_match(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let a = app.user("Ann").await.tab("ann-tab");
    let b = app.user("Ben").await.tab("ben-tab");
    let f = app
        .case("c", &[(&a, Role::Editor), (&b, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);

    app.post("/locks")
        .by(&a)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let a_saved = app
        .patch(&card)
        .by(&a)
        .json(json!({ "card": { "content": "A1" } }))
        .send()
        .await
        .expect(200);
    let a_etag = a_saved.etag().unwrap();

    let b_lock = app
        .post("/locks")
        .by(&b)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.patch(&card)
        .by(&b)
        .header("If-Match", &a_etag)
        .json(json!({ "card": { "content": "B1" } }))
        .send()
        .await
        .expect(200);
    app.delete(&format!("/locks/{}", b_lock.body["id"]))
        .by(&b)
        .send()
        .await
        .expect(204);

    let stale = app
        .patch(&card)
        .by(&a)
        .header("If-Match", &a_etag)
        .json(json!({ "card": { "content": "A2, from a stale tab" } }))
        .send()
        .await
        .expect_error(412, "stale_version");
    assert_eq!(stale.body["error"]["current"]["content"], "B1");
    let now = app.get(&card).by(&a).send().await.expect(200);
    assert_eq!(now.body["content"], "B1");
}

async fn reaper_ends_expired_and_idle_locks(backend: Backend) {
    let Some(app) = TestApp::start_with(backend, |s| {
        s.lock_ttl = Duration::from_millis(400);
        s.idle_timeout = Duration::from_millis(1200);
        s.reaper_interval = Duration::from_millis(50);
    })
    .await
    else {
        return;
    };
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let mut events = app.state.realtime.hub.subscribe(f.case_id);

    // Expiry: no refresh, so the lease runs out.
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    tokio::time::sleep(Duration::from_millis(900)).await;
    app.get(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");
    app.post("/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);

    // Idle: refreshes keep the lease alive, but refresh is activity... so keep
    // the lease alive without activity by renewing only `expires_at` (what a
    // pong does) and watch the idle timeout end it.
    let idle = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Page", f.page_id))
        .send()
        .await
        .expect(201);
    let idle_id = idle.body["id"].as_i64().unwrap();
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let db = app.state.db.clone();
        db.write(None, move |tx| {
            let until = baton::clock::after(tx.now, Duration::from_millis(400));
            baton::models::Lock::renew(tx.conn, idle_id, until, None)
                .map_err(baton::error::AppError::from)
        })
        .await
        .unwrap();
    }
    app.get(&format!("/locks/{idle_id}"))
        .by(&bob)
        .send()
        .await
        .expect_error(404, "not_found");

    let audit = app.audit(f.case_id).await;
    let ends: Vec<(&str, i64, Option<i64>)> = audit
        .iter()
        .filter(|(a, ..)| a != "acquired")
        .map(|(a, lock, actor, _)| (a.as_str(), *lock, *actor))
        .collect();
    let first_id = lock.body["id"].as_i64().unwrap();
    assert!(ends.contains(&("expired", first_id, None)), "{ends:?}");
    assert!(ends.contains(&("idle", idle_id, None)), "{ends:?}");
    assert_eq!(
        ends.iter().filter(|(_, id, _)| *id == first_id).count(),
        1,
        "ended once"
    );

    let ended = |got: &[Value], id: i64| {
        got.iter()
            .any(|e| e["type"] == "destroy" && e["watchable"]["id"] == id)
    };
    let destroys = |got: &[Value]| ended(got, first_id) && ended(got, idle_id);
    let destroyed: Vec<(i64, String)> = frames_until(&mut events, destroys)
        .await
        .iter()
        .filter(|e| e["type"] == "destroy" && e["watchable"]["type"] == "Lock")
        .map(|e| {
            (
                e["watchable"]["id"].as_i64().unwrap(),
                e["watchable"]["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        destroyed.contains(&(first_id, "expired".into())),
        "{destroyed:?}"
    );
    assert!(
        destroyed.contains(&(idle_id, "idle".into())),
        "{destroyed:?}"
    );
}

async fn events_after_commit(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let bob = app.user("Bob").await.tab("bob-tab");
    let carol = app.user("Carol").await.tab("carol-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;
    let other = app.case("other", &[(&bob, Role::Editor)]).await;
    let mut events = app.state.realtime.hub.subscribe(f.case_id);
    let mut other_events = app.state.realtime.hub.subscribe(other.case_id);

    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(json!({ "card": { "content": "hi" } }))
        .send()
        .await
        .expect(200);
    // Refused writes broadcast nothing.
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .json(json!({ "card": { "content": "no" } }))
        .send()
        .await
        .expect(423);
    app.post("/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(409);
    let taken = app
        .post("/locks")
        .by(&carol)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.delete(&format!("/locks/{}", taken.body["id"]))
        .by(&carol)
        .send()
        .await
        .expect(204);

    let got: Vec<(String, String, Option<String>)> = frames(&mut events, 5)
        .await
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                format!(
                    "{}/{}",
                    e["watchable"]["type"].as_str().unwrap(),
                    e["watchable"]["param"].as_str().unwrap()
                ),
                e["editorSessionId"].as_str().map(str::to_owned),
            )
        })
        .collect();
    let lock_key = format!("Lock/{}", lock.body["id"]);
    let taken_key = format!("Lock/{}", taken.body["id"]);
    let card_key = format!("Card/{}", f.card_id);
    let bob_s = Some("bob-tab".to_string());
    let carol_s = Some("carol-tab".to_string());
    assert_eq!(
        got,
        vec![
            ("create".into(), lock_key.clone(), bob_s.clone()),
            ("update".into(), card_key, bob_s),
            ("destroy".into(), lock_key, carol_s.clone()),
            ("create".into(), taken_key.clone(), carol_s.clone()),
            ("destroy".into(), taken_key, carol_s),
        ]
    );
    // Frames come in commit order, so anything of the other case would be here by now.
    assert!(other_events.try_recv().is_err(), "no cross-case events");

    // The override's destroy says why and by whom.
    let mut events = app.state.realtime.hub.subscribe(f.case_id);
    let again = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.post("/locks")
        .by(&carol)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    let destroy = frames(&mut events, 2)
        .await
        .into_iter()
        .find(|e| e["type"] == "destroy")
        .unwrap();
    assert_eq!(destroy["watchable"]["id"], again.body["id"]);
    assert_eq!(destroy["watchable"]["reason"], "overridden");
    assert_eq!(destroy["watchable"]["overriddenBy"]["name"], "Carol");
    assert_eq!(destroy["watchable"]["table"], "locks");
}

async fn audit_trail_route(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let mia = app.user("Mia").await;
    let bob = app.user("Bob").await;
    let f = app
        .case("c", &[(&mia, Role::Manager), (&bob, Role::Editor)])
        .await;
    let lock = app
        .post("/locks")
        .by(&bob)
        .json(lock_body("Card", f.card_id))
        .send()
        .await
        .expect(201);
    app.delete(&format!("/locks/{}", lock.body["id"]))
        .by(&bob)
        .send()
        .await
        .expect(204);

    let trail = app
        .get("/cases/c/lock_events")
        .by(&mia)
        .send()
        .await
        .expect(200);
    let trail = trail.body.as_array().unwrap();
    assert_eq!(trail.len(), 2);
    assert_eq!(trail[0]["action"], "released", "newest first");
    assert_eq!(trail[1]["action"], "acquired");
    assert_eq!(trail[0]["lockId"], lock.body["id"]);
    assert_eq!(trail[0]["lockable"]["type"], "Card");
    assert_eq!(trail[0]["actor"]["id"], bob.id);
    let one = app
        .get("/cases/c/lock_events?limit=1")
        .by(&mia)
        .send()
        .await
        .expect(200);
    assert_eq!(one.body.as_array().unwrap().len(), 1);
    let before = app
        .get(&format!("/cases/c/lock_events?before={}", trail[0]["id"]))
        .by(&mia)
        .send()
        .await
        .expect(200);
    assert_eq!(before.body[0]["action"], "acquired");
    app.get("/cases/c/lock_events?limit=0")
        .by(&mia)
        .send()
        .await
        .expect_error(422, "invalid");
    app.get("/cases/c/lock_events")
        .by(&bob)
        .send()
        .await
        .expect_error(403, "forbidden");
}
