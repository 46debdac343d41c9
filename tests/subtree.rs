//! Subtree (deep) locks, `depth: "infinity"` on a page or a case, on both
//! databases: conflicts in every direction, records created later, the
//! guard's 423 inside, the holder's own tab inside, deep takeovers, and the
//! same across two instances on PostgreSQL.

mod beyond;
mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use baton::models::Role;
use beyond::{
    assert_held_by, case_locks, claim, deep_body, deep_lock, deep_takeover_body, edit, id_set,
    ids_of, lock_set, lockable_key, new_card, new_page,
};
use common::line::wait_body;
use common::{id, lock_body, takeover_body, Backend, Cast, Resp, ServerProcess, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

on_both_backends!(TestApp::with_cast =>
    every_lock_carries_its_depth,
    a_deep_lock_is_refused_while_someone_holds_the_record_itself,
    a_deep_page_lock_is_refused_while_someone_holds_a_card_on_it,
    a_lock_inside_a_deep_page_lock_is_refused_naming_it,
    a_deep_case_lock_is_refused_while_someone_holds_anything_in_the_case,
    nothing_in_a_deep_locked_case_can_be_locked_by_someone_else,
    deep_locks_on_nested_records_exclude_each_other,
    records_created_later_are_covered,
    the_guard_answers_423_inside_a_deep_page_lock,
    the_guard_answers_423_inside_a_deep_case_lock,
    the_deep_holders_tab_locks_and_writes_inside,
    a_tab_deepens_its_own_lock_and_a_shallow_ask_renews_a_deep_one,
    a_deep_takeover_ends_every_conflicting_lock_inside,
    a_takeover_does_not_get_past_a_deep_lock_on_an_ancestor,
    depth_infinity_on_a_card_is_invalid_also_inside_a_deep_lock,
    a_deep_takeover_is_outranked_when_anyone_inside_outranks_the_caller,
    depth_infinity_is_for_pages_and_cases_and_never_waits,
    sets_and_claims_respect_deep_locks,
    a_plain_refusal_names_its_lock_in_locks_too,
    a_tab_locks_deeply_over_its_own_locks_inside,
    the_deep_lock_token_story,
    a_deep_case_takeover_ends_deep_page_locks_and_everything_else,
    the_deep_holder_deletes_its_page_and_its_lock_ends,
    the_status_of_a_card_inside_a_deep_lock_is_locked,
    a_deep_lock_ends_the_lines_inside_it,
);
on_both_backends!(deep_and_shallow_lockers_racing_never_overlap,);

/// `user` writes `path` (`{card: {content}}` and friends): the response.
async fn write(
    app: &TestApp,
    method: Method,
    path: &str,
    user: &common::TestUser,
    body: Value,
) -> Resp {
    app.req(method, path).by(user).json(body).send().await
}

/// Asserts a 423 `locked` naming `deep` and, as `lockable`, its record.
#[track_caller]
fn assert_locked_by_deep(refused: &Resp, deep: &Value, what: &str) {
    assert_eq!(refused.status, 423, "{what}: {}", refused.body);
    let error = &refused.body["error"];
    assert_eq!(error["code"], "locked", "{what}: {}", refused.body);
    assert_eq!(
        error["lock"]["id"], deep["id"],
        "{what}: `lock` is the deep lock: {}",
        refused.body
    );
    assert_eq!(
        error["lock"]["depth"], "infinity",
        "{what}: {}",
        refused.body
    );
    assert_eq!(
        error["lockable"]["type"], deep["lockable"]["type"],
        "{what}: `lockable` is the deep-locked record: {}",
        refused.body
    );
    assert_eq!(
        error["lockable"]["param"], deep["lockable"]["param"],
        "{what}: `lockable` is the deep-locked record: {}",
        refused.body
    );
}

/// Asserts a 409 `lock_held` naming only the deep lock `deep`.
#[track_caller]
fn assert_inside(refused: &Resp, deep: &Value, what: &str) {
    assert_eq!(refused.status, 409, "{what}: {}", refused.body);
    assert_eq!(
        refused.body["error"]["code"], "lock_held",
        "{what}: {}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lock"]["id"], deep["id"],
        "{what}: `lock` is the deep lock: {}",
        refused.body
    );
    assert_eq!(
        id_set(&refused.body["error"]["locks"]),
        BTreeSet::from([id(deep)]),
        "{what}: `locks` is the deep lock: {}",
        refused.body
    );
}

async fn every_lock_carries_its_depth((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let bob = c.bob.tab("bob-tab");
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    assert_eq!(lockable_key(&deep), format!("Page/{}", f.page_id));
    assert_eq!(deep["type"], "Lock");
    let plain = app
        .lock(&c.carol.tab("carol-tab"), "Edgenote", f.edgenote_id)
        .await;
    assert_eq!(plain["depth"], "0", "{plain}");

    // In the create frames.
    for want in [&deep, &plain] {
        let frame = watcher
            .next_where("a lock's create", |f| {
                f["type"] == "create" && f["watchable"]["id"] == want["id"]
            })
            .await;
        assert_eq!(frame["watchable"]["depth"], want["depth"], "{frame}");
    }
    // GET /locks/:id, GET /locks?case=, GET /locks/status, GET /cases/:slug.
    let shown = app
        .get(&format!("/locks/{}", deep["id"]))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["depth"], "infinity");
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(listed.len(), 2);
    for lock in &listed {
        let want = if lock["id"] == deep["id"] {
            "infinity"
        } else {
            "0"
        };
        assert_eq!(lock["depth"], want, "{lock}");
    }
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Page&lockableParam={}",
            f.page_id
        ))
        .by(&c.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(status.body["lock"]["depth"], "infinity", "{}", status.body);
    let case = app.get("/cases/c").by(&c.rita).send().await.expect(200);
    let active = case.body["activeLocks"].as_array().unwrap();
    assert_eq!(active.len(), 2);
    assert!(active
        .iter()
        .all(|l| l["depth"] == "0" || l["depth"] == "infinity"));
    // In a welcome.
    let (_, welcome) = app.open_tab(&f.slug, &c.mia.tab("mia-tab")).await;
    let welcomed = welcome["activeLocks"].as_array().unwrap();
    assert_eq!(welcomed.len(), 2, "{welcome}");
    for lock in welcomed {
        let want = if lock["id"] == deep["id"] {
            "infinity"
        } else {
            "0"
        };
        assert_eq!(lock["depth"], want, "{lock}");
    }
    // In a 409.
    let refused = app
        .lock_error(&c.carol, lock_body("Page", f.page_id), 409, "lock_held")
        .await;
    assert_eq!(refused.body["error"]["lock"]["depth"], "infinity");
}

