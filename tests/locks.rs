//! The lock engine over real HTTP, on SQLite and PostgreSQL: every row of
//! the contract's lock table, the guard, takeover, the audit trail, the
//! reaper, and the events each change hands to the realtime layer. One test
//! per rule, named after it; most use the [`common::Cast`] on case `c`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use baton::db::Frame;
use baton::models::{CaseId, LockId, Role};
use common::{id, lock_body, takeover_body, Backend, Cast, TestApp};
use serde_json::{json, Value};
use tokio::sync::broadcast::Receiver;

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

/// One audit entry as [`TestApp::audit`] reads it: (action, lock, actor, holder).
fn event(action: &str, lock: &Value, actor: &common::TestUser, holder: i64) -> AuditEntry {
    (action.into(), id(lock), Some(actor.id), holder)
}

type AuditEntry = (String, i64, Option<i64>, i64);

// ---- Acquiring ----

on_both_backends!(TestApp::with_cast =>
    a_lock_names_its_record_holder_and_tab,
    locking_again_from_the_holding_tab_renews_the_same_lock,
    another_tab_of_the_holder_gets_lock_held,
    another_user_gets_lock_held_naming_the_holder,
    without_a_session_id_the_user_as_a_whole_holds_the_lock,
    the_gala_seeds_request_with_a_numeric_param_is_accepted,
    a_negative_or_fractional_lockable_param_is_invalid,
);

async fn a_lock_names_its_record_holder_and_tab((app, c): (TestApp, Cast)) {
    let lock = app
        .lock(&c.bob.tab("bob-tab-1"), "Card", c.case.card_id)
        .await;
    assert_eq!(lock["type"], "Lock");
    assert_eq!(lock["table"], "locks");
    assert_eq!(
        lock["lockable"],
        json!({ "type": "Card", "table": "cards", "param": c.case.card_id.to_string() })
    );
    assert_eq!(lock["sessionId"], "bob-tab-1");
    assert_eq!(lock["user"]["name"], "Bob");
    assert_eq!(lock["token"], lock["param"]);
}

