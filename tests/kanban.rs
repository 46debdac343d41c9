//! The Kanban board of `examples/schemas/kanban.toml`, served on both
//! databases through real HTTP and WebSockets: a board (the case) has
//! columns, columns have ordered cards that move between columns, and the
//! Card type has a lock policy of its own (a 2-minute lease, takeover for
//! managers only, no waiting lines). This binary serves that one schema.

mod common;

use baton::models::Role;
use common::records::{millis_between, DeclaredType};
use common::{id, takeover_body, Backend, Resp, Team, TestApp, TestUser};
use serde_json::{json, Value};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/schemas/kanban.toml");

on_both_backends!(board =>
    columns_and_cards_are_created_with_their_defaults,
    a_card_dragged_to_another_column_reaches_a_watching_tab,
    a_card_moved_to_position_zero_pushes_the_cards_there_up,
    a_card_cannot_move_to_another_boards_column_or_an_unknown_one,
    only_a_manager_may_take_over_or_break_a_card_lock,
    waiting_for_a_card_is_invalid_free_or_held,
    a_card_lock_has_the_cards_lease_and_a_column_lock_the_servers,
    a_held_card_is_locked_to_others_and_bad_fields_are_named,
    deleting_a_column_deletes_its_cards,
    the_schema_lists_column_then_card_with_every_key,
);
on_both_backends!(|backend| TestApp::on_schema(backend, SCHEMA) =>
    the_demo_board_is_seeded_from_the_file_beside_the_schema,
);

/// A board `board` on the kanban schema, and its people (`common::Team`).
type Board = Team;

/// A server on the kanban schema with an empty board `board`.
async fn board(backend: Backend) -> Option<Board> {
    Team::start(backend, SCHEMA, "board").await
}

const COLUMN: DeclaredType = DeclaredType {
    plural: "columns",
    body_key: "column",
    nest_key: "columns",
};

const CARD: DeclaredType = DeclaredType {
    plural: "cards",
    body_key: "card",
    nest_key: "cards",
};

/// `POST /cases/:slug/columns` as `user` (201); the column.
async fn new_column(app: &TestApp, user: &TestUser, slug: &str, title: &str) -> Value {
    app.create_in_case(user, slug, &COLUMN, json!({ "title": title }))
        .await
        .expect(201)
        .body
}

/// `POST /columns/:id/cards` with `card` as its fields, as `user` (201).
async fn new_card(app: &TestApp, user: &TestUser, column: i64, card: Value) -> Value {
    app.create_in(user, (&COLUMN, column), &CARD, card)
        .await
        .expect(201)
        .body
}

/// `PATCH /cards/:card {card: {columnId, position?}}` as `user`.
async fn move_card(
    app: &TestApp,
    user: &TestUser,
    card: i64,
    column: i64,
    position: Option<i64>,
) -> Resp {
    let mut fields = json!({ "columnId": column.to_string() });
    if let Some(position) = position {
        fields["position"] = json!(position);
    }
    app.update_record(user, &CARD, card, fields).await
}

/// The card as `GET /cards/:id` shows it.
async fn card_now(app: &TestApp, user: &TestUser, card: i64) -> Value {
    app.record_now(user, &CARD, card).await
}

/// `GET /cases/:slug`'s columns.
async fn columns_of(app: &TestApp, user: &TestUser, slug: &str) -> Vec<Value> {
    app.nested_in_case(user, slug, &COLUMN).await
}

/// A column's cards in `GET /cases/:slug`, as (id, position) in the order
/// shown.
async fn cards_of_column(
    app: &TestApp,
    user: &TestUser,
    slug: &str,
    column: i64,
) -> Vec<(i64, i64)> {
    app.nested_in(user, slug, (&COLUMN, column), &CARD)
        .await
        .iter()
        .map(|card| (id(card), card["position"].as_i64().expect("a position")))
        .collect()
}