async fn a_deep_lock_is_refused_while_someone_holds_the_record_itself((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carols_page = app.lock(&c.carol.tab("carol-tab"), "Page", f.page_id).await;
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Page", f.page_id))
        .send()
        .await;
    assert_held_by(&refused, &[&carols_page]);

    let carols_case = app.lock(&c.carol.tab("carol-tab"), "Case", f.case_id).await;
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Case", f.case_id))
        .send()
        .await;
    assert_held_by(&refused, &[&carols_case, &carols_page]);
    assert_eq!(
        ids_of(&case_locks(&app, &c.rita, &f.slug).await),
        ids_of([&carols_page, &carols_case])
    );
}

/// Cards on the page held by others (another user, another tab of the
/// same user): the deep page lock is refused naming all of them. A card on
/// another page is not in the way.
async fn a_deep_page_lock_is_refused_while_someone_holds_a_card_on_it((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let second = app.card(f, "second").await;
    let other_page = new_page(&app, &c.mia, &f.slug, "Page two").await;
    let elsewhere = id(&new_card(&app, &c.mia, other_page, "elsewhere").await);
    let bob = c.bob.tab("bob-tab");
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", f.card_id).await;
    let bobs_other_tab = app.lock(&c.bob.tab("bob-2"), "Card", second).await;
    let carols_elsewhere = app.lock(&c.carol.tab("carol-tab"), "Card", elsewhere).await;

    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Page", f.page_id))
        .send()
        .await;
    assert_held_by(&refused, &[&carols, &bobs_other_tab]);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 3);

    app.release(&c.carol.tab("carol-tab"), id(&carols)).await;
    app.release(&c.bob.tab("bob-2"), id(&bobs_other_tab)).await;
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    // Carol's card on the other page stays hers.
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&deep, &carols_elsewhere]));
}

async fn a_lock_inside_a_deep_page_lock_is_refused_naming_it((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carol = c.carol.tab("carol-tab");
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Page", f.page_id).await;

    let asked = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "a card lock inside");
    let asked = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Page", f.page_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "a lock on the deep-locked page");
    let asked = app
        .post("/locks")
        .by(&c.bob.tab("bob-2"))
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "the holder's other tab");
    let asked = app
        .post("/locks")
        .by(&c.mia.tab("mia-tab"))
        .json(takeover_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "a takeover of a card inside");
    // Outside the page: free.
    app.lock(&carol, "Edgenote", f.edgenote_id).await;
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
}

async fn a_deep_case_lock_is_refused_while_someone_holds_anything_in_the_case(
    (app, c): (TestApp, Cast),
) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    for (lockable_type, lockable_id) in [
        ("Page", f.page_id),
        ("Card", f.card_id),
        ("Edgenote", f.edgenote_id),
    ] {
        let held = app.lock(&carol, lockable_type, lockable_id).await;
        let refused = app
            .post("/locks")
            .by(&bob)
            .json(deep_body("Case", f.case_id))
            .send()
            .await;
        assert_held_by(&refused, &[&held]);
        app.release(&carol, id(&held)).await;
    }
    let page = app.lock(&carol, "Page", f.page_id).await;
    let card = app.lock(&c.mia.tab("mia-tab"), "Card", f.card_id).await;
    let note = app.lock(&carol, "Edgenote", f.edgenote_id).await;
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Case", f.case_id))
        .send()
        .await;
    assert_held_by(&refused, &[&page, &card, &note]);
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 3);
}

async fn nothing_in_a_deep_locked_case_can_be_locked_by_someone_else((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carol = c.carol.tab("carol-tab");
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Case", f.case_id).await;
    for (what, body) in [
        ("the page", lock_body("Page", f.page_id)),
        ("the card", lock_body("Card", f.card_id)),
        ("the edgenote", lock_body("Edgenote", f.edgenote_id)),
        ("the case itself", lock_body("Case", f.case_id)),
        ("a deep page lock", deep_body("Page", f.page_id)),
    ] {
        let asked = app.post("/locks").by(&carol).json(body).send().await;
        assert_inside(&asked, &deep, what);
    }
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), BTreeSet::from([id(&deep)]));
}