async fn locking_again_from_the_holding_tab_renews_the_same_lock((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-tab-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let again = app
        .lock_expect(&bob_tab, lock_body("Card", c.case.card_id), 200)
        .await;
    assert_eq!(again.body["id"], lock["id"], "re-entrant: the same lock");
    assert!(
        again.body["expiresAt"].as_str() > lock["expiresAt"].as_str(),
        "lease renewed"
    );
}

async fn another_tab_of_the_holder_gets_lock_held((app, c): (TestApp, Cast)) {
    let lock = app
        .lock(&c.bob.tab("bob-tab-1"), "Card", c.case.card_id)
        .await;
    let other_tab = app
        .lock_error(
            &c.bob.tab("bob-tab-2"),
            lock_body("Card", c.case.card_id),
            409,
            "lock_held",
        )
        .await;
    assert_eq!(other_tab.body["error"]["lock"]["id"], lock["id"]);
}

async fn another_user_gets_lock_held_naming_the_holder((app, c): (TestApp, Cast)) {
    let lock = app
        .lock(&c.bob.tab("bob-tab-1"), "Card", c.case.card_id)
        .await;
    let held = app
        .lock_error(
            &c.carol,
            lock_body("Card", c.case.card_id),
            409,
            "lock_held",
        )
        .await;
    assert_eq!(held.body["error"]["lock"]["id"], lock["id"]);
    assert_eq!(held.body["error"]["lock"]["user"]["name"], "Bob");
    assert!(held.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Bob"));
}

async fn without_a_session_id_the_user_as_a_whole_holds_the_lock((app, c): (TestApp, Cast)) {
    let by_user = app.lock(&c.carol, "Edgenote", c.case.edgenote_id).await;
    assert!(by_user["sessionId"].is_null());
    let again = app
        .lock_expect(&c.carol, lock_body("Edgenote", c.case.edgenote_id), 200)
        .await;
    assert_eq!(again.body["id"], by_user["id"]);
}

async fn the_gala_seeds_request_with_a_numeric_param_is_accepted((app, c): (TestApp, Cast)) {
    // The Gala seed's own request: snake_case fields, the param a number.
    let page_id = c.case.page_id;
    let seed = app
        .lock_expect(
            &c.carol,
            json!({ "lock": { "lockable_type": "Page", "lockable_param": page_id } }),
            201,
        )
        .await;
    // The param as a string (what `param` says) names the same record.
    let renewed = app
        .lock_expect(
            &c.carol,
            json!({ "lock": { "lockable_type": "Page", "lockable_param": page_id.to_string() } }),
            200,
        )
        .await;
    assert_eq!(renewed.body["id"], seed.body["id"]);
    // JSON does not tell 12 from 12.0.
    let as_float = app
        .lock_expect(
            &c.carol,
            json!({ "lock": { "lockableType": "Page", "lockableParam": page_id as f64 } }),
            200,
        )
        .await;
    assert_eq!(as_float.body["id"], seed.body["id"]);
}

async fn a_negative_or_fractional_lockable_param_is_invalid((app, c): (TestApp, Cast)) {
    for param in [
        json!(-1),
        json!(1.5),
        json!("1.5"),
        json!("-1"),
        json!(1_000_000_000_000_000_000_i64),
        json!(1e300),
    ] {
        app.lock_error(
            &c.carol,
            json!({ "lock": { "lockableType": "Page", "lockableParam": param } }),
            422,
            "invalid",
        )
        .await;
    }
}

// ---- What may be locked, and by whom ----

on_both_backends!(TestApp::with_cast =>
    an_unknown_lockable_type_is_invalid,
    a_lock_without_a_lockable_type_is_invalid,
    a_lock_on_a_missing_record_is_not_found,
    a_non_numeric_lockable_param_is_invalid,
    a_table_name_is_not_a_lockable_type,
    a_reader_cannot_lock,
    a_non_member_cannot_lock,
    locking_needs_a_signed_in_user,
    a_case_is_lockable,
);

async fn an_unknown_lockable_type_is_invalid((app, c): (TestApp, Cast)) {
    app.lock_error(&c.bob, lock_body("Comment", 1), 422, "invalid")
        .await;
}

async fn a_lock_without_a_lockable_type_is_invalid((app, c): (TestApp, Cast)) {
    app.lock_error(
        &c.bob,
        json!({ "lock": { "lockableParam": "1" } }),
        422,
        "invalid",
    )
    .await;
}

async fn a_lock_on_a_missing_record_is_not_found((app, c): (TestApp, Cast)) {
    app.lock_error(&c.bob, lock_body("Card", 999_999), 404, "not_found")
        .await;
}

async fn a_non_numeric_lockable_param_is_invalid((app, c): (TestApp, Cast)) {
    app.lock_error(
        &c.bob,
        json!({ "lock": { "lockableType": "Card", "lockableParam": "abc" } }),
        422,
        "invalid",
    )
    .await;
}

async fn a_table_name_is_not_a_lockable_type((app, c): (TestApp, Cast)) {
    app.lock_error(
        &c.bob,
        json!({ "lock": { "lockableType": "cards", "lockableParam": "1" } }),
        422,
        "invalid",
    )
    .await;
}

async fn a_reader_cannot_lock((app, c): (TestApp, Cast)) {
    app.lock_error(&c.rita, lock_body("Card", c.case.card_id), 403, "forbidden")
        .await;
}

async fn a_non_member_cannot_lock((app, c): (TestApp, Cast)) {
    app.lock_error(&c.eve, lock_body("Card", c.case.card_id), 403, "forbidden")
        .await;
}

async fn locking_needs_a_signed_in_user((app, c): (TestApp, Cast)) {
    app.post("/locks")
        .json(lock_body("Card", c.case.card_id))
        .send()
        .await
        .expect_error(401, "unauthorized");
}

async fn a_case_is_lockable((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob, "Case", c.case.case_id).await;
    assert_eq!(lock["lockable"]["type"], "Case");
}

// ---- Takeover ----
//
// Every takeover is audited as `overridden` (actor = taker, holder = former)
// then `acquired`; a refused one leaves no trace.

on_both_backends!(TestApp::with_cast =>
    takeover_of_an_unlocked_record_is_a_plain_acquire,
    takeover_from_the_holding_tab_is_re_entrant,
    takeover_by_an_equal_rank_grants_a_new_lock,
    another_tab_of_the_same_user_may_take_over,
    a_manager_takes_over_from_an_editor,
    takeover_by_a_lower_rank_is_outranked,
    a_site_admin_outranks_every_case_role,
);

async fn takeover_of_an_unlocked_record_is_a_plain_acquire((app, c): (TestApp, Cast)) {
    let bobs = app
        .takeover(&c.bob.tab("bob-1"), "Card", c.case.card_id)
        .await;
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![event("acquired", &bobs, &c.bob, c.bob.id)]
    );
}

async fn takeover_from_the_holding_tab_is_re_entrant((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let bobs = app.takeover(&bob_tab, "Card", c.case.card_id).await;
    let same = app
        .lock_expect(&bob_tab, takeover_body("Card", c.case.card_id), 200)
        .await;
    assert_eq!(same.body["id"], bobs["id"]);
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![event("acquired", &bobs, &c.bob, c.bob.id)]
    );
}

async fn takeover_by_an_equal_rank_grants_a_new_lock((app, c): (TestApp, Cast)) {
    let bobs = app
        .takeover(&c.bob.tab("bob-1"), "Card", c.case.card_id)
        .await;
    let carols = app
        .takeover(&c.carol.tab("carol-1"), "Card", c.case.card_id)
        .await;
    assert_ne!(carols["id"], bobs["id"], "a new lock, a new token");
    assert_eq!(carols["user"]["name"], "Carol");
    app.assert_lock_gone(&c.bob, id(&bobs)).await;
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &bobs, &c.bob, c.bob.id),
            event("overridden", &bobs, &c.carol, c.bob.id),
            event("acquired", &carols, &c.carol, c.carol.id),
        ]
    );
}

