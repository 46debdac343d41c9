//! The book of `examples/schemas/book.toml`, served on both databases
//! through real HTTP and WebSockets: a book (the case) has divisions (front
//! matter, body, back matter) and divisions have ordered book components
//! that move between them. A deep lock on a division holds its components;
//! a component's date and address fields are checked by their formats. This
//! binary serves that one schema.

mod common;

use baton::models::StoredRecord;
use common::records::{millis_between, DeclaredType};
use common::{id, lock_body, Backend, Resp, Team, TestApp, TestUser};
use reqwest::Method;
use serde_json::{json, Value};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/schemas/book.toml");

on_both_backends!(book =>
    divisions_and_components_are_created_with_their_defaults,
    the_deep_holders_tab_locks_and_saves_inside_its_division,
    deleting_a_division_deletes_its_components,
    a_component_moves_between_divisions,
    a_due_date_must_be_a_date_and_a_source_an_address,
    depth_infinity_on_a_book_component_is_invalid,
    the_schema_names_the_book_types,
);
on_both_backends!(|backend| TestApp::on_schema(backend, SCHEMA) =>
    the_demo_book_is_seeded_from_the_file_beside_the_schema,
);
on_both_backends!(a_deep_lock_on_a_division_makes_its_components_read_only_for_everyone_else,);

/// A book `book` on the book schema with its three divisions, and its
/// people (`common::Team`, which a `Book` derefs to).
struct Book {
    team: Team,
    front: i64,
    body: i64,
    back: i64,
}

impl std::ops::Deref for Book {
    type Target = Team;

    fn deref(&self) -> &Team {
        &self.team
    }
}

/// A server on the book schema with a book `book` of three divisions.
async fn book(backend: Backend) -> Option<Book> {
    let team = Team::start(backend, SCHEMA, "book").await?;
    let (app, mia, slug) = (&team.app, &team.mia, &team.slug);
    let front = id(&new_division(app, mia, slug, "Front matter", "front").await);
    let body = id(&new_division(app, mia, slug, "Body", "body").await);
    let back = id(&new_division(app, mia, slug, "Back matter", "back").await);
    Some(Book {
        team,
        front,
        body,
        back,
    })
}

const DIVISION: DeclaredType = DeclaredType {
    plural: "divisions",
    body_key: "division",
    nest_key: "divisions",
};

const COMPONENT: DeclaredType = DeclaredType {
    plural: "book_components",
    body_key: "bookComponent",
    nest_key: "bookComponents",
};

/// `POST /cases/:slug/divisions` as `user` (201); the division.
async fn new_division(
    app: &TestApp,
    user: &TestUser,
    slug: &str,
    title: &str,
    kind: &str,
) -> Value {
    app.create_in_case(
        user,
        slug,
        &DIVISION,
        json!({ "title": title, "kind": kind }),
    )
    .await
    .expect(201)
    .body
}

/// `POST /divisions/:id/book_components` with `fields`, as `user`.
async fn create_component(app: &TestApp, user: &TestUser, division: i64, fields: Value) -> Resp {
    app.create_in(user, (&DIVISION, division), &COMPONENT, fields)
        .await
}

/// A component titled `title` in `division`, as `user` (201).
async fn new_component(app: &TestApp, user: &TestUser, division: i64, title: &str) -> Value {
    create_component(app, user, division, json!({ "title": title }))
        .await
        .expect(201)
        .body
}

/// `PATCH /book_components/:id` with `fields`, as `user`.
async fn save(app: &TestApp, user: &TestUser, component: i64, fields: Value) -> Resp {
    app.update_record(user, &COMPONENT, component, fields).await
}

/// The component as `GET /book_components/:id` shows it.
async fn component_now(app: &TestApp, user: &TestUser, component: i64) -> Value {
    app.record_now(user, &COMPONENT, component).await
}

/// A division's components in `GET /cases/:slug`, as ids in the order shown.
async fn components_of(app: &TestApp, user: &TestUser, slug: &str, division: i64) -> Vec<i64> {
    app.nested_in(user, slug, (&DIVISION, division), &COMPONENT)
        .await
        .iter()
        .map(id)
        .collect()
}

