//! Moving a card to another page, `PATCH /cards/:id {card: {pageId}}`, on
//! both databases: the move and its broadcast, the guard on the card, the
//! deep locks of the source and target pages, and the pages a card cannot
//! move to.

mod beyond;
mod common;

use baton::models::Role;
use beyond::{deep_lock, new_card, new_page};
use common::{id, Cast, Resp, TestApp, TestUser};
use serde_json::{json, Value};

on_both_backends!(TestApp::with_cast =>
    a_moved_card_has_its_new_page_and_version_and_is_broadcast,
    a_move_without_a_position_puts_the_card_last,
    a_move_with_a_position_sorts_the_card_there,
    a_move_of_a_card_someone_else_holds_is_locked,
    a_move_with_a_stale_version_or_a_lost_lock_is_refused,
    a_move_out_of_someone_elses_deep_locked_page_is_locked,
    a_move_into_someone_elses_deep_locked_page_is_locked,
    a_move_inside_someone_elses_deep_locked_case_is_locked,
    shallow_page_locks_do_not_stop_a_move,
    a_card_cannot_move_to_another_cases_page,
    a_card_cannot_move_to_an_unknown_page,
    a_malformed_page_id_is_invalid,
    a_reader_cannot_move_a_card,
    a_move_with_content_changes_both_in_one_version,
    a_null_page_id_is_not_given_as_the_document_says,
);