async fn another_tab_of_the_same_user_may_take_over((app, c): (TestApp, Cast)) {
    let carols = app
        .takeover(&c.carol.tab("carol-1"), "Card", c.case.card_id)
        .await;
    let carol2 = app
        .takeover(&c.carol.tab("carol-2"), "Card", c.case.card_id)
        .await;
    assert_ne!(carol2["id"], carols["id"]);
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &carols, &c.carol, c.carol.id),
            event("overridden", &carols, &c.carol, c.carol.id),
            event("acquired", &carol2, &c.carol, c.carol.id),
        ]
    );
}

async fn a_manager_takes_over_from_an_editor((app, c): (TestApp, Cast)) {
    let carol2 = app
        .takeover(&c.carol.tab("carol-2"), "Card", c.case.card_id)
        .await;
    let mias = app
        .takeover(&c.mia.tab("mia-1"), "Card", c.case.card_id)
        .await;
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &carol2, &c.carol, c.carol.id),
            event("overridden", &carol2, &c.mia, c.carol.id),
            event("acquired", &mias, &c.mia, c.mia.id),
        ]
    );
}

async fn takeover_by_a_lower_rank_is_outranked((app, c): (TestApp, Cast)) {
    let mias = app
        .takeover(&c.mia.tab("mia-1"), "Card", c.case.card_id)
        .await;
    let refused = app
        .lock_error(
            &c.bob.tab("bob-1"),
            takeover_body("Card", c.case.card_id),
            403,
            "outranked",
        )
        .await;
    assert_eq!(refused.body["error"]["lock"]["id"], mias["id"]);
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![event("acquired", &mias, &c.mia, c.mia.id)]
    );
}

async fn a_site_admin_outranks_every_case_role((app, c): (TestApp, Cast)) {
    let mia_tab = c.mia.tab("mia-1");
    let mias = app.takeover(&mia_tab, "Card", c.case.card_id).await;
    // Root is no member of the case.
    let roots = app
        .takeover(&c.root.tab("root-1"), "Card", c.case.card_id)
        .await;
    app.lock_error(
        &mia_tab,
        takeover_body("Card", c.case.card_id),
        403,
        "outranked",
    )
    .await;
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &mias, &c.mia, c.mia.id),
            event("overridden", &mias, &c.root, c.mia.id),
            event("acquired", &roots, &c.root, c.root.id),
        ]
    );
}

// ---- Reading locks ----

on_both_backends!(TestApp::with_cast =>
    the_status_of_an_unlocked_record_is_unlocked,
    the_status_is_owned_for_the_holding_tab,
    the_status_is_locked_for_other_users_and_tabs,
    the_status_takes_snake_case_params,
    the_status_of_an_unknown_type_is_invalid,
    a_non_member_cannot_read_a_status,
    a_member_reads_a_lock,
    a_non_member_cannot_read_a_lock,
    an_unknown_lock_is_not_found,
    members_list_a_cases_locks,
    listing_locks_needs_a_case,
    a_non_member_cannot_list_a_cases_locks,
);

fn status_path(c: &Cast) -> String {
    format!(
        "/locks/status?lockableType=Card&lockableParam={}",
        c.case.card_id
    )
}

async fn the_status_of_an_unlocked_record_is_unlocked((app, c): (TestApp, Cast)) {
    let unlocked = app
        .get(&status_path(&c))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(unlocked.body, json!({ "state": "unlocked", "waiters": [] }));
}

