//! What the tests of lock sets, claims, subtree locks and card moves share:
//! request bodies, the case's locks as the server lists them, and checks of
//! the `locks` an error names.
#![allow(dead_code)]

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::common::{Fixture, Resp, Tab, TestApp, TestUser};

/// `{lockableType, lockableParam}` of one record (the param as a string).
pub fn record(lockable_type: &str, id: i64) -> Value {
    json!({ "lockableType": lockable_type, "lockableParam": id.to_string() })
}

/// `{locks: [record, …]}`, the body of `POST /locks/batch`.
pub fn set_body(records: &[(&str, i64)]) -> Value {
    let records: Vec<Value> = records.iter().map(|(t, id)| record(t, *id)).collect();
    json!({ "locks": records })
}

/// `{claim: {candidates: [record, …]}}`, the body of `POST /locks/claim`.
pub fn claim_body(candidates: &[(&str, i64)]) -> Value {
    let candidates: Vec<Value> = candidates.iter().map(|(t, id)| record(t, *id)).collect();
    json!({ "claim": { "candidates": candidates } })
}

/// The same card ids as `("Card", id)` records.
pub fn cards_as_records(cards: &[i64]) -> Vec<(&'static str, i64)> {
    cards.iter().map(|id| ("Card", *id)).collect()
}

/// `POST /locks` with `depth: "infinity"`.
pub fn deep_body(lockable_type: &str, id: i64) -> Value {
    json!({ "lock": {
        "lockableType": lockable_type,
        "lockableParam": id.to_string(),
        "depth": "infinity",
    } })
}

/// "Edit anyway" with `depth: "infinity"`.
pub fn deep_takeover_body(lockable_type: &str, id: i64) -> Value {
    json!({ "lock": {
        "lockableType": lockable_type,
        "lockableParam": id.to_string(),
        "depth": "infinity",
        "takeover": true,
    } })
}

/// `POST /locks/batch` as `user`.
pub async fn lock_set(app: &TestApp, user: &TestUser, records: &[(&str, i64)]) -> Resp {
    app.post("/locks/batch")
        .by(user)
        .json(set_body(records))
        .send()
        .await
}

/// `POST /locks/claim` as `user`.
pub async fn claim(app: &TestApp, user: &TestUser, candidates: &[(&str, i64)]) -> Resp {
    app.post("/locks/claim")
        .by(user)
        .json(claim_body(candidates))
        .send()
        .await
}

/// A deep lock on an unlocked record as `user` (201); the lock.
pub async fn deep_lock(app: &TestApp, user: &TestUser, lockable_type: &str, id: i64) -> Value {
    let lock = app
        .lock_expect(user, deep_body(lockable_type, id), 201)
        .await
        .body;
    assert_eq!(lock["depth"], "infinity", "{lock}");
    lock
}

/// `GET /locks?case=` as `user`: the case's active locks.
pub async fn case_locks(app: &TestApp, user: &TestUser, slug: &str) -> Vec<Value> {
    app.get(&format!("/locks?case={slug}"))
        .by(user)
        .send()
        .await
        .expect(200)
        .body
        .as_array()
        .expect("an array of locks")
        .clone()
}

/// The ids of the locks in a JSON array, as a set.
#[track_caller]
pub fn id_set(locks: &Value) -> BTreeSet<i64> {
    locks
        .as_array()
        .unwrap_or_else(|| panic!("not an array of locks: {locks}"))
        .iter()
        .map(crate::common::id)
        .collect()
}

/// The ids of these locks, as a set.
pub fn ids_of<'a>(locks: impl IntoIterator<Item = &'a Value>) -> BTreeSet<i64> {
    locks.into_iter().map(crate::common::id).collect()
}

/// `Card/12`: the record a lock is on.
pub fn lockable_key(lock: &Value) -> String {
    format!(
        "{}/{}",
        lock["lockable"]["type"].as_str().unwrap_or("?"),
        lock["lockable"]["param"].as_str().unwrap_or("?")
    )
}

/// Asserts a 409 `lock_held` whose `lock` is one of `expected` and whose
/// `locks` are exactly `expected`.
#[track_caller]
pub fn assert_held_by(refused: &Resp, expected: &[&Value]) {
    let error = &refused.body["error"];
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert_eq!(error["code"], "lock_held", "{}", refused.body);
    let want = ids_of(expected.iter().copied());
    assert_eq!(
        id_set(&error["locks"]),
        want,
        "the locks in the way: {}",
        refused.body
    );
    assert!(
        want.contains(&crate::common::id(&error["lock"])),
        "`lock` is one of the locks in the way: {}",
        refused.body
    );
}

/// More cards on the fixture's page; their ids, in creation order.
pub async fn more_cards(app: &TestApp, f: &Fixture, count: usize) -> Vec<i64> {
    let mut cards = Vec::with_capacity(count);
    for i in 0..count {
        cards.push(app.card(f, &format!("card {i}")).await);
    }
    cards
}

/// A new page of the case through `POST /cases/:slug/pages` (201); its id.
pub async fn new_page(app: &TestApp, user: &TestUser, slug: &str, title: &str) -> i64 {
    let page = app
        .post(&format!("/cases/{slug}/pages"))
        .by(user)
        .json(json!({ "page": { "title": title } }))
        .send()
        .await
        .expect(201);
    crate::common::id(&page.body)
}

/// A new card through `POST /pages/:id/cards` (201); the card.
pub async fn new_card(app: &TestApp, user: &TestUser, page: i64, content: &str) -> Value {
    app.post(&format!("/pages/{page}/cards"))
        .by(user)
        .json(json!({ "card": { "content": content } }))
        .send()
        .await
        .expect(201)
        .body
}

/// `{card: {content}}`
pub fn edit(content: &str) -> Value {
    json!({ "card": { "content": content } })
}

/// Reads change frames (presence skipped) up to and including the
/// `destroy` of lock `marker`: a lock some test takes and releases after
/// the acts it checks, so that every frame those acts caused came before.
pub async fn changes_until_marker(tab: &mut Tab, marker: i64) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let frame = tab.next_change().await;
        let done = frame["type"] == "destroy"
            && frame["watchable"]["type"] == "Lock"
            && frame["watchable"]["id"] == marker;
        seen.push(frame);
        if done {
            return seen;
        }
    }
}

/// Takes and releases a lock on a free record as `user`: the marker of
/// [`changes_until_marker`]; its id.
pub async fn marker(app: &TestApp, user: &TestUser, lockable_type: &str, id: i64) -> i64 {
    let lock = app.lock(user, lockable_type, id).await;
    let id = crate::common::id(&lock);
    app.release(user, id).await;
    id
}

/// The `create` frames of locks among `frames`: the locks' ids.
pub fn created_locks(frames: &[Value]) -> Vec<i64> {
    frames
        .iter()
        .filter(|f| f["type"] == "create" && f["watchable"]["type"] == "Lock")
        .map(|f| crate::common::id(&f["watchable"]))
        .collect()
}

/// Parses an RFC 3339 timestamp of a lock.
#[track_caller]
pub fn instant(value: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a timestamp: {value}"));
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("not an RFC 3339 timestamp ({e}): {text}"))
}