/// `{"card": {"pageId": null}}` is "not given", as `null` is for every
/// field: no move, the rest of the body saved; the guard then answers as
/// for any save (a stale Lock-Token: 412). The document says the same.
async fn a_null_page_id_is_not_given_as_the_document_says((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let card = format!("/cards/{}", f.card_id);
    let saved = app
        .patch(&card)
        .by(&c.bob)
        .json(json!({ "card": { "pageId": null, "content": "kept in place" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(saved.body["pageId"], f.page_id, "{}", saved.body);
    assert_eq!(saved.body["content"], "kept in place", "{}", saved.body);
    assert_eq!(saved.body["version"], 2, "{}", saved.body);

    let bob = c.bob.tab("bob-tab");
    let lock = app.lock(&bob, "Card", f.card_id).await;
    app.release(&bob, id(&lock)).await;
    app.patch(&card)
        .by(&bob)
        .header("Lock-Token", lock["token"].as_str().unwrap())
        .json(json!({ "card": { "pageId": null, "content": "too late" } }))
        .send()
        .await
        .expect_error(412, "lock_lost");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 2).await;

    let document = app.get("/openapi.json").send().await.expect(200).body;
    let page_id = &document["components"]["schemas"]["CardUpdateFields"]["properties"]["pageId"];
    let takes_null = page_id["oneOf"]
        .as_array()
        .is_some_and(|kinds| kinds.iter().any(|k| k["type"] == "null"));
    assert!(takes_null, "the document refuses a null pageId: {page_id}");
}

async fn a_move_with_content_changes_both_in_one_version((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let moved = app
        .patch(&format!("/cards/{}", f.card_id))
        .by(&c.bob)
        .json(json!({ "card": { "pageId": page_two.to_string(), "content": "moved and edited" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(moved.body["pageId"], page_two, "{}", moved.body);
    assert_eq!(moved.body["content"], "moved and edited", "{}", moved.body);
    assert_eq!(moved.body["version"], 2, "{}", moved.body);
}

/// `PATCH /cards/:card {card: {pageId: page}}` as `user` (the id as a string).
async fn move_card(app: &TestApp, user: &TestUser, card: i64, page: i64) -> Resp {
    app.patch(&format!("/cards/{card}"))
        .by(user)
        .json(json!({ "card": { "pageId": page.to_string() } }))
        .send()
        .await
}

/// The card as `GET /cards/:id` shows it.
async fn card_now(app: &TestApp, user: &TestUser, card: i64) -> Value {
    app.get(&format!("/cards/{card}"))
        .by(user)
        .send()
        .await
        .expect(200)
        .body
}

/// The ids of a page's cards in `GET /cases/:slug`, in their order.
async fn cards_of_page(app: &TestApp, user: &TestUser, slug: &str, page: i64) -> Vec<i64> {
    let case = app
        .get(&format!("/cases/{slug}"))
        .by(user)
        .send()
        .await
        .expect(200);
    let pages = case.body["pages"].as_array().unwrap();
    let page = pages
        .iter()
        .find(|p| p["id"] == page)
        .unwrap_or_else(|| panic!("page {page} not in {}", case.body));
    page["cards"].as_array().unwrap().iter().map(id).collect()
}

/// The cast, and a second page of case `c` with two cards; the page's id
/// and its cards.
async fn with_second_page(app: &TestApp, c: &Cast) -> (i64, Vec<i64>) {
    let page = new_page(app, &c.mia, &c.case.slug, "Page two").await;
    let first = id(&new_card(app, &c.mia, page, "two, first").await);
    let second = id(&new_card(app, &c.mia, page, "two, second").await);
    (page, vec![first, second])
}

/// Asserts the card is still on `page` at `version`.
async fn assert_unmoved(app: &TestApp, c: &Cast, card: i64, page: i64, version: i64) {
    let now = card_now(app, &c.rita, card).await;
    assert_eq!(now["pageId"], page, "the card stayed: {now}");
    assert_eq!(now["version"], version, "the card is unchanged: {now}");
}

async fn a_moved_card_has_its_new_page_and_version_and_is_broadcast((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let (mut watcher, _) = app.open_tab(&f.slug, &c.rita.tab("watcher")).await;
    let bob = c.bob.tab("bob-tab");

    let moved = move_card(&app, &bob, f.card_id, page_two).await.expect(200);
    assert_eq!(moved.body["pageId"], page_two, "{}", moved.body);
    assert_eq!(moved.body["version"], 2, "{}", moved.body);
    assert_eq!(moved.body["caseId"], f.case_id, "{}", moved.body);
    assert_eq!(moved.body["content"], "first draft", "{}", moved.body);
    assert_eq!(moved.etag().as_deref(), Some("\"2\""));

    let update = watcher
        .next_where("the card's update", |frame| {
            frame["type"] == "update"
                && frame["watchable"]["type"] == "Card"
                && frame["watchable"]["id"] == f.card_id
        })
        .await;
    assert_eq!(update["watchable"]["pageId"], page_two, "{update}");
    assert_eq!(update["watchable"]["version"], 2, "{update}");
    assert_eq!(update["editorSessionId"], "bob-tab", "{update}");

    assert_eq!(card_now(&app, &c.rita, f.card_id).await["pageId"], page_two);
    assert!(!cards_of_page(&app, &c.rita, &f.slug, f.page_id)
        .await
        .contains(&f.card_id));
    assert!(cards_of_page(&app, &c.rita, &f.slug, page_two)
        .await
        .contains(&f.card_id));

    // Back, with the page id as a number.
    let back = app
        .patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .json(json!({ "card": { "pageId": f.page_id } }))
        .send()
        .await
        .expect(200);
    assert_eq!(back.body["pageId"], f.page_id, "{}", back.body);
    assert_eq!(back.body["version"], 3, "{}", back.body);
    let update = watcher
        .next_where("the card's second update", |frame| {
            frame["type"] == "update" && frame["watchable"]["id"] == f.card_id
        })
        .await;
    assert_eq!(update["watchable"]["pageId"], f.page_id, "{update}");
}

async fn a_move_without_a_position_puts_the_card_last((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, cards) = with_second_page(&app, &c).await;
    move_card(&app, &c.bob, f.card_id, page_two)
        .await
        .expect(200);
    assert_eq!(
        cards_of_page(&app, &c.rita, &f.slug, page_two).await,
        vec![cards[0], cards[1], f.card_id]
    );
    assert!(cards_of_page(&app, &c.rita, &f.slug, f.page_id)
        .await
        .is_empty());
}

/// Moved to the first card's position, the card comes first there: the
/// card at that position, and the ones after it, move up by one (siblings
/// never share a position), keeping their versions.
async fn a_move_with_a_position_sorts_the_card_there((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, cards) = with_second_page(&app, &c).await;
    let first_position = card_now(&app, &c.rita, cards[0]).await["position"].clone();
    let moved = app
        .patch(&format!("/cards/{}", f.card_id))
        .by(&c.bob)
        .json(json!({ "card": { "pageId": page_two.to_string(), "position": first_position } }))
        .send()
        .await
        .expect(200);
    assert_eq!(moved.body["position"], first_position, "{}", moved.body);
    assert_eq!(
        cards_of_page(&app, &c.rita, &f.slug, page_two).await,
        vec![f.card_id, cards[0], cards[1]]
    );
    // The card that was there moved up by one.
    assert_eq!(
        card_now(&app, &c.rita, cards[0]).await["position"],
        first_position.as_i64().expect("a position") + 1
    );
    assert_eq!(card_now(&app, &c.rita, cards[0]).await["version"], 1);
}

async fn a_move_of_a_card_someone_else_holds_is_locked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let carol = c.carol.tab("carol-tab");
    let carols = app.lock(&carol, "Card", f.card_id).await;
    let refused = move_card(&app, &c.bob.tab("bob-tab"), f.card_id, page_two)
        .await
        .expect_error(423, "locked");
    assert_eq!(refused.body["error"]["lock"]["id"], carols["id"]);
    assert_eq!(refused.body["error"]["lockable"]["id"], f.card_id);
    // Carol's other tab is someone else too.
    move_card(&app, &c.carol.tab("carol-2"), f.card_id, page_two)
        .await
        .expect_error(423, "locked");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;

    // The holder moves it.
    let moved = app
        .patch(&format!("/cards/{}", f.card_id))
        .by(&carol)
        .header("Lock-Token", carols["token"].as_str().unwrap())
        .json(json!({ "card": { "pageId": page_two.to_string() } }))
        .send()
        .await
        .expect(200);
    assert_eq!(moved.body["pageId"], page_two);
}

async fn a_move_with_a_stale_version_or_a_lost_lock_is_refused((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let card = format!("/cards/{}", f.card_id);
    app.patch(&card)
        .by(&c.carol)
        .json(beyond::edit("second version"))
        .send()
        .await
        .expect(200);
    let stale = app
        .patch(&card)
        .by(&c.bob)
        .header("If-Match", "\"1\"")
        .json(json!({ "card": { "pageId": page_two.to_string() } }))
        .send()
        .await
        .expect_error(412, "stale_version");
    assert_eq!(
        stale.body["error"]["current"]["version"], 2,
        "{}",
        stale.body
    );
    assert_eq!(
        stale.body["error"]["current"]["pageId"], f.page_id,
        "{}",
        stale.body
    );
    assert_unmoved(&app, &c, f.card_id, f.page_id, 2).await;

    // A lock that has ended: lock_lost, even though nobody holds the card.
    let bob = c.bob.tab("bob-tab");
    let lock = app.lock(&bob, "Card", f.card_id).await;
    app.release(&bob, id(&lock)).await;
    app.patch(&card)
        .by(&bob)
        .header("Lock-Token", lock["token"].as_str().unwrap())
        .json(json!({ "card": { "pageId": page_two.to_string() } }))
        .send()
        .await
        .expect_error(412, "lock_lost");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 2).await;

    // The right version moves it.
    app.patch(&card)
        .by(&bob)
        .header("If-Match", "\"2\"")
        .json(json!({ "card": { "pageId": page_two.to_string() } }))
        .send()
        .await
        .expect(200);
}

/// Asserts a 423 `locked` naming the deep lock `deep` and its record.
#[track_caller]
fn assert_locked_by(refused: &Resp, deep: &Value) {
    assert_eq!(refused.status, 423, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "locked", "{}", refused.body);
    assert_eq!(
        refused.body["error"]["lock"]["id"], deep["id"],
        "`lock` is the deep lock: {}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lockable"]["type"], deep["lockable"]["type"],
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lockable"]["param"], deep["lockable"]["param"],
        "{}",
        refused.body
    );
}

async fn a_move_out_of_someone_elses_deep_locked_page_is_locked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let carol = c.carol.tab("carol-tab");
    let deep = deep_lock(&app, &carol, "Page", f.page_id).await;
    let refused = move_card(&app, &c.bob.tab("bob-tab"), f.card_id, page_two).await;
    assert_locked_by(&refused, &deep);
    let refused = move_card(&app, &c.mia.tab("mia-tab"), f.card_id, page_two).await;
    assert_locked_by(&refused, &deep);
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
    // The deep holder's tab moves it out.
    move_card(&app, &carol, f.card_id, page_two)
        .await
        .expect(200);
}

async fn a_move_into_someone_elses_deep_locked_page_is_locked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let carol = c.carol.tab("carol-tab");
    let deep = deep_lock(&app, &carol, "Page", page_two).await;
    // Bob holds the card he moves: the card's guard passes, the target's does not.
    let bob = c.bob.tab("bob-tab");
    let bobs = app.lock(&bob, "Card", f.card_id).await;
    let refused = app
        .patch(&format!("/cards/{}", f.card_id))
        .by(&bob)
        .header("Lock-Token", bobs["token"].as_str().unwrap())
        .json(json!({ "card": { "pageId": page_two.to_string() } }))
        .send()
        .await;
    assert_locked_by(&refused, &deep);
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
    app.release(&bob, id(&bobs)).await;
    // The deep holder's tab moves it in.
    move_card(&app, &carol, f.card_id, page_two)
        .await
        .expect(200);
}

async fn a_move_inside_someone_elses_deep_locked_case_is_locked((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let deep = deep_lock(&app, &c.carol.tab("carol-tab"), "Case", f.case_id).await;
    let refused = move_card(&app, &c.bob.tab("bob-tab"), f.card_id, page_two).await;
    assert_locked_by(&refused, &deep);
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
}

/// A depth-0 lock on a page is a lock on the page's own fields, not on its
/// cards: it stops no move.
async fn shallow_page_locks_do_not_stop_a_move((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    let carol = c.carol.tab("carol-tab");
    app.lock(&carol, "Page", f.page_id).await;
    app.lock(&carol, "Page", page_two).await;
    let moved = move_card(&app, &c.bob.tab("bob-tab"), f.card_id, page_two)
        .await
        .expect(200);
    assert_eq!(moved.body["pageId"], page_two);
}

async fn a_card_cannot_move_to_another_cases_page((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let other = app
        .case("other", &[(&c.bob, Role::Editor), (&c.rita, Role::Reader)])
        .await;
    move_card(&app, &c.bob.tab("bob-tab"), f.card_id, other.page_id)
        .await
        .expect_error(422, "invalid");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
    assert!(cards_of_page(&app, &c.rita, &other.slug, other.page_id)
        .await
        .iter()
        .all(|card| *card != f.card_id));
}

async fn a_card_cannot_move_to_an_unknown_page((app, c): (TestApp, Cast)) {
    let f = &c.case;
    move_card(&app, &c.bob.tab("bob-tab"), f.card_id, 999_999)
        .await
        .expect_error(404, "not_found");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
}

async fn a_malformed_page_id_is_invalid((app, c): (TestApp, Cast)) {
    let f = &c.case;
    for page_id in [json!("abc"), json!(-1), json!(1.5)] {
        app.patch(&format!("/cards/{}", f.card_id))
            .by(&c.bob)
            .json(json!({ "card": { "pageId": page_id } }))
            .send()
            .await
            .expect_error(422, "invalid");
    }
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
}

async fn a_reader_cannot_move_a_card((app, c): (TestApp, Cast)) {
    let f = &c.case;
    let (page_two, _) = with_second_page(&app, &c).await;
    move_card(&app, &c.rita.tab("rita-tab"), f.card_id, page_two)
        .await
        .expect_error(403, "forbidden");
    assert_unmoved(&app, &c, f.card_id, f.page_id, 1).await;
}