async fn columns_and_cards_are_created_with_their_defaults(b: Board) {
    let app = &b.app;
    let todo = new_column(app, &b.mia, &b.slug, "To do").await;
    assert_eq!(todo["type"], "Column", "{todo}");
    assert_eq!(todo["table"], "columns", "{todo}");
    assert_eq!(todo["param"], id(&todo).to_string(), "{todo}");
    assert_eq!(todo["title"], "To do", "{todo}");
    assert_eq!(todo["position"], 0, "{todo}");
    assert_eq!(todo["version"], 1, "{todo}");
    assert!(
        todo.get("caseId").is_some_and(Value::is_i64),
        "a column carries its case: {todo}"
    );
    let doing = new_column(app, &b.mia, &b.slug, "Doing").await;
    assert_eq!(
        doing["position"], 1,
        "a create without a position goes last"
    );

    // A card given nothing gets every default; a second one goes after it.
    let blank = app
        .post(&format!("/columns/{}/cards", id(&todo)))
        .by(&b.bob)
        .json(json!({ "card": {} }))
        .send()
        .await
        .expect(201);
    assert_eq!(blank.etag().as_deref(), Some("\"1\""));
    let blank = blank.body;
    assert_eq!(blank["type"], "Card", "{blank}");
    assert_eq!(blank["table"], "cards", "{blank}");
    assert_eq!(blank["columnId"], id(&todo), "{blank}");
    assert_eq!(blank["caseId"], todo["caseId"], "{blank}");
    assert_eq!(blank["content"], "", "the declared default: {blank}");
    assert_eq!(blank["color"], "none", "the declared default: {blank}");
    assert_eq!(blank["position"], 0, "{blank}");
    assert_eq!(blank["version"], 1, "{blank}");
    for key in ["createdAt", "updatedAt"] {
        assert!(blank[key].is_string(), "{key} in {blank}");
    }
    let red = new_card(
        app,
        &b.bob,
        id(&todo),
        json!({ "content": "Fix the login page", "color": "red" }),
    )
    .await;
    assert_eq!(red["content"], "Fix the login page", "{red}");
    assert_eq!(red["color"], "red", "{red}");
    assert_eq!(red["position"], 1, "{red}");

    // GET /cards/:id shows what the create answered.
    assert_eq!(card_now(app, &b.rita, id(&red)).await, red);

    // The board nests cards in their columns, columns in their order.
    let columns = columns_of(app, &b.rita, &b.slug).await;
    let shown: Vec<i64> = columns.iter().map(id).collect();
    assert_eq!(shown, vec![id(&todo), id(&doing)]);
    assert_eq!(
        cards_of_column(app, &b.rita, &b.slug, id(&todo)).await,
        vec![(id(&blank), 0), (id(&red), 1)]
    );
    assert_eq!(columns[1]["cards"], json!([]), "Doing has no cards yet");

    // A reader adds nothing; a column needs its title.
    app.post(&format!("/columns/{}/cards", id(&todo)))
        .by(&b.rita)
        .json(json!({ "card": { "content": "mine" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    let untitled = app
        .post(&format!("/cases/{}/columns", b.slug))
        .by(&b.mia)
        .json(json!({ "column": {} }))
        .send()
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        untitled.body["error"]["fields"][0]["field"], "title",
        "{}",
        untitled.body
    );
    // A card in a column that does not exist.
    app.post("/columns/999999/cards")
        .by(&b.bob)
        .json(json!({ "card": {} }))
        .send()
        .await
        .expect_error(404, "not_found");
}

/// Bob drags a card to another column while Carol has the board open: her
/// tab is told, with the card's new column, and the board shows it there.
async fn a_card_dragged_to_another_column_reaches_a_watching_tab(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let done = id(&new_column(app, &b.mia, &b.slug, "Done").await);
    let card = id(&new_card(
        app,
        &b.mia,
        todo,
        json!({ "content": "Write the release notes" }),
    )
    .await);
    let (mut watcher, _) = app.open_tab(&b.slug, &b.carol.tab("carol-tab")).await;

    let bob = b.bob.tab("bob-tab");
    let moved = move_card(app, &bob, card, done, None).await.expect(200);
    assert_eq!(moved.body["columnId"], done, "{}", moved.body);
    assert_eq!(moved.body["version"], 2, "{}", moved.body);
    assert_eq!(
        moved.body["content"], "Write the release notes",
        "a move keeps the fields: {}",
        moved.body
    );
    assert_eq!(moved.etag().as_deref(), Some("\"2\""));

    let update = watcher
        .next_where("the card's update", |frame| {
            frame["type"] == "update"
                && frame["watchable"]["type"] == "Card"
                && frame["watchable"]["id"] == card
        })
        .await;
    assert_eq!(update["watchable"]["columnId"], done, "{update}");
    assert_eq!(update["watchable"]["version"], 2, "{update}");
    assert_eq!(update["editorSessionId"], "bob-tab", "{update}");

    assert!(cards_of_column(app, &b.rita, &b.slug, todo)
        .await
        .is_empty());
    assert_eq!(
        cards_of_column(app, &b.rita, &b.slug, done).await,
        vec![(card, 0)]
    );
    assert_eq!(card_now(app, &b.rita, card).await["columnId"], done);
}

/// Siblings never share a position: a card moved (or created) at a taken
/// position pushes the card there, and the ones after it, up by one.
async fn a_card_moved_to_position_zero_pushes_the_cards_there_up(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let doing = id(&new_column(app, &b.mia, &b.slug, "Doing").await);
    let a = id(&new_card(app, &b.bob, todo, json!({ "content": "a" })).await);
    let x = id(&new_card(app, &b.bob, doing, json!({ "content": "x" })).await);
    let y = id(&new_card(app, &b.bob, doing, json!({ "content": "y" })).await);
    assert_eq!(
        cards_of_column(app, &b.rita, &b.slug, doing).await,
        vec![(x, 0), (y, 1)]
    );

    let moved = move_card(app, &b.bob, a, doing, Some(0)).await.expect(200);
    assert_eq!(moved.body["position"], 0, "{}", moved.body);
    assert_eq!(
        cards_of_column(app, &b.rita, &b.slug, doing).await,
        vec![(a, 0), (x, 1), (y, 2)]
    );
    // Pushed up, not edited: the cards keep their versions.
    assert_eq!(card_now(app, &b.rita, x).await["version"], 1);
    assert_eq!(card_now(app, &b.rita, y).await["version"], 1);

    // A create at a taken position, and a reorder inside the column.
    let z = id(&new_card(app, &b.bob, doing, json!({ "content": "z", "position": 1 })).await);
    assert_eq!(
        cards_of_column(app, &b.rita, &b.slug, doing).await,
        vec![(a, 0), (z, 1), (x, 2), (y, 3)]
    );
    app.patch(&format!("/cards/{y}"))
        .by(&b.carol)
        .json(json!({ "card": { "position": 0 } }))
        .send()
        .await
        .expect(200);
    let now = cards_of_column(app, &b.rita, &b.slug, doing).await;
    assert_eq!(now, vec![(y, 0), (a, 1), (z, 2), (x, 3)]);
}

async fn a_card_cannot_move_to_another_boards_column_or_an_unknown_one(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let card = id(&new_card(app, &b.bob, todo, json!({ "content": "stay" })).await);
    // Bob edits the other board too: the refusal is about the board, not him.
    let other = app
        .case_only("other-board", &[(&b.bob, Role::Manager)])
        .await;
    let elsewhere = id(&new_column(app, &b.bob, &other.slug, "Elsewhere").await);

    move_card(app, &b.bob, card, elsewhere, None)
        .await
        .expect_error(422, "invalid");
    move_card(app, &b.bob, card, 999_999, None)
        .await
        .expect_error(404, "not_found");

    let now = card_now(app, &b.rita, card).await;
    assert_eq!(now["columnId"], todo, "the card stayed: {now}");
    assert_eq!(now["version"], 1, "the card is unchanged: {now}");
    let other_board = columns_of(app, &b.bob, &other.slug).await;
    assert_eq!(other_board[0]["cards"], json!([]), "{other_board:?}");
}

/// `lock.takeover = "manager"` on Card: an editor may neither take over
/// nor break someone else's card lock, a manager may. Columns keep the
/// default (editors may).
async fn only_a_manager_may_take_over_or_break_a_card_lock(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let card = id(&new_card(app, &b.mia, todo, json!({ "content": "contested" })).await);
    let bob = b.bob.tab("bob-tab");
    let (mut bobs_tab, _) = app.open_tab(&b.slug, &bob).await;
    let bobs = app.lock(&bob, "Card", card).await;

    // Carol is an editor, as Bob is: equal rank is not enough for a Card.
    let refused = app
        .lock_expect(&b.carol.tab("carol-tab"), takeover_body("Card", card), 403)
        .await;
    assert_eq!(
        refused.body["error"]["code"], "outranked",
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lock"]["id"], bobs["id"],
        "the refusal names the holder's lock: {}",
        refused.body
    );
    app.delete(&format!("/locks/{}", id(&bobs)))
        .by(&b.carol.tab("carol-tab"))
        .send()
        .await
        .expect_error(403, "outranked");
    // Bob still holds it.
    let shown = app
        .get(&format!("/locks/{}", id(&bobs)))
        .by(&b.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["user"]["id"], b.bob.id, "{}", shown.body);

    // Mia manages the board: her "Edit anyway" is granted.
    let mias = app.takeover(&b.mia.tab("mia-tab"), "Card", card).await;
    assert_eq!(mias["user"]["id"], b.mia.id, "{mias}");
    assert_ne!(mias["id"], bobs["id"], "a takeover is a new lock: {mias}");
    let destroy = bobs_tab
        .next_where("Bob's lock's destroy", |f| {
            f["type"] == "destroy"
                && f["watchable"]["type"] == "Lock"
                && f["watchable"]["id"] == bobs["id"]
        })
        .await;
    assert_eq!(destroy["watchable"]["reason"], "overridden", "{destroy}");
    assert_eq!(
        destroy["watchable"]["overriddenBy"]["name"], "Mia",
        "{destroy}"
    );
    app.assert_lock_gone(&b.rita, id(&bobs)).await;

    // A Column has the default policy: an editor takes over an editor.
    let column_lock = app.lock(&bob, "Column", todo).await;
    let carols = app
        .takeover(&b.carol.tab("carol-tab"), "Column", todo)
        .await;
    assert_eq!(carols["user"]["id"], b.carol.id, "{carols}");
    app.assert_lock_gone(&b.rita, id(&column_lock)).await;
}

/// `lock.wait = false` on Card: `wait: true` is 422 whether the card is
/// free or held, and takes nothing; a Column (default) still lines up.
async fn waiting_for_a_card_is_invalid_free_or_held(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let free = id(&new_card(app, &b.mia, todo, json!({ "content": "free" })).await);
    let held = id(&new_card(app, &b.mia, todo, json!({ "content": "held" })).await);
    let bob = b.bob.tab("bob-tab");
    let bobs = app.lock(&bob, "Card", held).await;
    let carol = b.carol.tab("carol-tab");

    let mut answers = Vec::new();
    for (card, what) in [(free, "free"), (held, "held")] {
        let asked = app
            .post("/locks")
            .by(&carol)
            .json(json!({ "lock": { "lockableType": "Card", "lockableParam": card.to_string(), "wait": true } }))
            .send()
            .await;
        answers.push((what, asked.status, asked.body));
    }
    assert!(
        answers
            .iter()
            .all(|(_, status, body)| *status == 422 && body["error"]["code"] == "invalid"),
        "wait: true on a Card answers 422 invalid, free or held: {answers:#?}"
    );
    // Nothing was taken and nobody lines up.
    assert_eq!(
        app.lock_ids_of_case(&b.rita, &b.slug).await,
        vec![id(&bobs)]
    );
    let case = app
        .get(&format!("/cases/{}", b.slug))
        .by(&b.rita)
        .send()
        .await
        .expect(200);
    assert_eq!(case.body["waiters"], json!([]), "{}", case.body);

    // A held Column: Carol's tab lines up.
    app.lock(&bob, "Column", todo).await;
    let waiter = app
        .lock_expect(
            &carol,
            json!({ "lock": { "lockableType": "Column", "lockableParam": todo.to_string(), "wait": true } }),
            202,
        )
        .await;
    assert_eq!(waiter.body["type"], "Waiter", "{}", waiter.body);
    assert_eq!(waiter.body["position"], 1, "{}", waiter.body);
}

/// `lock.lease = "2m"` on Card: its locks last two minutes from every
/// renewal (acquire, refresh, the holder's save); a Column's last the
/// server's lease (30 s in the test settings).
async fn a_card_lock_has_the_cards_lease_and_a_column_lock_the_servers(b: Board) {
    let app = &b.app;
    let server_lease = app.state.settings.lock_ttl.as_millis() as i64;
    assert_eq!(server_lease, 30_000, "the test settings' lease");
    let near = |got: i64, want: i64, what: &str| {
        assert!(
            (got - want).abs() <= 2_000,
            "{what}: {got} ms, expected about {want} ms"
        );
    };
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let card = id(&new_card(app, &b.mia, todo, json!({ "content": "leased" })).await);
    let bob = b.bob.tab("bob-tab");

    let card_lock = app.lock(&bob, "Card", card).await;
    near(
        millis_between(&card_lock["createdAt"], &card_lock["expiresAt"]),
        120_000,
        "a Card lock's lease",
    );
    let column_lock = app.lock(&bob, "Column", todo).await;
    near(
        millis_between(&column_lock["createdAt"], &column_lock["expiresAt"]),
        server_lease,
        "a Column lock's lease",
    );

    let refreshed = app
        .post(&format!("/locks/{}/refresh", id(&card_lock)))
        .by(&bob)
        .send()
        .await
        .expect(200);
    near(
        millis_between(
            &refreshed.body["lastActivityAt"],
            &refreshed.body["expiresAt"],
        ),
        120_000,
        "a refreshed Card lock's lease",
    );
    let refreshed = app
        .post(&format!("/locks/{}/refresh", id(&column_lock)))
        .by(&bob)
        .send()
        .await
        .expect(200);
    near(
        millis_between(
            &refreshed.body["lastActivityAt"],
            &refreshed.body["expiresAt"],
        ),
        server_lease,
        "a refreshed Column lock's lease",
    );

    // The holder's save renews the card's lease, not the server's.
    app.patch(&format!("/cards/{card}"))
        .by(&bob)
        .header("Lock-Token", card_lock["token"].as_str().unwrap())
        .json(json!({ "card": { "content": "saved by the holder" } }))
        .send()
        .await
        .expect(200);
    let after_save = app
        .get(&format!("/locks/{}", id(&card_lock)))
        .by(&bob)
        .send()
        .await
        .expect(200);
    near(
        millis_between(
            &after_save.body["lastActivityAt"],
            &after_save.body["expiresAt"],
        ),
        120_000,
        "a Card lock after its holder's save",
    );
}

async fn a_held_card_is_locked_to_others_and_bad_fields_are_named(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let card = id(&new_card(app, &b.mia, todo, json!({ "content": "draft" })).await);
    let path = format!("/cards/{card}");
    let bob = b.bob.tab("bob-tab");
    let bobs = app.lock(&bob, "Card", card).await;

    let refused = app
        .patch(&path)
        .by(&b.carol.tab("carol-tab"))
        .json(json!({ "card": { "content": "Carol's words" } }))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(
        refused.body["error"]["lock"]["id"], bobs["id"],
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lockable"]["type"], "Card",
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lockable"]["param"],
        card.to_string(),
        "{}",
        refused.body
    );
    // Bob's other tab is someone else too, and so is a manager.
    for other in [b.bob.tab("bob-2"), b.mia.tab("mia-tab")] {
        app.patch(&path)
            .by(&other)
            .json(json!({ "card": { "color": "green" } }))
            .send()
            .await
            .expect_error(423, "locked");
        app.delete(&path)
            .by(&other)
            .send()
            .await
            .expect_error(423, "locked");
    }

    // A value outside the enum is 422 with the field named, also on a card
    // someone else holds: the body is judged before the guard.
    for user in [&bob, &b.carol.tab("carol-tab")] {
        let bad = app
            .patch(&path)
            .by(user)
            .json(json!({ "card": { "color": "purple" } }))
            .send()
            .await
            .expect_error(422, "invalid");
        let fields = bad.body["error"]["fields"].as_array().expect("fields");
        assert_eq!(fields.len(), 1, "{}", bad.body);
        assert_eq!(fields[0]["field"], "color", "{}", bad.body);
        assert_eq!(
            bad.body["error"]["message"], fields[0]["message"],
            "the message repeats the first field's: {}",
            bad.body
        );
    }
    // Every bad field at once.
    let bad = app
        .patch(&path)
        .by(&bob)
        .json(json!({ "card": { "color": 3, "content": "x".repeat(20_001) } }))
        .send()
        .await
        .expect_error(422, "invalid");
    let mut named: Vec<String> = bad.body["error"]["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| f["field"].as_str().expect("a field name").to_owned())
        .collect();
    named.sort();
    assert_eq!(named, ["color", "content"], "{}", bad.body);
    // An unknown key is invalid too.
    app.patch(&path)
        .by(&bob)
        .json(json!({ "card": { "colour": "red" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        card_now(app, &b.rita, card).await["version"],
        1,
        "nothing was saved"
    );

    // The holder's tab saves.
    let saved = app
        .patch(&path)
        .by(&bob)
        .header("Lock-Token", bobs["token"].as_str().unwrap())
        .json(json!({ "card": { "color": "blue", "content": "Bob's words" } }))
        .send()
        .await
        .expect(200);
    assert_eq!(saved.body["color"], "blue", "{}", saved.body);
    assert_eq!(saved.body["content"], "Bob's words", "{}", saved.body);
    assert_eq!(saved.body["version"], 2, "{}", saved.body);
    assert_eq!(saved.etag().as_deref(), Some("\"2\""));
}

/// A column goes with its cards; not while someone else holds one of them.
async fn deleting_a_column_deletes_its_cards(b: Board) {
    let app = &b.app;
    let todo = id(&new_column(app, &b.mia, &b.slug, "To do").await);
    let cards = [
        id(&new_card(app, &b.mia, todo, json!({ "content": "one" })).await),
        id(&new_card(app, &b.mia, todo, json!({ "content": "two" })).await),
    ];
    let carol = b.carol.tab("carol-tab");
    let carols = app.lock(&carol, "Card", cards[1]).await;
    let refused = app
        .delete(&format!("/columns/{todo}"))
        .by(&b.bob.tab("bob-tab"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(
        refused.body["error"]["lock"]["id"], carols["id"],
        "{}",
        refused.body
    );
    assert_eq!(cards_of_column(app, &b.rita, &b.slug, todo).await.len(), 2);

    app.release(&carol, id(&carols)).await;
    let (mut watcher, _) = app.open_tab(&b.slug, &b.rita.tab("watcher")).await;
    app.delete(&format!("/columns/{todo}"))
        .by(&b.bob.tab("bob-tab"))
        .send()
        .await
        .expect(204);
    for card in cards {
        app.get(&format!("/cards/{card}"))
            .by(&b.rita)
            .send()
            .await
            .expect_error(404, "not_found");
    }
    // The watching tab is told of each card that went, in any order.
    let told = watcher.destroys_of(&cards.map(|card| ("Card", card))).await;
    for destroy in told {
        assert_eq!(destroy["watchable"]["table"], "cards", "{destroy}");
    }
    assert!(columns_of(app, &b.rita, &b.slug).await.is_empty());
}

async fn the_schema_lists_column_then_card_with_every_key(b: Board) {
    let app = &b.app;
    app.get("/schema")
        .send()
        .await
        .expect_error(401, "unauthorized");
    let schema = app.get("/schema").by(&b.rita).send().await.expect(200).body;
    let expected = json!({ "types": [
        {
            "name": "Column",
            "plural": "columns",
            "table": "columns",
            "parent": "Case",
            "store": "baton",
            "ordered": true,
            "movable": false,
            "label": "title",
            "bodyKey": "column",
            "parentKey": "caseId",
            "nestKey": "columns",
            "fields": {
                "title": { "type": "string", "minLength": 1, "maxLength": 200 }
            },
            "required": ["title"],
            "unique": [],
            "lock": { "lease": null, "takeover": "editor", "wait": true }
        },
        {
            "name": "Card",
            "plural": "cards",
            "table": "cards",
            "parent": "Column",
            "store": "baton",
            "ordered": true,
            "movable": true,
            "label": null,
            "bodyKey": "card",
            "parentKey": "columnId",
            "nestKey": "cards",
            "fields": {
                "content": { "type": "string", "maxLength": 20000, "default": "" },
                "color": { "enum": ["none", "red", "green", "blue"], "default": "none" }
            },
            "required": [],
            "unique": [],
            "lock": { "lease": "2m", "takeover": "manager", "wait": false }
        }
    ] });
    assert_eq!(schema, expected);
    // In the documented order of keys.
    let keys: Vec<&str> = schema["types"][1]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "plural",
            "table",
            "parent",
            "store",
            "ordered",
            "movable",
            "label",
            "bodyKey",
            "parentKey",
            "nestKey",
            "fields",
            "required",
            "unique",
            "lock"
        ]
    );
}

/// `serve --demo --schema kanban.toml` plants `kanban.demo.json`: three
/// columns with their cards, in order, once.
async fn the_demo_board_is_seeded_from_the_file_beside_the_schema(app: TestApp) {
    let data = app.seed_demo_beside(SCHEMA).await;
    // Seeding again adds nothing.
    baton::demo::seed(&app.state.db, data.clone())
        .await
        .expect("a second seed");

    let case = app.demo_case().await;
    assert_eq!(case["title"], data["title"], "{case}");
    let columns = case["columns"].as_array().expect("columns");
    let titles: Vec<&str> = columns
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    let planted = data["records"]["columns"].as_array().expect("demo columns");
    assert_eq!(columns.len(), 3, "{case}");
    assert_eq!(
        titles,
        planted
            .iter()
            .map(|c| c["title"].as_str().unwrap())
            .collect::<Vec<_>>()
    );
    for (shown, planted) in columns.iter().zip(planted) {
        let cards = shown["cards"].as_array().expect("cards");
        let want = planted["cards"].as_array().expect("demo cards");
        assert!(!want.is_empty(), "every demo column has cards");
        assert_eq!(cards.len(), want.len(), "{shown}");
        for (position, (card, planted)) in cards.iter().zip(want).enumerate() {
            assert_eq!(card["content"], planted["content"], "{card}");
            assert_eq!(card["position"], position, "{card}");
            assert_eq!(card["columnId"], shown["id"], "{card}");
            let color = planted.get("color").cloned().unwrap_or(json!("none"));
            assert_eq!(card["color"], color, "{card}");
        }
    }
    // Alice manages it; Bob and Carol edit it.
    let bob = app.signed_in("bob@example.com").await;
    let first_card = id(&columns[0]["cards"][0]);
    app.patch(&format!("/cards/{first_card}"))
        .by(&bob)
        .json(json!({ "card": { "color": "green" } }))
        .send()
        .await
        .expect(200);
}