async fn the_status_is_owned_for_the_holding_tab((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    let owned = app
        .get(&status_path(&c))
        .by(&bob_tab)
        .send()
        .await
        .expect(200);
    assert_eq!(owned.body["state"], "owned");
    assert_eq!(owned.body["lock"]["id"], lock["id"]);
}

async fn the_status_is_locked_for_other_users_and_tabs((app, c): (TestApp, Cast)) {
    app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let locked = app
        .get(&status_path(&c))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(locked.body["state"], "locked");
    let other_tab = app
        .get(&status_path(&c))
        .by(&c.bob.tab("bob-2"))
        .send()
        .await
        .expect(200);
    assert_eq!(other_tab.body["state"], "locked");
}

async fn the_status_takes_snake_case_params((app, c): (TestApp, Cast)) {
    app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let snake = app
        .get(&format!(
            "/locks/status?lockable_type=Card&lockable_param={}",
            c.case.card_id
        ))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(snake.body["state"], "locked");
}

async fn the_status_of_an_unknown_type_is_invalid((app, c): (TestApp, Cast)) {
    app.get("/locks/status?lockableType=Nope&lockableParam=1")
        .by(&c.rita)
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn a_non_member_cannot_read_a_status((app, c): (TestApp, Cast)) {
    app.get(&status_path(&c))
        .by(&c.eve)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn a_member_reads_a_lock((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let shown = app
        .get(&format!("/locks/{}", id(&lock)))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body, lock);
}

async fn a_non_member_cannot_read_a_lock((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    app.get(&format!("/locks/{}", id(&lock)))
        .by(&c.eve)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn an_unknown_lock_is_not_found((app, c): (TestApp, Cast)) {
    app.get("/locks/999999")
        .by(&c.rita)
        .send()
        .await
        .expect_error(404, "not_found");
}

async fn members_list_a_cases_locks((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let list = app
        .get("/locks?case=c")
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    assert_eq!(list.body[0]["id"], lock["id"]);
    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    assert_eq!(case.body["activeLocks"][0]["id"], lock["id"]);
}

async fn listing_locks_needs_a_case((app, c): (TestApp, Cast)) {
    app.get("/locks")
        .by(&c.rita)
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn a_non_member_cannot_list_a_cases_locks((app, c): (TestApp, Cast)) {
    app.get("/locks?case=c")
        .by(&c.eve)
        .send()
        .await
        .expect_error(403, "forbidden");
}

// ---- Refresh, release and break ----

on_both_backends!(TestApp::with_cast =>
    a_refresh_renews_the_lease_and_the_activity,
    only_the_holding_tab_refreshes_a_lock,
    a_reader_cannot_break_a_lock,
    the_holder_releases_its_lock,
    an_editor_breaks_an_editors_lock,
    an_editor_cannot_break_a_managers_lock,
    releasing_a_whole_tab_needs_session_mine_from_a_tab,
    releasing_a_whole_tab_ends_that_tabs_locks_only,
);

async fn a_refresh_renews_the_lease_and_the_activity((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let refreshed = app
        .post(&format!("/locks/{}/refresh", id(&lock)))
        .by(&bob_tab)
        .send()
        .await
        .expect(200);
    assert!(refreshed.body["expiresAt"].as_str() > lock["expiresAt"].as_str());
    assert!(refreshed.body["lastActivityAt"].as_str() > lock["lastActivityAt"].as_str());
}

async fn only_the_holding_tab_refreshes_a_lock((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let refresh = format!("/locks/{}/refresh", id(&lock));
    app.post(&refresh)
        .by(&c.carol)
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post(&refresh)
        .by(&c.bob.tab("bob-2"))
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn a_reader_cannot_break_a_lock((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    app.delete(&format!("/locks/{}", id(&lock)))
        .by(&c.rita)
        .send()
        .await
        .expect_error(403, "forbidden");
}

async fn the_holder_releases_its_lock((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    app.release(&bob_tab, id(&lock)).await;
    // Gone: neither released again nor refreshed.
    app.delete(&format!("/locks/{}", id(&lock)))
        .by(&bob_tab)
        .send()
        .await
        .expect_error(404, "not_found");
    app.post(&format!("/locks/{}/refresh", id(&lock)))
        .by(&bob_tab)
        .send()
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &lock, &c.bob, c.bob.id),
            event("released", &lock, &c.bob, c.bob.id),
        ]
    );
}

async fn an_editor_breaks_an_editors_lock((app, c): (TestApp, Cast)) {
    let bobs = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    app.release(&c.carol, id(&bobs)).await;
    app.assert_lock_gone(&c.bob, id(&bobs)).await;
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![
            event("acquired", &bobs, &c.bob, c.bob.id),
            event("overridden", &bobs, &c.carol, c.bob.id),
        ]
    );
}

async fn an_editor_cannot_break_a_managers_lock((app, c): (TestApp, Cast)) {
    let mias = app.lock(&c.mia, "Card", c.case.card_id).await;
    let refused = app
        .delete(&format!("/locks/{}", id(&mias)))
        .by(&c.carol)
        .send()
        .await
        .expect_error(403, "outranked");
    assert_eq!(refused.body["error"]["lock"]["id"], mias["id"]);
    assert_eq!(
        app.audit(c.case.case_id).await,
        vec![event("acquired", &mias, &c.mia, c.mia.id)]
    );
}

/// `DELETE /locks?session=mine` is the only form, and needs a tab.
async fn releasing_a_whole_tab_needs_session_mine_from_a_tab((app, c): (TestApp, Cast)) {
    let tab1 = c.bob.tab("tab-1");
    app.lock(&tab1, "Card", c.case.card_id).await;
    app.delete("/locks?session=mine")
        .by(&c.bob)
        .send()
        .await
        .expect_error(422, "invalid");
    app.delete("/locks?session=all")
        .by(&tab1)
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn releasing_a_whole_tab_ends_that_tabs_locks_only((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let tab1 = c.bob.tab("tab-1");
    let tab2 = c.bob.tab("tab-2");
    app.lock(&tab1, "Card", f.card_id).await;
    app.lock(&tab1, "Page", f.page_id).await;
    app.lock(&tab2, "Edgenote", f.edgenote_id).await;

    app.delete("/locks?session=mine")
        .by(&tab1)
        .send()
        .await
        .expect(204);

    let left = app.get("/locks?case=c").by(&c.bob).send().await.expect(200);
    let left = left.body.as_array().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["sessionId"], "tab-2");
}

// ---- The guard on writes ----

on_both_backends!(TestApp::with_cast =>
    anyone_with_the_role_writes_an_unlocked_record,
    someone_elses_write_is_locked_out_with_the_lock_and_the_record,
    another_tab_of_the_holder_is_locked_out,
    someone_elses_delete_is_locked_out,
    the_holder_writes_with_or_without_its_token,
    the_holders_write_renews_the_locks_activity,
    a_token_that_is_not_the_current_lock_is_lock_lost,
    a_malformed_lock_token_is_a_bad_request,
    a_released_locks_token_is_lock_lost_and_changes_nothing,
    the_holder_deleting_its_record_ends_its_lock,
);

fn edit(text: &str) -> Value {
    json!({ "card": { "content": text } })
}

async fn anyone_with_the_role_writes_an_unlocked_record((app, c): (TestApp, Cast)) {
    let written = app
        .patch(&format!("/cards/{}", c.case.card_id))
        .by(&c.carol)
        .json(edit("carol, unlocked"))
        .send()
        .await
        .expect(200);
    assert_eq!(written.body["content"], "carol, unlocked");
}

async fn someone_elses_write_is_locked_out_with_the_lock_and_the_record((app, c): (TestApp, Cast)) {
    let card = format!("/cards/{}", c.case.card_id);
    app.patch(&card)
        .by(&c.carol)
        .json(edit("carol, unlocked"))
        .send()
        .await
        .expect(200);
    let lock = app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    let locked = app
        .patch(&card)
        .by(&c.carol)
        .json(edit("carol, locked out"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(locked.body["error"]["lock"]["id"], lock["id"]);
    assert_eq!(
        locked.body["error"]["lockable"]["content"],
        "carol, unlocked"
    );
}

/// The same user in another tab is someone else too.
async fn another_tab_of_the_holder_is_locked_out((app, c): (TestApp, Cast)) {
    app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    app.patch(&format!("/cards/{}", c.case.card_id))
        .by(&c.bob.tab("bob-2"))
        .json(edit("other tab"))
        .send()
        .await
        .expect_error(423, "locked");
}

async fn someone_elses_delete_is_locked_out((app, c): (TestApp, Cast)) {
    app.lock(&c.bob.tab("bob-1"), "Card", c.case.card_id).await;
    app.delete(&format!("/cards/{}", c.case.card_id))
        .by(&c.carol)
        .send()
        .await
        .expect_error(423, "locked");
}

async fn the_holder_writes_with_or_without_its_token((app, c): (TestApp, Cast)) {
    let card = format!("/cards/{}", c.case.card_id);
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    let token = lock["token"].as_str().unwrap();
    app.patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", token)
        .json(edit("bob 1"))
        .send()
        .await
        .expect(200);
    app.patch(&card)
        .by(&bob_tab)
        .json(edit("bob 2"))
        .send()
        .await
        .expect(200);
}

async fn the_holders_write_renews_the_locks_activity((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    let token = lock["token"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    app.patch(&format!("/cards/{}", c.case.card_id))
        .by(&bob_tab)
        .header("Lock-Token", token)
        .json(edit("bob 1"))
        .send()
        .await
        .expect(200);
    let renewed = app
        .get(&format!("/locks/{token}"))
        .by(&c.bob)
        .send()
        .await
        .expect(200);
    assert!(renewed.body["lastActivityAt"].as_str() > lock["lastActivityAt"].as_str());
}

/// Even for the holder.
async fn a_token_that_is_not_the_current_lock_is_lock_lost((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    app.lock(&bob_tab, "Card", c.case.card_id).await;
    app.patch(&format!("/cards/{}", c.case.card_id))
        .by(&bob_tab)
        .header("Lock-Token", "999999")
        .json(edit("x"))
        .send()
        .await
        .expect_error(412, "lock_lost");
}

async fn a_malformed_lock_token_is_a_bad_request((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    app.lock(&bob_tab, "Card", c.case.card_id).await;
    app.patch(&format!("/cards/{}", c.case.card_id))
        .by(&bob_tab)
        .header("Lock-Token", "twelve")
        .json(edit("x"))
        .send()
        .await
        .expect_error(400, "bad_request");
}

/// After release nobody holds the record, yet the old token still gets 412
/// (with the current record), for writes and deletes alike.
async fn a_released_locks_token_is_lock_lost_and_changes_nothing((app, c): (TestApp, Cast)) {
    let card = format!("/cards/{}", c.case.card_id);
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    let token = lock["token"].as_str().unwrap();
    let saved = app
        .patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", token)
        .json(edit("bob 2"))
        .send()
        .await
        .expect(200);
    app.release(&bob_tab, id(&lock)).await;

    let lost = app
        .patch(&card)
        .by(&bob_tab)
        .header("Lock-Token", token)
        .json(edit("stale"))
        .send()
        .await
        .expect_error(412, "lock_lost");
    assert_eq!(lost.body["error"]["current"]["content"], "bob 2");
    app.delete(&card)
        .by(&bob_tab)
        .header("Lock-Token", token)
        .send()
        .await
        .expect_error(412, "lock_lost");

    let now = app.get(&card).by(&c.carol).send().await.expect(200);
    assert_eq!(now.body["content"], "bob 2");
    assert_eq!(now.body["version"], saved.body["version"]);
    assert_eq!(now.body["version"], 2);
}

async fn the_holder_deleting_its_record_ends_its_lock((app, c): (TestApp, Cast)) {
    let bob_tab = c.bob.tab("bob-1");
    let lock = app.lock(&bob_tab, "Card", c.case.card_id).await;
    app.delete(&format!("/cards/{}", c.case.card_id))
        .by(&bob_tab)
        .send()
        .await
        .expect(204);
    app.assert_lock_gone(&c.bob, id(&lock)).await;
    let audit = app.audit(c.case.case_id).await;
    assert_eq!(audit.last().unwrap().0, "released");
}

// ---- Deletes, and two takeover stories ----

on_both_backends!(TestApp::with_cast =>
    deletes_respect_child_locks,
    a_manager_deletes_the_case_while_holding_locks_in_it,
);
on_both_backends!(TestApp::start =>
    takeover_story_lock_token,
    takeover_story_if_match,
);

async fn deletes_respect_child_locks((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bobs = app.lock(&c.bob, "Card", f.card_id).await;
    let refused = app
        .delete(&format!("/pages/{}", f.page_id))
        .by(&c.carol)
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(refused.body["error"]["lock"]["id"], bobs["id"]);
    app.delete("/cases/c")
        .by(&c.mia)
        .send()
        .await
        .expect_error(423, "locked");
    app.get(&format!("/cards/{}", f.card_id))
        .by(&c.carol)
        .send()
        .await
        .expect(200);

    // Bob may delete the page: his own card lock is released with it.
    app.delete(&format!("/pages/{}", f.page_id))
        .by(&c.bob)
        .send()
        .await
        .expect(204);
    app.assert_lock_gone(&c.bob, id(&bobs)).await;
    app.delete("/cases/c").by(&c.mia).send().await.expect(204);
}

/// The manager's own locks in the case end with it (announced to its tabs),
/// and the case goes whole, its audit trail with it.
async fn a_manager_deletes_the_case_while_holding_locks_in_it((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let mias = app.lock(&c.mia, "Card", f.card_id).await;
    app.lock(&c.mia, "Page", f.page_id).await;
    let (mut rita_tab, _) = app.open_tab("c", &c.rita.tab("rita-tab")).await;
    app.delete("/cases/c").by(&c.mia).send().await.expect(204);
    app.get("/cases/c").by(&c.mia).send().await.expect(404);
    let ended = rita_tab
        .next_where("the end of Mia's card lock", |f| {
            f["type"] == "destroy" && f["watchable"]["id"] == mias["id"]
        })
        .await;
    assert_eq!(ended["watchable"]["reason"], "released");
    let trail = app.get("/cases").by(&c.mia).send().await.expect(200);
    assert!(
        !trail.body.to_string().contains("\"slug\":\"c\""),
        "{}",
        trail.body
    );
}

/// A locks and edits, B takes over, B saves, B releases, A saves with its
/// Lock-Token → 412 lock_lost, and B's content survives.
async fn takeover_story_lock_token(app: TestApp) {
    let a = app.user("Ann").await.tab("ann-tab");
    let b = app.user("Ben").await.tab("ben-tab");
    let f = app
        .case("c", &[(&a, Role::Editor), (&b, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);

    let a_lock = app.lock(&a, "Card", f.card_id).await;
    let a_token = a_lock["token"].as_str().unwrap().to_owned();
    app.patch(&card)
        .by(&a)
        .header("Lock-Token", &a_token)
        .json(json!({ "card": { "content": "A1" } }))
        .send()
        .await
        .expect(200);

    let b_lock = app.takeover(&b, "Card", f.card_id).await;
    let b_token = b_lock["token"].as_str().unwrap().to_owned();
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
async fn takeover_story_if_match(app: TestApp) {
    let a = app.user("Ann").await.tab("ann-tab");
    let b = app.user("Ben").await.tab("ben-tab");
    let f = app
        .case("c", &[(&a, Role::Editor), (&b, Role::Editor)])
        .await;
    let card = format!("/cards/{}", f.card_id);

    app.lock(&a, "Card", f.card_id).await;
    let a_saved = app
        .patch(&card)
        .by(&a)
        .json(json!({ "card": { "content": "A1" } }))
        .send()
        .await
        .expect(200);
    let a_etag = a_saved.etag().unwrap();

    let b_lock = app.takeover(&b, "Card", f.card_id).await;
    app.patch(&card)
        .by(&b)
        .header("If-Match", &a_etag)
        .json(json!({ "card": { "content": "B1" } }))
        .send()
        .await
        .expect(200);
    app.release(&b, id(&b_lock)).await;

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

// ---- The reaper ----

on_both_backends!(with_a_quick_reaper =>
    a_lock_whose_lease_runs_out_is_expired,
    a_lock_without_activity_is_ended_as_idle_though_its_lease_is_renewed,
);

/// A server whose locks last 400 ms, idle out after 1.2 s, and are reaped
/// every 50 ms; the [`Cast`] on case `c`.
async fn with_a_quick_reaper(backend: Backend) -> Option<(TestApp, Cast)> {
    let app = TestApp::start_with(backend, |s| {
        s.lock_ttl = Duration::from_millis(400);
        s.idle_timeout = Duration::from_millis(1200);
        s.reaper_interval = Duration::from_millis(50);
    })
    .await?;
    let cast = app.cast().await;
    Some((app, cast))
}

/// The ends of locks the audit trail records (every action but `acquired`),
/// as (action, lock, actor).
async fn ends(app: &TestApp, case_id: i64) -> Vec<(String, i64, Option<i64>)> {
    app.audit(case_id)
        .await
        .into_iter()
        .filter(|(a, ..)| a != "acquired")
        .map(|(a, lock, actor, _)| (a, lock, actor))
        .collect()
}

/// The lock destroy frames until one for `lock_id` arrived, as (lock, reason).
async fn lock_destroys_until(rx: &mut Receiver<Arc<Frame>>, lock_id: i64) -> Vec<(i64, String)> {
    let ended = |got: &[Value]| {
        got.iter()
            .any(|e| e["type"] == "destroy" && e["watchable"]["id"] == lock_id)
    };
    frames_until(rx, ended)
        .await
        .iter()
        .filter(|e| e["type"] == "destroy" && e["watchable"]["type"] == "Lock")
        .map(|e| {
            (
                e["watchable"]["id"].as_i64().unwrap(),
                e["watchable"]["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// No refresh, so the lease runs out; the record is free again.
async fn a_lock_whose_lease_runs_out_is_expired((app, c): (TestApp, Cast)) {
    let mut events = app.state.realtime.hub.subscribe(CaseId(c.case.case_id));
    let lock = app.lock(&c.bob, "Card", c.case.card_id).await;
    let lock_id = id(&lock);
    tokio::time::sleep(Duration::from_millis(900)).await;
    app.assert_lock_gone(&c.bob, lock_id).await;
    app.lock(&c.carol, "Card", c.case.card_id).await;

    let ends = ends(&app, c.case.case_id).await;
    assert!(
        ends.contains(&("expired".into(), lock_id, None)),
        "{ends:?}"
    );
    assert_eq!(
        ends.iter().filter(|(_, id, _)| *id == lock_id).count(),
        1,
        "ended once"
    );
    let destroyed = lock_destroys_until(&mut events, lock_id).await;
    assert!(
        destroyed.contains(&(lock_id, "expired".into())),
        "{destroyed:?}"
    );
}

/// Refresh is activity, so the lease is kept alive without activity by
/// renewing only `expires_at` (what a pong does), and the idle timeout ends
/// the lock.
async fn a_lock_without_activity_is_ended_as_idle_though_its_lease_is_renewed(
    (app, c): (TestApp, Cast),
) {
    let mut events = app.state.realtime.hub.subscribe(CaseId(c.case.case_id));
    let idle = app.lock(&c.bob, "Page", c.case.page_id).await;
    let idle_id = id(&idle);
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let db = app.state.db.clone();
        db.write(None, move |tx| {
            let until = baton::clock::after(tx.now, Duration::from_millis(400));
            baton::models::Lock::renew(tx.conn, LockId(idle_id), until, None)
                .map_err(baton::error::AppError::from)
        })
        .await
        .unwrap();
    }
    app.assert_lock_gone(&c.bob, idle_id).await;

    let ends = ends(&app, c.case.case_id).await;
    assert!(ends.contains(&("idle".into(), idle_id, None)), "{ends:?}");
    assert_eq!(
        ends.iter().filter(|(_, id, _)| *id == idle_id).count(),
        1,
        "ended once"
    );
    let destroyed = lock_destroys_until(&mut events, idle_id).await;
    assert!(
        destroyed.contains(&(idle_id, "idle".into())),
        "{destroyed:?}"
    );
}

// ---- Events for the realtime layer ----

on_both_backends!(TestApp::with_cast =>
    changes_are_broadcast_after_commit_in_commit_order,
    refused_writes_and_locks_broadcast_nothing,
    a_cases_events_reach_only_its_own_subscribers,
    an_overridden_locks_destroy_says_why_and_by_whom,
);

/// Frames as (type, "Type/param", editor session).
fn summaries(frames: &[Value]) -> Vec<(String, String, Option<String>)> {
    frames
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
        .collect()
}

/// Bob locks and writes, Carol is refused a write and a lock, then takes
/// the card over and releases it: each committed change is one frame, in
/// commit order, naming the tab that made it.
async fn changes_are_broadcast_after_commit_in_commit_order((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    let mut events = app.state.realtime.hub.subscribe(CaseId(f.case_id));

    let lock = app.lock(&bob, "Card", f.card_id).await;
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(edit("hi"))
        .send()
        .await
        .expect(200);
    // Refused writes broadcast nothing.
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .json(edit("no"))
        .send()
        .await
        .expect(423);
    app.lock_expect(&carol, lock_body("Card", f.card_id), 409)
        .await;
    let taken = app.takeover(&carol, "Card", f.card_id).await;
    app.release(&carol, id(&taken)).await;

    let got = summaries(&frames(&mut events, 5).await);
    let lock_key = format!("Lock/{}", lock["id"]);
    let taken_key = format!("Lock/{}", taken["id"]);
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
}

/// Between Bob's lock and its release, Carol's refused write, delete and
/// lock leave no frame.
async fn refused_writes_and_locks_broadcast_nothing((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    let mut events = app.state.realtime.hub.subscribe(CaseId(f.case_id));

    let lock = app.lock(&bob, "Card", f.card_id).await;
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .json(edit("no"))
        .send()
        .await
        .expect(423);
    app.delete(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .send()
        .await
        .expect(423);
    app.lock_expect(&carol, lock_body("Card", f.card_id), 409)
        .await;
    app.release(&bob, id(&lock)).await;

    let lock_key = format!("Lock/{}", lock["id"]);
    let bob_s = Some("bob-tab".to_string());
    assert_eq!(
        summaries(&frames(&mut events, 2).await),
        vec![
            ("create".into(), lock_key.clone(), bob_s.clone()),
            ("destroy".into(), lock_key, bob_s),
        ]
    );
}

async fn a_cases_events_reach_only_its_own_subscribers((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let other = app.case("other", &[(&bob, Role::Editor)]).await;
    let mut events = app.state.realtime.hub.subscribe(CaseId(f.case_id));
    let mut other_events = app.state.realtime.hub.subscribe(CaseId(other.case_id));

    let lock = app.lock(&bob, "Card", f.card_id).await;
    app.patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(edit("hi"))
        .send()
        .await
        .expect(200);
    app.release(&bob, id(&lock)).await;
    frames(&mut events, 3).await;
    // Frames come in commit order, so anything of the other case would be here by now.
    assert!(other_events.try_recv().is_err(), "no cross-case events");
}

async fn an_overridden_locks_destroy_says_why_and_by_whom((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let mut events = app.state.realtime.hub.subscribe(CaseId(f.case_id));
    let bobs = app.lock(&c.bob.tab("bob-tab"), "Card", f.card_id).await;
    app.takeover(&c.carol.tab("carol-tab"), "Card", f.card_id)
        .await;
    let destroy = frames(&mut events, 2)
        .await
        .into_iter()
        .find(|e| e["type"] == "destroy")
        .unwrap();
    assert_eq!(destroy["watchable"]["id"], bobs["id"]);
    assert_eq!(destroy["watchable"]["reason"], "overridden");
    assert_eq!(destroy["watchable"]["overriddenBy"]["name"], "Carol");
    assert_eq!(destroy["watchable"]["table"], "locks");
}

// ---- The audit trail route ----

on_both_backends!(TestApp::with_cast =>
    audit_trail_route,
);

async fn audit_trail_route((app, c): (TestApp, Cast)) {
    let lock = app.lock(&c.bob, "Card", c.case.card_id).await;
    app.release(&c.bob, id(&lock)).await;

    let trail = app
        .get("/cases/c/lock_events")
        .by(&c.mia)
        .send()
        .await
        .expect(200);
    let trail = trail.body.as_array().unwrap();
    assert_eq!(trail.len(), 2);
    assert_eq!(trail[0]["action"], "released", "newest first");
    assert_eq!(trail[1]["action"], "acquired");
    assert_eq!(trail[0]["lockId"], lock["id"]);
    assert_eq!(trail[0]["lockable"]["type"], "Card");
    assert_eq!(trail[0]["actor"]["id"], c.bob.id);
    let one = app
        .get("/cases/c/lock_events?limit=1")
        .by(&c.mia)
        .send()
        .await
        .expect(200);
    assert_eq!(one.body.as_array().unwrap().len(), 1);
    let before = app
        .get(&format!("/cases/c/lock_events?before={}", trail[0]["id"]))
        .by(&c.mia)
        .send()
        .await
        .expect(200);
    assert_eq!(before.body[0]["action"], "acquired");
    app.get("/cases/c/lock_events?limit=0")
        .by(&c.mia)
        .send()
        .await
        .expect_error(422, "invalid");
    app.get("/cases/c/lock_events")
        .by(&c.bob)
        .send()
        .await
        .expect_error(403, "forbidden");
}

on_both_backends!(a_lock_change_is_one_row_of_the_event_stream,);

/// The audit trail and the broadcasts are one stream: each lock change
/// (a grant, a takeover's end and grant, a release) writes one row, its
/// audit entry, which on PostgreSQL also carries the frame every instance
/// delivers. The same on the fast path and the general path.
async fn a_lock_change_is_one_row_of_the_event_stream(backend: Backend) {
    use baton::db::schema::events;
    use diesel::prelude::*;

    for fast_path in [true, false] {
        let Some(app) = TestApp::start_with(backend, |s| s.lock_fast_path = fast_path).await else {
            return;
        };
        let c = app.cast().await;
        let card = c.case.card_id;
        let last_before = |conn: &mut baton::db::DbConn| {
            events::table
                .select(diesel::dsl::max(events::id))
                .get_result::<Option<i64>>(conn)
                .map_err(baton::error::AppError::from)
        };
        let from = app.state.db.read(last_before).await.unwrap().unwrap_or(0);

        let bob = c.bob.tab("bob-tab");
        app.lock_expect(&bob, lock_body("Card", card), 201).await;
        let taken = app.takeover(&c.mia, "Card", card).await;
        app.release(&c.mia, id(&taken)).await;

        let rows: Vec<(Option<String>, bool)> = app
            .state
            .db
            .read(move |conn| {
                events::table
                    .filter(events::id.gt(from))
                    .order(events::id)
                    .select((events::action, events::payload.is_not_null()))
                    .load(conn)
                    .map_err(baton::error::AppError::from)
            })
            .await
            .unwrap();
        let framed = backend == Backend::Postgres;
        let expected: Vec<(Option<String>, bool)> =
            ["acquired", "overridden", "acquired", "released"]
                .into_iter()
                .map(|action| (Some(action.to_owned()), framed))
                .collect();
        assert_eq!(rows, expected, "fast path {fast_path}");
    }
}