/// `{lock: {lockableType, lockableParam, depth: "infinity"}}`
fn deep_body(lockable_type: &str, id: i64) -> Value {
    json!({ "lock": {
        "lockableType": lockable_type,
        "lockableParam": id.to_string(),
        "depth": "infinity",
    } })
}

/// Asserts a 423 `locked` naming the deep lock `deep` and its division.
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
        error["lockable"]["type"], "Division",
        "{what}: `lockable` is the deep-locked division: {}",
        refused.body
    );
    assert_eq!(
        error["lockable"]["param"], deep["lockable"]["param"],
        "{what}: `lockable` is the deep-locked division: {}",
        refused.body
    );
}

async fn divisions_and_components_are_created_with_their_defaults(b: Book) {
    let app = &b.app;
    let plain = app
        .post(&format!("/cases/{}/divisions", b.slug))
        .by(&b.mia)
        .json(json!({ "division": { "title": "Appendix" } }))
        .send()
        .await
        .expect(201)
        .body;
    assert_eq!(plain["type"], "Division", "{plain}");
    assert_eq!(plain["table"], "divisions", "{plain}");
    assert_eq!(plain["kind"], "body", "the declared default: {plain}");
    assert_eq!(plain["position"], 3, "after the three divisions: {plain}");

    let chapter = create_component(app, &b.bob, b.body, json!({ "title": "Chapter one" }))
        .await
        .expect(201);
    assert_eq!(chapter.etag().as_deref(), Some("\"1\""));
    let chapter = chapter.body;
    assert_eq!(chapter["type"], "BookComponent", "{chapter}");
    assert_eq!(chapter["table"], "book_components", "{chapter}");
    assert_eq!(chapter["param"], id(&chapter).to_string(), "{chapter}");
    assert_eq!(chapter["divisionId"], b.body, "{chapter}");
    assert_eq!(chapter["position"], 0, "{chapter}");
    assert_eq!(chapter["title"], "Chapter one", "{chapter}");
    assert_eq!(chapter["content"], "", "the declared default: {chapter}");
    assert_eq!(
        chapter["status"], "draft",
        "the declared default: {chapter}"
    );
    assert_eq!(
        chapter["dueOn"],
        Value::Null,
        "optional, no default: {chapter}"
    );
    assert_eq!(
        chapter["source"],
        Value::Null,
        "optional, no default: {chapter}"
    );
    assert_eq!(chapter["version"], 1, "{chapter}");
    assert_eq!(component_now(app, &b.rita, id(&chapter)).await, chapter);

    // The book nests components in their divisions, in order.
    let second = new_component(app, &b.bob, b.body, "Chapter two").await;
    assert_eq!(second["position"], 1, "{second}");
    let case = app
        .get(&format!("/cases/{}", b.slug))
        .by(&b.rita)
        .send()
        .await
        .expect(200)
        .body;
    let kinds: Vec<&Value> = case["divisions"]
        .as_array()
        .expect("divisions")
        .iter()
        .map(|d| &d["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("front"),
            &json!("body"),
            &json!("back"),
            &json!("body")
        ]
    );
    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.body).await,
        vec![id(&chapter), id(&second)]
    );

    // A title needs a character that is not blank (the declared pattern);
    // a component needs one at all.
    let blank = create_component(app, &b.bob, b.body, json!({ "title": "   " }))
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        blank.body["error"]["fields"][0]["field"], "title",
        "{}",
        blank.body
    );
    let untitled = create_component(app, &b.bob, b.body, json!({ "status": "done" }))
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        untitled.body["error"]["fields"][0]["field"], "title",
        "{}",
        untitled.body
    );
    let wrong_kind = app
        .post(&format!("/cases/{}/divisions", b.slug))
        .by(&b.mia)
        .json(json!({ "division": { "title": "Middle", "kind": "middle" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        wrong_kind.body["error"]["fields"][0]["field"], "kind",
        "{}",
        wrong_kind.body
    );
}

/// While Bob deep-locks the body, nobody else — another editor, the
/// manager, Bob's other tab — saves, deletes, adds or locks a component in
/// it; when the lock ends they can again.
async fn a_deep_lock_on_a_division_makes_its_components_read_only_for_everyone_else(
    backend: Backend,
) {
    let Some(b) = book(backend).await else {
        return;
    };
    let app = &b.app;
    let chapter = id(&new_component(app, &b.mia, b.body, "Chapter one").await);
    let preface = id(&new_component(app, &b.mia, b.front, "Preface").await);
    let (mut watcher, _) = app.open_tab(&b.slug, &b.rita.tab("watcher")).await;
    let bob = b.bob.tab("bob-tab");
    let deep = app
        .lock_expect(&bob, deep_body("Division", b.body), 201)
        .await
        .body;
    assert_eq!(deep["depth"], "infinity", "{deep}");

    let path = format!("/book_components/{chapter}");
    for other in [
        b.carol.tab("carol-tab"),
        b.mia.tab("mia-tab"),
        b.bob.tab("bob-2"),
    ] {
        let who = other.session.clone().unwrap();
        let refused = save(app, &other, chapter, json!({ "status": "review" })).await;
        assert_locked_by_deep(&refused, &deep, &format!("{who} saves a component"));
        let refused = app.delete(&path).by(&other).send().await;
        assert_locked_by_deep(&refused, &deep, &format!("{who} deletes a component"));
        let refused =
            create_component(app, &other, b.body, json!({ "title": "Chapter two" })).await;
        assert_locked_by_deep(&refused, &deep, &format!("{who} adds a component"));
        let refused = app
            .lock_error(
                &other,
                lock_body("BookComponent", chapter),
                409,
                "lock_held",
            )
            .await;
        assert_eq!(
            refused.body["error"]["lock"]["id"], deep["id"],
            "{who}: the refusal names the deep lock: {}",
            refused.body
        );
    }
    let unchanged = component_now(app, &b.rita, chapter).await;
    assert_eq!(unchanged["version"], 1, "{unchanged}");
    assert_eq!(unchanged["status"], "draft", "{unchanged}");
    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.body).await,
        vec![chapter]
    );
    // Another division is not covered.
    save(app, &b.carol, preface, json!({ "status": "review" }))
        .await
        .expect(200);

    // The lock ends; everyone may write again.
    app.release(&bob, id(&deep)).await;
    let destroy = watcher
        .next_where("the deep lock's destroy", |f| {
            f["type"] == "destroy"
                && f["watchable"]["type"] == "Lock"
                && f["watchable"]["id"] == deep["id"]
        })
        .await;
    assert_eq!(destroy["watchable"]["reason"], "released", "{destroy}");
    let saved = save(
        app,
        &b.carol.tab("carol-tab"),
        chapter,
        json!({ "status": "review" }),
    )
    .await
    .expect(200);
    assert_eq!(saved.body["status"], "review", "{}", saved.body);
    assert_eq!(saved.body["version"], 2, "{}", saved.body);
    let added = create_component(app, &b.mia, b.body, json!({ "title": "Chapter two" }))
        .await
        .expect(201);
    app.lock(&b.carol.tab("carol-tab"), "BookComponent", chapter)
        .await;
    app.delete(&format!("/book_components/{}", id(&added.body)))
        .by(&b.mia)
        .send()
        .await
        .expect(204);
}