async fn deep_locks_on_nested_records_exclude_each_other((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");
    let other_page = new_page(&app, &c.mia, &f.slug, "Page two").await;

    let bobs_page = deep_lock(&app, &bob, "Page", f.page_id).await;
    let refused = app
        .post("/locks")
        .by(&carol)
        .json(deep_body("Case", f.case_id))
        .send()
        .await;
    assert_held_by(&refused, &[&bobs_page]);
    let refused = app
        .post("/locks")
        .by(&carol)
        .json(deep_body("Page", f.page_id))
        .send()
        .await;
    assert_inside(&refused, &bobs_page, "a deep lock on a deep-locked page");
    // Another page: deep locks side by side.
    let carols_page = deep_lock(&app, &carol, "Page", other_page).await;
    let refused = app
        .post("/locks")
        .by(&c.mia.tab("mia-tab"))
        .json(deep_body("Case", f.case_id))
        .send()
        .await;
    assert_held_by(&refused, &[&bobs_page, &carols_page]);
    app.release(&bob, id(&bobs_page)).await;
    app.release(&carol, id(&carols_page)).await;

    let carols_case = deep_lock(&app, &carol, "Case", f.case_id).await;
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Page", f.page_id))
        .send()
        .await;
    assert_inside(
        &refused,
        &carols_case,
        "a deep page lock inside a deep case lock",
    );
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Case", f.case_id))
        .send()
        .await;
    assert_inside(&refused, &carols_case, "a deep lock on a deep-locked case");
}

/// A deep lock covers what is created in it later, by its holder.
async fn records_created_later_are_covered((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let carol = c.carol.tab("carol-tab");

    let on_page = deep_lock(&app, &bob, "Page", f.page_id).await;
    let card = id(&new_card(&app, &bob, f.page_id, "created under the deep lock").await);
    let asked = app
        .post("/locks")
        .by(&carol)
        .json(lock_body("Card", card))
        .send()
        .await;
    assert_inside(&asked, &on_page, "a card created later");
    let refused = write(
        &app,
        Method::PATCH,
        &format!("/cards/{card}"),
        &carol,
        edit("carol's"),
    )
    .await;
    assert_locked_by_deep(&refused, &on_page, "PATCH of a card created later");
    app.release(&bob, id(&on_page)).await;

    let on_case = deep_lock(&app, &bob, "Case", f.case_id).await;
    let page = new_page(&app, &bob, &f.slug, "created under the deep lock").await;
    let card = id(&new_card(&app, &bob, page, "on the new page").await);
    let note = app
        .post(&format!("/cases/{}/edgenotes", f.slug))
        .by(&bob)
        .json(json!({ "edgenote": { "slug": "later", "caption": "Later", "content": "body" } }))
        .send()
        .await
        .expect(201);
    for (what, body) in [
        ("a page created later", lock_body("Page", page)),
        ("a card created later", lock_body("Card", card)),
        (
            "an edgenote created later",
            lock_body("Edgenote", id(&note.body)),
        ),
    ] {
        let asked = app.post("/locks").by(&carol).json(body).send().await;
        assert_inside(&asked, &on_case, what);
    }
    let refused = write(
        &app,
        Method::PATCH,
        &format!("/pages/{page}"),
        &carol,
        json!({ "page": { "title": "carol's" } }),
    )
    .await;
    assert_locked_by_deep(&refused, &on_case, "PATCH of a page created later");
}

async fn the_guard_answers_423_inside_a_deep_page_lock((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carol = c.carol.tab("carol-tab");
    let card = format!("/cards/{}", f.card_id);
    let page = format!("/pages/{}", f.page_id);
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Page", f.page_id).await;

    let refused = write(&app, Method::PATCH, &card, &carol, edit("carol's")).await;
    assert_locked_by_deep(&refused, &deep, "PATCH of a card inside");
    let refused = write(
        &app,
        Method::PATCH,
        &card,
        &c.mia.tab("mia-tab"),
        edit("mia's"),
    )
    .await;
    assert_locked_by_deep(&refused, &deep, "a manager's PATCH of a card inside");
    let refused = app.delete(&card).by(&carol).send().await;
    assert_locked_by_deep(&refused, &deep, "DELETE of a card inside");
    let refused = write(
        &app,
        Method::POST,
        &format!("{page}/cards"),
        &carol,
        json!({ "card": { "content": "new" } }),
    )
    .await;
    assert_locked_by_deep(&refused, &deep, "a new card on the page");
    let refused = write(
        &app,
        Method::PATCH,
        &page,
        &carol,
        json!({ "page": { "title": "carol's" } }),
    )
    .await;
    assert_locked_by_deep(&refused, &deep, "PATCH of the page");
    let refused = app.delete(&page).by(&carol).send().await;
    assert_locked_by_deep(&refused, &deep, "DELETE of the page");

    // Nothing changed; outside the page, writes go through.
    let now = app.get(&card).by(&carol).send().await.expect(200);
    assert_eq!(now.body["content"], "first draft");
    assert_eq!(now.body["version"], 1);
    let shown = app.get(&page).by(&carol).send().await.expect(200);
    assert_eq!(shown.body["version"], 1);
    let cards_now = app.get("/cases/c").by(&carol).send().await.expect(200);
    assert_eq!(
        cards_now.body["pages"][0]["cards"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.patch(&format!("/edgenotes/{}", f.edgenote_id))
        .by(&carol)
        .json(json!({ "edgenote": { "caption": "outside" } }))
        .send()
        .await
        .expect(200);
}

async fn the_guard_answers_423_inside_a_deep_case_lock((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carol = c.carol.tab("carol-tab");
    let mia = c.mia.tab("mia-tab");
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Case", f.case_id).await;
    let note = format!("/edgenotes/{}", f.edgenote_id);

    let cases = [
        (
            "a new page",
            Method::POST,
            format!("/cases/{}/pages", f.slug),
            json!({ "page": { "title": "new" } }),
        ),
        (
            "a new edgenote",
            Method::POST,
            format!("/cases/{}/edgenotes", f.slug),
            json!({ "edgenote": { "slug": "new", "caption": "New", "content": "body" } }),
        ),
        (
            "a new card",
            Method::POST,
            format!("/pages/{}/cards", f.page_id),
            json!({ "card": { "content": "new" } }),
        ),
        (
            "PATCH of the edgenote",
            Method::PATCH,
            note.clone(),
            json!({ "edgenote": { "caption": "x" } }),
        ),
        (
            "PATCH of the card",
            Method::PATCH,
            format!("/cards/{}", f.card_id),
            edit("x"),
        ),
        (
            "PATCH of the page",
            Method::PATCH,
            format!("/pages/{}", f.page_id),
            json!({ "page": { "title": "x" } }),
        ),
    ];
    for (what, method, path, body) in cases {
        let refused = write(&app, method, &path, &carol, body).await;
        assert_locked_by_deep(&refused, &deep, what);
    }
    let refused = app.delete(&note).by(&carol).send().await;
    assert_locked_by_deep(&refused, &deep, "DELETE of the edgenote");
    let refused = write(
        &app,
        Method::PATCH,
        "/cases/c",
        &mia,
        json!({ "case": { "title": "x" } }),
    )
    .await;
    assert_locked_by_deep(&refused, &deep, "the manager's PATCH of the case");
    let refused = app.delete("/cases/c").by(&mia).send().await;
    assert_locked_by_deep(&refused, &deep, "the manager's DELETE of the case");

    let case = app.get("/cases/c").by(&carol).send().await.expect(200);
    assert_eq!(case.body["version"], 1);
    assert_eq!(
        case.body["pages"].as_array().unwrap().len(),
        1,
        "{}",
        case.body
    );
    assert_eq!(
        case.body["edgenotes"].as_array().unwrap().len(),
        1,
        "{}",
        case.body
    );
}

/// The deep lock's own tab locks and writes inside it; its user's other
/// tab is someone else.
async fn the_deep_holders_tab_locks_and_writes_inside((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let card = format!("/cards/{}", f.card_id);
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;

    let card_lock = app.lock(&bob, "Card", f.card_id).await;
    assert_eq!(card_lock["depth"], "0");
    app.patch(&card)
        .by(&bob)
        .header("Lock-Token", card_lock["token"].as_str().unwrap())
        .json(edit("bob's"))
        .send()
        .await
        .expect(200);
    app.patch(&format!("/pages/{}", f.page_id))
        .by(&bob)
        .json(json!({ "page": { "title": "bob's" } }))
        .send()
        .await
        .expect(200);
    let created = new_card(&app, &bob, f.page_id, "bob's new card").await;
    app.delete(&format!("/cards/{}", created["id"]))
        .by(&bob)
        .send()
        .await
        .expect(204);

    let refused = write(
        &app,
        Method::PATCH,
        &card,
        &c.bob.tab("bob-2"),
        edit("other tab"),
    )
    .await;
    assert_eq!(refused.status, 423, "{}", refused.body);
    app.lock_error(&c.carol, lock_body("Card", f.card_id), 409, "lock_held")
        .await;

    // Without the deep lock, the card lock is still Bob's.
    app.release(&bob, id(&deep)).await;
    let refused = write(&app, Method::PATCH, &card, &c.carol, edit("carol's"))
        .await
        .expect_error(423, "locked");
    assert_eq!(refused.body["error"]["lock"]["id"], card_lock["id"]);
    assert_eq!(refused.body["error"]["lock"]["depth"], "0");
}

async fn a_tab_deepens_its_own_lock_and_a_shallow_ask_renews_a_deep_one((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let shallow = app.lock(&bob, "Page", f.page_id).await;
    assert_eq!(shallow["depth"], "0");

    // Someone holds a card on the page: deepening is refused, the lock stays shallow.
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", f.card_id).await;
    let refused = app
        .post("/locks")
        .by(&bob)
        .json(deep_body("Page", f.page_id))
        .send()
        .await;
    assert_held_by(&refused, &[&carols]);
    let shown = app
        .get(&format!("/locks/{}", shallow["id"]))
        .by(&bob)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["depth"], "0");
    app.release(&c.carol.tab("carol-tab"), id(&carols)).await;

    let deepened = app
        .lock_expect(&bob, deep_body("Page", f.page_id), 200)
        .await
        .body;
    assert_eq!(deepened["id"], shallow["id"], "{deepened}");
    assert_eq!(deepened["token"], shallow["token"], "{deepened}");
    assert_eq!(deepened["depth"], "infinity", "{deepened}");
    let asked = app
        .post("/locks")
        .by(&c.carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deepened, "a card lock inside the deepened lock");

    actix_web::rt::time::sleep(Duration::from_millis(1100)).await;
    let renewed = app
        .lock_expect(&bob, lock_body("Page", f.page_id), 200)
        .await
        .body;
    assert_eq!(renewed["id"], shallow["id"], "{renewed}");
    assert_eq!(
        renewed["depth"], "infinity",
        "a shallow ask keeps the lock deep: {renewed}"
    );
    assert!(
        beyond::instant(&renewed["expiresAt"]) > beyond::instant(&deepened["expiresAt"]),
        "renewed: {} then {}",
        deepened["expiresAt"],
        renewed["expiresAt"]
    );
    assert_eq!(case_locks(&app, &c.rita, &f.slug).await.len(), 1);
}

/// Mia (manager) takes the page over deeply: every lock of others inside
/// and on it ends `overridden` (each its own destroy, before her lock's
/// create); a lock outside the page stays.
async fn a_deep_takeover_ends_every_conflicting_lock_inside((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let second = app.card(f, "second").await;
    let carol = c.carol.tab("carol-tab");
    let bob = c.bob.tab("bob-tab");
    let mia = c.mia.tab("mia-tab");
    let carols_card = app.lock(&carol, "Card", f.card_id).await;
    let bobs_card = app.lock(&bob, "Card", second).await;
    let carols_page = app.lock(&carol, "Page", f.page_id).await;
    let bobs_note = app.lock(&bob, "Edgenote", f.edgenote_id).await;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;

    let taken = app
        .lock_expect(&mia, deep_takeover_body("Page", f.page_id), 201)
        .await
        .body;
    assert_eq!(taken["depth"], "infinity", "{taken}");
    assert_eq!(taken["sessionId"], "mia-tab");
    let frames = watcher
        .collect_until("the deep lock's create", Duration::from_secs(10), |f| {
            f["type"] == "create" && f["watchable"]["id"] == taken["id"]
        })
        .await;
    let destroyed: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "destroy" && f["watchable"]["type"] == "Lock")
        .collect();
    assert_eq!(
        ids_of(destroyed.iter().map(|f| &f["watchable"])),
        ids_of([&carols_card, &bobs_card, &carols_page]),
        "frames: {frames:?}"
    );
    for frame in &destroyed {
        assert_eq!(frame["watchable"]["reason"], "overridden", "{frame}");
        assert_eq!(frame["watchable"]["overriddenBy"]["name"], "Mia", "{frame}");
        assert_eq!(frame["editorSessionId"], "mia-tab", "{frame}");
    }
    for lock in [&carols_card, &bobs_card, &carols_page] {
        app.assert_lock_gone(&c.rita, id(lock)).await;
    }
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&taken, &bobs_note]));

    let audit = app.audit(f.case_id).await;
    let overridden: BTreeSet<i64> = audit
        .iter()
        .filter(|(action, _, actor, _)| action == "overridden" && *actor == Some(c.mia.id))
        .map(|(_, lock, _, _)| *lock)
        .collect();
    assert_eq!(
        overridden,
        ids_of([&carols_card, &bobs_card, &carols_page]),
        "{audit:?}"
    );

    // An editor takes a page deeply from an editor's card (equal rank).
    let other_page = new_page(&app, &c.mia, &f.slug, "Page two").await;
    let card = id(&new_card(&app, &c.mia, other_page, "on page two").await);
    let bobs = app.lock(&bob, "Card", card).await;
    app.lock_expect(&carol, deep_takeover_body("Page", other_page), 201)
        .await;
    app.assert_lock_gone(&c.rita, id(&bobs)).await;
}

/// "Edit anyway" on a record inside someone's deep lock is refused naming
/// it; taking the deep lock itself over works.
async fn a_takeover_does_not_get_past_a_deep_lock_on_an_ancestor((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let mia = c.mia.tab("mia-tab");
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Page", f.page_id).await;
    let asked = app
        .post("/locks")
        .by(&mia)
        .json(takeover_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "a takeover of a card inside");
    app.get(&format!("/locks/{}", deep["id"]))
        .by(&mia)
        .send()
        .await
        .expect(200);

    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let taken = app
        .lock_expect(&mia, deep_takeover_body("Page", f.page_id), 201)
        .await
        .body;
    assert_eq!(taken["depth"], "infinity");
    let ended = watcher
        .next_where("the deep lock's destroy", |f| {
            f["type"] == "destroy" && f["watchable"]["id"] == deep["id"]
        })
        .await;
    assert_eq!(ended["watchable"]["reason"], "overridden", "{ended}");
    app.assert_lock_gone(&c.rita, id(&deep)).await;
    // The deep lock is Mia's now: Bob is refused inside.
    let asked = app
        .post("/locks")
        .by(&c.bob.tab("bob-tab"))
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &taken, "the former holder");
}

/// `depth: "infinity"` on a card is invalid, whatever holds the card: the
/// request is refused for what it asks (422), also inside someone's deep
/// lock and with `takeover`.
async fn depth_infinity_on_a_card_is_invalid_also_inside_a_deep_lock((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let mia = c.mia.tab("mia-tab");
    let deep = deep_lock(&app, &c.bob.tab("bob-tab"), "Page", f.page_id).await;
    let carols = app
        .lock(&c.carol.tab("carol-tab"), "Edgenote", f.edgenote_id)
        .await;
    let mut answers = Vec::new();
    for body in [
        deep_body("Card", f.card_id),
        deep_takeover_body("Card", f.card_id),
        deep_body("Edgenote", f.edgenote_id),
        deep_takeover_body("Edgenote", f.edgenote_id),
    ] {
        let asked = app.post("/locks").by(&mia).json(body.clone()).send().await;
        answers.push((body, asked.status, asked.body["error"]["code"].clone()));
    }
    assert!(
        answers
            .iter()
            .all(|(_, status, code)| *status == 422 && code == "invalid"),
        "depth infinity on a card or an edgenote answers 422 invalid: {answers:#?}"
    );
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&deep, &carols]));
}

async fn a_deep_takeover_is_outranked_when_anyone_inside_outranks_the_caller(
    (app, c): (TestApp, Cast),
) {
    let f = &c.case;
    let second = app.card(f, "second").await;
    let carols = app.lock(&c.carol.tab("carol-tab"), "Card", f.card_id).await;
    let mias = app.lock(&c.mia.tab("mia-tab"), "Card", second).await;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;

    let refused = app
        .lock_error(
            &c.bob.tab("bob-tab"),
            deep_takeover_body("Page", f.page_id),
            403,
            "outranked",
        )
        .await;
    assert_eq!(
        refused.body["error"]["lock"]["id"], mias["id"],
        "{}",
        refused.body
    );
    // Nothing ended, nothing taken.
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&carols, &mias]));

    // The manager is outranked by a site admin inside the case.
    let roots = app
        .lock(&c.root.tab("root-tab"), "Edgenote", f.edgenote_id)
        .await;
    app.lock_error(
        &c.mia.tab("mia-tab"),
        deep_takeover_body("Case", f.case_id),
        403,
        "outranked",
    )
    .await;
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&carols, &mias, &roots]));

    // No lock ended: after Root's lock, the next lock change is the marker's.
    let marker = beyond::marker(&app, &c.carol.tab("carol-tab"), "Page", f.page_id).await;
    let frames = watcher
        .collect_until("the marker's destroy", Duration::from_secs(10), |f| {
            f["type"] == "destroy" && f["watchable"]["id"] == marker
        })
        .await;
    let destroyed: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "destroy" && f["watchable"]["type"] == "Lock")
        .collect();
    assert_eq!(destroyed.len(), 1, "only the marker ended: {frames:?}");
}