/// Bob's deep lock is no obstacle to Bob's own tab: it locks and saves
/// inside, and its component lock outlives the deep one.
async fn the_deep_holders_tab_locks_and_saves_inside_its_division(b: Book) {
    let app = &b.app;
    let chapter = id(&new_component(app, &b.mia, b.body, "Chapter one").await);
    let epilogue = id(&new_component(app, &b.mia, b.body, "Epilogue").await);
    let bob = b.bob.tab("bob-tab");
    let deep = app
        .lock_expect(&bob, deep_body("Division", b.body), 201)
        .await
        .body;

    let inner = app.lock(&bob, "BookComponent", chapter).await;
    assert_eq!(inner["depth"], "0", "{inner}");
    let saved = app
        .patch(&format!("/book_components/{chapter}"))
        .by(&bob)
        .header("Lock-Token", inner["token"].as_str().unwrap())
        .json(json!({ "bookComponent": { "content": "It was a dark and stormy night." } }))
        .send()
        .await
        .expect(200);
    assert_eq!(saved.body["version"], 2, "{}", saved.body);
    let added = create_component(app, &bob, b.body, json!({ "title": "Interlude" }))
        .await
        .expect(201);
    assert_eq!(added.body["divisionId"], b.body, "{}", added.body);
    app.patch(&format!("/divisions/{}", b.body))
        .by(&bob)
        .json(json!({ "division": { "title": "The story" } }))
        .send()
        .await
        .expect(200);

    // Without the deep lock, the rest of the division is free again, the
    // component Bob locked is still his.
    app.release(&bob, id(&deep)).await;
    save(app, &b.carol, epilogue, json!({ "status": "done" }))
        .await
        .expect(200);
    let refused = save(app, &b.carol, chapter, json!({ "status": "done" }))
        .await
        .expect_error(423, "locked");
    assert_eq!(
        refused.body["error"]["lock"]["id"], inner["id"],
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["lock"]["depth"], "0",
        "{}",
        refused.body
    );
    app.release(&bob, id(&inner)).await;
    save(app, &b.carol, chapter, json!({ "status": "done" }))
        .await
        .expect(200);
}

/// A division goes with its components, in one transaction; not while
/// someone else holds one of them.
async fn deleting_a_division_deletes_its_components(b: Book) {
    let app = &b.app;
    let glossary = id(&new_component(app, &b.mia, b.back, "Glossary").await);
    let index = id(&new_component(app, &b.mia, b.back, "Index").await);
    let carol = b.carol.tab("carol-tab");
    let carols = app.lock(&carol, "BookComponent", index).await;

    let division = format!("/divisions/{}", b.back);
    let refused = app
        .delete(&division)
        .by(&b.bob.tab("bob-tab"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(
        refused.body["error"]["lock"]["id"], carols["id"],
        "{}",
        refused.body
    );
    // The manager is refused too: deleting is no takeover.
    app.delete(&division)
        .by(&b.mia.tab("mia-tab"))
        .send()
        .await
        .expect_error(423, "locked");
    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.back).await,
        vec![glossary, index],
        "nothing was deleted"
    );

    // Carol's own tab deletes it: her lock ends with the component.
    let (mut watcher, _) = app.open_tab(&b.slug, &b.rita.tab("watcher")).await;
    app.delete(&division).by(&carol).send().await.expect(204);
    for component in [glossary, index] {
        app.get(&format!("/book_components/{component}"))
            .by(&b.rita)
            .send()
            .await
            .expect_error(404, "not_found");
    }
    // The watching tab is told of each record that went, in any order.
    watcher
        .destroys_of(&[
            ("BookComponent", glossary),
            ("BookComponent", index),
            ("Division", b.back),
        ])
        .await;
    app.get(&division)
        .by(&b.rita)
        .send()
        .await
        .expect_error(404, "not_found");
    app.assert_lock_gone(&b.rita, id(&carols)).await;
    assert!(
        app.lock_ids_of_case(&b.rita, &b.slug).await.is_empty(),
        "no lock outlives its record"
    );
}

/// The index belongs in the back matter: moved there from the body, at the
/// front of it, broadcast to a watching tab.
async fn a_component_moves_between_divisions(b: Book) {
    let app = &b.app;
    let chapter = id(&new_component(app, &b.mia, b.body, "Chapter one").await);
    let index = id(&new_component(app, &b.mia, b.body, "Index").await);
    let glossary = id(&new_component(app, &b.mia, b.back, "Glossary").await);
    let (mut watcher, _) = app.open_tab(&b.slug, &b.rita.tab("watcher")).await;

    let bob = b.bob.tab("bob-tab");
    let moved = app
        .patch(&format!("/book_components/{index}"))
        .by(&bob)
        .json(json!({ "bookComponent": { "divisionId": b.back, "position": 0 } }))
        .send()
        .await
        .expect(200);
    assert_eq!(moved.body["divisionId"], b.back, "{}", moved.body);
    assert_eq!(moved.body["position"], 0, "{}", moved.body);
    assert_eq!(moved.body["title"], "Index", "{}", moved.body);
    assert_eq!(moved.body["version"], 2, "{}", moved.body);
    let update = watcher
        .next_where("the component's update", |f| {
            f["type"] == "update"
                && f["watchable"]["type"] == "BookComponent"
                && f["watchable"]["id"] == index
        })
        .await;
    assert_eq!(update["watchable"]["divisionId"], b.back, "{update}");
    assert_eq!(update["editorSessionId"], "bob-tab", "{update}");

    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.body).await,
        vec![chapter]
    );
    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.back).await,
        vec![index, glossary]
    );
    assert_eq!(component_now(app, &b.rita, glossary).await["position"], 1);

    // The snake_case key works too; a division is not movable.
    app.patch(&format!("/book_components/{index}"))
        .by(&bob)
        .json(json!({ "bookComponent": { "division_id": b.front.to_string() } }))
        .send()
        .await
        .expect(200);
    assert_eq!(
        components_of(app, &b.rita, &b.slug, b.front).await,
        vec![index]
    );
    app.patch(&format!("/divisions/{}", b.front))
        .by(&bob)
        .json(json!({ "division": { "caseId": 1 } }))
        .send()
        .await
        .expect_error(422, "invalid");
}