async fn depth_infinity_is_for_pages_and_cases_and_never_waits((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    app.lock_error(&bob, deep_body("Card", f.card_id), 422, "invalid")
        .await;
    app.lock_error(&bob, deep_body("Edgenote", f.edgenote_id), 422, "invalid")
        .await;
    let mut waiting = wait_body("Page", f.page_id);
    waiting["lock"]["depth"] = json!("infinity");
    app.lock_error(&bob, waiting, 422, "invalid").await;
    let mut depth_one = lock_body("Page", f.page_id);
    depth_one["lock"]["depth"] = json!("1");
    app.lock_error(&bob, depth_one, 422, "invalid").await;
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
    // "0" is the default, said out loud.
    let mut shallow = lock_body("Card", f.card_id);
    shallow["lock"]["depth"] = json!("0");
    let lock = app.lock_expect(&bob, shallow, 201).await.body;
    assert_eq!(lock["depth"], "0");
    // A reader may not lock deeply.
    app.lock_error(
        &c.rita.tab("rita-tab"),
        deep_body("Page", f.page_id),
        403,
        "forbidden",
    )
    .await;
}

/// A set or a claim over records inside someone else's deep lock.
async fn sets_and_claims_respect_deep_locks((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let deep = deep_lock(&app, &c.carol.tab("carol-tab"), "Page", f.page_id).await;
    let refused = lock_set(
        &app,
        &bob,
        &[("Edgenote", f.edgenote_id), ("Card", f.card_id)],
    )
    .await;
    assert_held_by(&refused, &[&deep]);
    let refused = claim(&app, &bob, &[("Card", f.card_id)])
        .await
        .expect_error(409, "none_free");
    assert_eq!(
        id_set(&refused.body["error"]["locks"]),
        BTreeSet::from([id(&deep)])
    );
    let claimed = claim(
        &app,
        &bob,
        &[("Card", f.card_id), ("Edgenote", f.edgenote_id)],
    )
    .await
    .expect(201);
    assert_eq!(
        lockable_key(&claimed.body),
        format!("Edgenote/{}", f.edgenote_id)
    );
    // The deep holder's own tab takes a set inside.
    let second = app.card(f, "second").await;
    lock_set(
        &app,
        &c.carol.tab("carol-tab"),
        &[("Card", f.card_id), ("Card", second)],
    )
    .await
    .expect(201);
}

/// A 409 of a plain `POST /locks` carries `locks` too: `[lock]`.
async fn a_plain_refusal_names_its_lock_in_locks_too((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bobs = app.lock(&c.bob.tab("bob-tab"), "Card", f.card_id).await;
    let refused = app
        .post("/locks")
        .by(&c.carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_held_by(&refused, &[&bobs]);
}

/// The tab's own locks inside a page are not in the way of its deep lock
/// on the page; they stay its own.
async fn a_tab_locks_deeply_over_its_own_locks_inside((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let card_lock = app.lock(&bob, "Card", f.card_id).await;
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), ids_of([&card_lock, &deep]));
    let asked = app
        .post("/locks")
        .by(&c.carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_eq!(asked.status, 409, "{}", asked.body);
}

/// Bob writes a card inside his deep page lock with the deep lock's token;
/// Mia takes the page over deeply; Bob's stale tab is locked out (423), and
/// after Mia releases, its token is lost (412) and her edit survives.
async fn the_deep_lock_token_story((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let mia = c.mia.tab("mia-tab");
    let card = format!("/cards/{}", f.card_id);
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    let token = deep["token"].as_str().unwrap().to_owned();
    app.patch(&card)
        .by(&bob)
        .header("Lock-Token", &token)
        .json(edit("bob's"))
        .send()
        .await
        .expect(200);

    let taken = app
        .lock_expect(&mia, deep_takeover_body("Page", f.page_id), 201)
        .await
        .body;
    app.patch(&card)
        .by(&mia)
        .header("Lock-Token", taken["token"].as_str().unwrap())
        .json(edit("mia's"))
        .send()
        .await
        .expect(200);
    let refused = app
        .patch(&card)
        .by(&bob)
        .header("Lock-Token", &token)
        .json(edit("stale bob"))
        .send()
        .await;
    assert_locked_by_deep(&refused, &taken, "the former holder's write");
    app.release(&mia, id(&taken)).await;
    app.patch(&card)
        .by(&bob)
        .header("Lock-Token", &token)
        .json(edit("stale bob"))
        .send()
        .await
        .expect_error(412, "lock_lost");
    let now = app.get(&card).by(&bob).send().await.expect(200);
    assert_eq!(now.body["content"], "mia's");
}

/// Mia takes the case over deeply from Bob's deep page lock, Carol's
/// edgenote lock and Bob's other tab's case lock: all end `overridden`.
async fn a_deep_case_takeover_ends_deep_page_locks_and_everything_else((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let page = deep_lock(&app, &c.bob.tab("bob-tab"), "Page", f.page_id).await;
    let note = app
        .lock(&c.carol.tab("carol-tab"), "Edgenote", f.edgenote_id)
        .await;
    let case = app.lock(&c.bob.tab("bob-2"), "Case", f.case_id).await;
    let taken = app
        .lock_expect(
            &c.mia.tab("mia-tab"),
            deep_takeover_body("Case", f.case_id),
            201,
        )
        .await
        .body;
    assert_eq!(taken["depth"], "infinity");
    let frames = watcher
        .collect_until(
            "the deep case lock's create",
            Duration::from_secs(10),
            |f| f["type"] == "create" && f["watchable"]["id"] == taken["id"],
        )
        .await;
    let ended: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "destroy" && f["watchable"]["type"] == "Lock")
        .map(|f| &f["watchable"])
        .collect();
    assert_eq!(ids_of(ended.iter().copied()), ids_of([&page, &note, &case]));
    assert!(
        ended.iter().all(|l| l["reason"] == "overridden"),
        "{ended:?}"
    );
    let listed = case_locks(&app, &c.rita, &f.slug).await;
    assert_eq!(ids_of(&listed), BTreeSet::from([id(&taken)]));
}

/// The deep lock's holder deletes the page with its cards (204): the
/// deep lock ends with it, and someone else's card lock on the page would
/// have stopped it.
async fn the_deep_holder_deletes_its_page_and_its_lock_ends((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    app.delete(&format!("/pages/{}", f.page_id))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.assert_lock_gone(&c.rita, id(&deep)).await;
    app.get(&format!("/cards/{}", f.card_id))
        .by(&c.rita)
        .send()
        .await
        .expect_error(404, "not_found");
    assert!(case_locks(&app, &c.rita, &f.slug).await.is_empty());
}

/// `GET /locks/status` of a card inside someone else's deep lock: locked,
/// by the deep lock (a polling client must not believe it may edit); for
/// the deep holder's tab, owned.
async fn the_status_of_a_card_inside_a_deep_lock_is_locked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let bob = c.bob.tab("bob-tab");
    let deep = deep_lock(&app, &bob, "Page", f.page_id).await;
    let path = format!(
        "/locks/status?lockableType=Card&lockableParam={}",
        f.card_id
    );
    let status = app.get(&path).by(&c.carol).send().await.expect(200);
    assert_eq!(status.body["state"], "locked", "{}", status.body);
    assert_eq!(status.body["lock"]["id"], deep["id"], "{}", status.body);
    let status = app.get(&path).by(&bob).send().await.expect(200);
    assert_eq!(status.body["state"], "owned", "{}", status.body);
}

/// Racing tabs of the deep and shallow race: two ask for the page deeply,
/// one for the case deeply, the rest for single cards.
const RACERS: usize = 8;
/// Locks each deep racer gets before the race ends.
const DEEP_GRANTS: usize = 15;

/// Tabs race on one page with four cards: two ask for the page deeply,
/// one for the case deeply, the others for single cards (with short gaps,
/// so that the deep ones get their turns); each holds what it gets a
/// moment and releases it. Every answer is 201 or 409, and the watcher's
/// replay of the lock frames (in commit order) never shows a deep lock
/// overlapping another tab's lock inside it, nor two locks on one record.
async fn deep_and_shallow_lockers_racing_never_overlap(backend: Backend) {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let Some(app) = TestApp::start_with(backend, |s| s.database.db_pool_size = 16).await else {
        return;
    };
    let app = Arc::new(app);
    let mia = app.user("Mia").await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(app.user(&format!("racer{i}")).await);
    }
    let mut members: Vec<(&common::TestUser, Role)> =
        users.iter().map(|u| (u, Role::Editor)).collect();
    members.push((&mia, Role::Manager));
    let f = app.case("deeprace", &members).await;
    let mut cards = vec![f.card_id];
    cards.extend(beyond::more_cards(&app, &f, 3).await);
    let cards = Arc::new(cards);
    let (mut watcher, _) = app.open_tab(&f.slug, &mia.tab("watcher")).await;
    // Deep racers still racing; card racers stop when none is.
    let deep_racing = Arc::new(AtomicUsize::new(3));
    let stop = Arc::new(AtomicBool::new(false));

    let mut tasks = Vec::new();
    for racer in 0..RACERS {
        let me = users[racer % users.len()].tab(&format!("racer-tab-{racer}"));
        let (app, cards, deep_racing, stop) = (
            app.clone(),
            cards.clone(),
            deep_racing.clone(),
            stop.clone(),
        );
        let (page, case) = (f.page_id, f.case_id);
        tasks.push(actix_web::rt::spawn(async move {
            let deep = racer < 3;
            let mut granted = 0;
            let mut attempt = 0;
            loop {
                if deep && (granted >= DEEP_GRANTS || attempt >= 3000) {
                    if deep_racing.fetch_sub(1, Ordering::SeqCst) == 1 {
                        stop.store(true, Ordering::SeqCst);
                    }
                    return granted;
                }
                if !deep && stop.load(Ordering::SeqCst) {
                    return granted;
                }
                let body = match racer {
                    0 | 1 => deep_body("Page", page),
                    2 => deep_body("Case", case),
                    _ => lock_body("Card", cards[(racer + attempt) % cards.len()]),
                };
                attempt += 1;
                let answer = app.post("/locks").by(&me).json(body).send().await;
                match answer.status {
                    201 => {
                        granted += 1;
                        actix_web::rt::time::sleep(Duration::from_millis(1)).await;
                        app.release(&me, id(&answer.body)).await;
                    }
                    409 => assert_eq!(answer.body["error"]["code"], "lock_held", "{}", answer.body),
                    other => panic!("POST /locks answered {other}: {}", answer.body),
                }
                let gap = if deep { 1 } else { 3 };
                actix_web::rt::time::sleep(Duration::from_millis(gap)).await;
            }
        }));
    }
    let mut granted = Vec::new();
    for task in tasks {
        granted.push(task.await.expect("racer panicked"));
    }
    eprintln!("{backend:?}: locks granted per racer: {granted:?}");
    assert!(case_locks(&app, &mia, &f.slug).await.is_empty());

    let marker = beyond::marker(&app, &users[0].tab("marker"), "Edgenote", f.edgenote_id).await;
    let frames = beyond::changes_until_marker(&mut watcher, marker).await;
    // Open locks: id → (record, depth, session).
    let mut open: HashMap<i64, (String, String, String)> = HashMap::new();
    let page_key = format!("Page/{}", f.page_id);
    let case_key = format!("Case/{}", f.case_id);
    let (mut deep_grants, mut card_grants) = (0, 0);
    for frame in &frames {
        let lock = &frame["watchable"];
        if lock["type"] != "Lock" || lock["id"] == marker {
            continue;
        }
        let lock_id = id(lock);
        match frame["type"].as_str() {
            Some("create") => {
                let record = lockable_key(lock);
                let depth = lock["depth"].as_str().unwrap().to_owned();
                let session = lock["sessionId"].as_str().unwrap_or("").to_owned();
                // Does an open lock of another tab conflict with this one?
                let inside = |outer: &str, inner: &str| {
                    outer == inner
                        || (outer == case_key)
                        || (outer == page_key && inner.starts_with("Card/"))
                };
                for (other_id, (other_record, other_depth, other_session)) in &open {
                    if *other_session == session {
                        continue;
                    }
                    let conflict = record == *other_record
                        || (depth == "infinity" && inside(&record, other_record))
                        || (other_depth == "infinity" && inside(other_record, &record));
                    assert!(
                        !conflict,
                        "lock {lock_id} ({record}, depth {depth}, tab {session}) created while \
                         lock {other_id} ({other_record}, depth {other_depth}, tab \
                         {other_session}) was held"
                    );
                }
                if depth == "infinity" {
                    deep_grants += 1;
                } else {
                    card_grants += 1;
                }
                open.insert(lock_id, (record, depth, session));
            }
            Some("destroy") => {
                assert!(
                    open.remove(&lock_id).is_some(),
                    "destroy of a lock not open: {frame}"
                );
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "locks left open: {open:?}");
    eprintln!("{backend:?}: {deep_grants} deep and {card_grants} card locks replayed");
    assert!(
        deep_grants > 0 && card_grants > 0,
        "too little of either kind to race"
    );
}

// ---- Across instances ----

/// A deep page lock taken through instance A refuses a card lock through
/// instance B (409 naming it) and B's guard answers 423; released through
/// A, B grants the card.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_deep_lock_through_one_instance_holds_on_the_other() {
    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &[]).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &[]).await;
    let bob = app.user("Bob").await.tab("bob-on-a");
    let carol = app.user("Carol").await.tab("carol-on-b");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&carol, Role::Editor)])
        .await;

    let deep = app
        .req_at(&a.base, Method::POST, "/locks")
        .by(&bob)
        .json(deep_body("Page", f.page_id))
        .send()
        .await
        .expect(201)
        .body;
    assert_eq!(deep["depth"], "infinity");
    let asked = app
        .req_at(&b.base, Method::POST, "/locks")
        .by(&carol)
        .json(lock_body("Card", f.card_id))
        .send()
        .await;
    assert_inside(&asked, &deep, "a card lock through B");
    let refused = app
        .req_at(&b.base, Method::PATCH, &format!("/cards/{}", f.card_id))
        .by(&carol)
        .json(edit("through B"))
        .send()
        .await;
    assert_locked_by_deep(&refused, &deep, "PATCH through B");
    let refused = app
        .req_at(
            &b.base,
            Method::POST,
            &format!("/pages/{}/cards", f.page_id),
        )
        .by(&carol)
        .json(json!({ "card": { "content": "through B" } }))
        .send()
        .await;
    assert_locked_by_deep(&refused, &deep, "a new card through B");
    // The holder writes through B too.
    app.req_at(&b.base, Method::PATCH, &format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(edit("bob through B"))
        .send()
        .await
        .expect(200);

    app.req_at(&a.base, Method::DELETE, &format!("/locks/{}", deep["id"]))
        .by(&bob)
        .send()
        .await
        .expect(204);
    app.lock_at(&b.base, &carol, "Card", f.card_id).await;
}

/// Nobody can be handed a record inside someone else's deep lock: taking it
/// ends the lines inside (`left`) — here the line of a card whose lock the
/// deep takeover ended — and releasing the deep lock leaves the card free.
/// The deep-locked page's own line stays.
async fn a_deep_lock_ends_the_lines_inside_it((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let carol = c.carol.tab("carol-tab");
    let bob = c.bob.tab("bob-tab");
    let mia = c.mia.tab("mia-tab");
    app.lock(&carol, "Card", f.card_id).await;
    let waiter = app
        .lock_expect(&bob, wait_body("Card", f.card_id), 202)
        .await
        .body;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;

    let deep = app
        .lock_expect(&mia, deep_takeover_body("Page", f.page_id), 201)
        .await
        .body;
    let gone = watcher
        .next_where("the waiter's destroy", |frame| {
            frame["type"] == "destroy"
                && frame["watchable"]["type"] == "Waiter"
                && frame["watchable"]["id"] == waiter["id"]
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "left", "{gone}");
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={}",
            f.card_id
        ))
        .by(&bob)
        .send()
        .await
        .expect(200)
        .body;
    assert_eq!(status["waiters"], json!([]), "{status}");
    assert_eq!(status["lock"]["id"], deep["id"], "{status}");

    app.release(&mia, id(&deep)).await;
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Card&lockableParam={}",
            f.card_id
        ))
        .by(&bob)
        .send()
        .await
        .expect(200)
        .body;
    assert_eq!(status["state"], "unlocked", "{status}");
}