async fn a_due_date_must_be_a_date_and_a_source_an_address(b: Book) {
    let app = &b.app;
    let bad = create_component(
        app,
        &b.bob,
        b.body,
        json!({ "title": "Chapter one", "dueOn": "2026-13-40" }),
    )
    .await
    .expect_error(422, "invalid");
    let fields = bad.body["error"]["fields"].as_array().expect("fields");
    assert_eq!(fields.len(), 1, "{}", bad.body);
    assert_eq!(fields[0]["field"], "dueOn", "{}", bad.body);
    assert!(components_of(app, &b.rita, &b.slug, b.body)
        .await
        .is_empty());

    let chapter = create_component(
        app,
        &b.bob,
        b.body,
        json!({
            "title": "Chapter one",
            "dueOn": "2026-11-25",
            "source": "https://example.com/manuscripts/chapter-one.docx",
        }),
    )
    .await
    .expect(201)
    .body;
    assert_eq!(chapter["dueOn"], "2026-11-25", "{chapter}");
    assert_eq!(
        chapter["source"], "https://example.com/manuscripts/chapter-one.docx",
        "{chapter}"
    );
    let chapter = id(&chapter);

    // Saves are checked the same way: each bad value named, nothing saved.
    for (field, value) in [
        ("dueOn", json!("2026-13-40")),
        ("dueOn", json!("25/11/2026")),
        ("dueOn", json!(20261125)),
        ("source", json!("not an address")),
    ] {
        let bad = save(app, &b.bob, chapter, json!({ field: value }))
            .await
            .expect_error(422, "invalid");
        assert_eq!(
            bad.body["error"]["fields"][0]["field"], field,
            "{field} = {value}: {}",
            bad.body
        );
    }
    let now = component_now(app, &b.rita, chapter).await;
    assert_eq!(now["version"], 1, "{now}");
    assert_eq!(now["dueOn"], "2026-11-25", "{now}");

    let saved = save(
        app,
        &b.bob,
        chapter,
        json!({ "dueOn": "2027-02-28", "source": "http://archive.example.org/page?id=7#top" }),
    )
    .await
    .expect(200);
    assert_eq!(saved.body["dueOn"], "2027-02-28", "{}", saved.body);
    assert_eq!(
        saved.body["source"], "http://archive.example.org/page?id=7#top",
        "{}",
        saved.body
    );
}

/// A book component holds nothing: a deep lock on one is invalid, free or
/// inside someone else's deep lock, and takes nothing; on a division it is
/// granted.
async fn depth_infinity_on_a_book_component_is_invalid(b: Book) {
    let app = &b.app;
    let chapter = id(&new_component(app, &b.mia, b.body, "Chapter one").await);
    let preface = id(&new_component(app, &b.mia, b.front, "Preface").await);
    let carol = b.carol.tab("carol-tab");
    app.lock_error(&carol, deep_body("BookComponent", chapter), 422, "invalid")
        .await;
    let bobs = app
        .lock_expect(&b.bob.tab("bob-tab"), deep_body("Division", b.front), 201)
        .await
        .body;
    app.lock_error(&carol, deep_body("BookComponent", preface), 422, "invalid")
        .await;
    assert_eq!(
        app.lock_ids_of_case(&b.rita, &b.slug).await,
        vec![id(&bobs)]
    );
    // A plain lock on the free chapter is fine.
    let plain = app.lock(&carol, "BookComponent", chapter).await;
    assert_eq!(plain["depth"], "0", "{plain}");
}

/// `GET /schema`: Division then BookComponent, the plural, table and body
/// key the defaults give, the formats, and the component's 10-minute lease,
/// which its locks get.
async fn the_schema_names_the_book_types(b: Book) {
    let app = &b.app;
    let schema = app.get("/schema").by(&b.rita).send().await.expect(200).body;
    let types = schema["types"].as_array().expect("types");
    let names: Vec<&Value> = types.iter().map(|t| &t["name"]).collect();
    assert_eq!(names, [&json!("Division"), &json!("BookComponent")]);
    let component = &types[1];
    assert_eq!(component["plural"], "book_components", "{component}");
    assert_eq!(component["table"], "book_components", "{component}");
    assert_eq!(component["bodyKey"], "bookComponent", "{component}");
    assert_eq!(component["parentKey"], "divisionId", "{component}");
    assert_eq!(component["nestKey"], "bookComponents", "{component}");
    assert_eq!(types[0]["parentKey"], "caseId", "{}", types[0]);
    assert_eq!(component["parent"], "Division", "{component}");
    assert_eq!(component["movable"], true, "{component}");
    assert_eq!(component["label"], "title", "{component}");
    assert_eq!(component["required"], json!(["title"]), "{component}");
    assert_eq!(
        component["fields"]["dueOn"]["format"], "date",
        "{component}"
    );
    assert_eq!(
        component["fields"]["source"]["format"], "uri",
        "{component}"
    );
    assert_eq!(
        component["lock"],
        json!({ "lease": "10m", "takeover": "editor", "wait": true })
    );
    assert_eq!(types[0]["lock"]["lease"], Value::Null, "{}", types[0]);

    let chapter = id(&new_component(app, &b.mia, b.body, "Chapter one").await);
    let lock = app
        .lock(&b.bob.tab("bob-tab"), "BookComponent", chapter)
        .await;
    let lease = millis_between(&lock["createdAt"], &lock["expiresAt"]) / 1000;
    assert!((598..=602).contains(&lease), "a 10-minute lease: {lock}");
}

/// `serve --demo --schema book.toml` plants `book.demo.json`: front, body
/// and back matter with their components, in order.
async fn the_demo_book_is_seeded_from_the_file_beside_the_schema(app: TestApp) {
    let data = app.seed_demo_beside(SCHEMA).await;

    // What the database holds.
    let records = app
        .state
        .db
        .read(|conn| {
            let case = baton::models::Case::find_by_slug(conn, baton::demo::DEMO_CASE)?
                .expect("the sample case");
            StoredRecord::of_case(conn, case.id).map_err(baton::error::AppError::from)
        })
        .await
        .expect("the sample case's records");
    let planted = data["records"]["divisions"]
        .as_array()
        .expect("demo divisions");
    let components: usize = planted
        .iter()
        .map(|d| d["bookComponents"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(records.len(), planted.len() + components);

    // What a reader of the book sees.
    let case = app.demo_case().await;
    assert_eq!(case["title"], data["title"], "{case}");
    let divisions = case["divisions"].as_array().expect("divisions");
    let kinds: Vec<&str> = divisions
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["front", "body", "back"], "{case}");
    for (shown, planted) in divisions.iter().zip(planted) {
        assert_eq!(shown["title"], planted["title"], "{shown}");
        let want = planted["bookComponents"]
            .as_array()
            .expect("demo components");
        assert!(!want.is_empty(), "every demo division has components");
        let components = shown["bookComponents"].as_array().expect("components");
        let titles: Vec<&Value> = components.iter().map(|c| &c["title"]).collect();
        let want_titles: Vec<&Value> = want.iter().map(|c| &c["title"]).collect();
        assert_eq!(titles, want_titles, "{shown}");
        for (component, planted) in components.iter().zip(want) {
            assert_eq!(component["divisionId"], shown["id"], "{component}");
            for field in ["status", "dueOn", "source"] {
                if let Some(value) = planted.get(field) {
                    assert_eq!(&component[field], value, "{field}: {component}");
                }
            }
        }
    }
    // Bob edits the book.
    let bob = app.signed_in("bob@example.com").await;
    let preface = id(&divisions[0]["bookComponents"][1]);
    app.req(Method::PATCH, &format!("/book_components/{preface}"))
        .by(&bob)
        .json(json!({ "bookComponent": { "status": "done" } }))
        .send()
        .await
        .expect(200);
}
