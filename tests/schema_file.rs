//! The schema file: the seeds' three schemas parse, every refusal names the
//! file, the type and the key, names and plurals, printing round trips, and
//! bodies are validated against the declared JSON Schemas.

use std::path::Path;

use serde_json::{json, Map, Value};

use baton::schema::*;

const KANBAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/schemas/kanban.toml");
const BOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/schemas/book.toml");
const CASEBOOK_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/schemas/casebook.toml"
);

fn kanban() -> Schema {
    Schema::load(Path::new(KANBAN)).unwrap()
}

fn book() -> Schema {
    Schema::load(Path::new(BOOK)).unwrap()
}

/// The problem lines of a file that must be refused, as `Display` gives them.
fn refused(text: &str) -> Vec<String> {
    match Schema::parse(text, "t.toml") {
        Ok(schema) => panic!("accepted:\n{text}\n{schema:?}"),
        Err(e) => {
            let lines: Vec<String> = e.to_string().lines().map(str::to_string).collect();
            assert_eq!(lines.len(), e.problems.len(), "one line per problem");
            assert!(lines.iter().all(|l| l.starts_with("t.toml: ")), "{lines:?}");
            lines
        }
    }
}

/// Asserts some problem line starts with `path` and contains `words`.
fn assert_problem(lines: &[String], path: &str, words: &str) {
    let prefix = format!("t.toml: {path}: ");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&prefix) && l.contains(words)),
        "no problem at {path} saying {words:?} in:\n{}",
        lines.join("\n")
    );
}

/// A one-type file with `body` under `[types.Thing]`.
fn thing(body: &str) -> String {
    format!("[types.Thing]\n{body}\n")
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn messages(errors: &[FieldError]) -> Vec<&str> {
    errors.iter().map(|e| e.message.as_str()).collect()
}

// ---- the seed files ----

#[test]
fn the_three_seeds_parse() {
    let casebook = Schema::casebook();
    assert_eq!(casebook, Schema::load(Path::new(CASEBOOK_PATH)).unwrap());
    let names = |s: &Schema| s.types().iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&casebook), ["Page", "Card", "Edgenote"]);
    assert_eq!(names(&kanban()), ["Column", "Card"]);
    assert_eq!(names(&book()), ["Division", "BookComponent"]);
}

#[test]
fn casebook_derives_names_labels_and_keys() {
    let s = Schema::casebook();
    let page = s.get("Page").unwrap();
    assert_eq!(
        (
            page.plural.as_str(),
            page.parent.as_deref(),
            page.parent_key.as_str()
        ),
        ("pages", None, "caseId")
    );
    assert!(page.ordered && !page.movable);
    assert_eq!(page.label.as_deref(), Some("title"));
    let card = s.get("Card").unwrap();
    assert_eq!(card.parent.as_deref(), Some("Page"));
    assert_eq!(card.parent_key, "pageId");
    assert!(card.ordered && card.movable);
    assert_eq!(card.label.as_deref(), Some("content"));
    let note = s.get("Edgenote").unwrap();
    assert_eq!(note.plural, "edgenotes");
    assert_eq!(note.label.as_deref(), Some("caption"));
    assert_eq!(note.unique, ["slug"]);
    assert_eq!(note.required, ["slug", "caption"]);
    assert_eq!(note.lock, LockRules::default());
    assert_eq!(note.store, Store::Stored);
}

#[test]
fn book_component_names() {
    let s = book();
    let c = s.get("BookComponent").unwrap();
    assert_eq!(c.plural, "book_components");
    assert_eq!(c.table(), "book_components");
    assert_eq!(c.body_key, "bookComponent");
    assert_eq!(c.nest_key, "bookComponents");
    assert_eq!(c.words, "book component");
    assert_eq!(c.parent_key, "divisionId");
    assert_eq!(c.lock.lease, Some(std::time::Duration::from_secs(600)));
    let d = s.get("Division").unwrap();
    assert_eq!(
        (d.body_key.as_str(), d.nest_key.as_str()),
        ("division", "divisions")
    );
    assert_eq!(d.parent_key, "caseId");
}

#[test]
fn a_declared_plural_changes_routes_and_nesting_not_the_parent_key() {
    let s = Schema::parse(
        "[types.Shelf]\nplural = \"shelves\"\n[types.Book]\nparent = \"Shelf\"\n",
        "t.toml",
    )
    .unwrap();
    let shelf = s.get("Shelf").unwrap();
    assert_eq!(
        (shelf.plural.as_str(), shelf.nest_key.as_str()),
        ("shelves", "shelves")
    );
    assert_eq!(s.get("Book").unwrap().parent_key, "shelfId");
    assert_eq!(s.by_plural("shelves").unwrap().name, "Shelf");
}

#[test]
fn tree_lookups() {
    let s = Schema::parse(
        "[types.A]\n[types.B]\nparent = \"A\"\n[types.C]\nparent = \"B\"\n\
         [types.D]\nparent = \"A\"\n[types.E]\n",
        "t.toml",
    )
    .unwrap();
    let names = |v: Vec<&RecordType>| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(s.children_of(None)), ["A", "E"]);
    assert_eq!(names(s.children_of(Some("A"))), ["B", "D"]);
    assert_eq!(names(s.ancestors("C")), ["B", "A"]);
    assert!(s.ancestors("A").is_empty());
    assert!(s.ancestors("Nope").is_empty());
    assert_eq!(names(s.descendants("A")), ["B", "C", "D"]);
    assert_eq!(names(s.descendants("B")), ["C"]);
    assert!(s.descendants("E").is_empty());
    assert!(s.get("a").is_none());
    assert_eq!(s.by_plural("cs").unwrap().name, "C");
}

#[test]
fn kanban_card_lock_rules() {
    let s = kanban();
    let card = s.get("Card").unwrap();
    assert_eq!(
        card.lock,
        LockRules {
            lease: Some(std::time::Duration::from_secs(120)),
            lease_text: Some("2m".to_string()),
            takeover: TakeoverRule::Manager,
            wait: false,
        }
    );
    assert_eq!(card.parent_key, "columnId");
    assert_eq!(card.label, None, "no required string field");
    assert_eq!(s.get("Column").unwrap().label.as_deref(), Some("title"));
}

// ---- JSON and TOML output ----

#[test]
fn to_json_gives_every_key_for_kanban_card() {
    let json = kanban().to_json();
    let types = json["types"].as_array().unwrap();
    assert_eq!(json.as_object().unwrap().len(), 1);
    assert_eq!(types.len(), 2);
    let card = &types[1];
    let expected = json!({
        "name": "Card",
        "plural": "cards",
        "table": "cards",
        "parent": "Column",
        "store": "baton",
        "ordered": true,
        "movable": true,
        "label": null,
        "fields": {
            "content": {"type": "string", "maxLength": 20000, "default": ""},
            "color": {"enum": ["none", "red", "green", "blue"], "default": "none"}
        },
        "required": [],
        "unique": [],
        "lock": {"lease": "2m", "takeover": "manager", "wait": false}
    });
    assert_eq!(card, &expected);
    // Declaration order of keys, as DESIGN lists them.
    let keys: Vec<&str> = card
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name", "plural", "table", "parent", "store", "ordered", "movable", "label", "fields",
            "required", "unique", "lock"
        ]
    );
    let field_keys: Vec<&str> = card["fields"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(field_keys, ["content", "color"]);
    let column = &types[0];
    assert_eq!(column["parent"], "Case");
    assert_eq!(
        column["lock"],
        json!({"lease": null, "takeover": "editor", "wait": true})
    );
    assert_eq!(column["label"], "title");
}

#[test]
fn external_types_in_json_and_lookups() {
    let s = Schema::parse(
        "[types.Invoice]\nstore = \"external\"\nlock.takeover = \"none\"\n",
        "t.toml",
    )
    .unwrap();
    let invoice = s.get("Invoice").unwrap();
    assert!(invoice.is_external());
    assert_eq!(
        s.to_json()["types"][0],
        json!({
            "name": "Invoice", "plural": "invoices", "table": "invoices", "parent": "Case",
            "store": "external", "ordered": false, "movable": false, "label": null,
            "fields": {}, "required": [], "unique": [],
            "lock": {"lease": null, "takeover": "none", "wait": true}
        })
    );
}

#[test]
fn print_parses_back_to_an_equal_schema() {
    let external = Schema::parse(
        "[types.Invoice]\nstore = \"external\"\nlock.lease = \"90s\"\nlock.wait = false\n\
         [types.Odd]\nplural = \"odds_and_ends\"\nfields.n = { type = \"number\", minimum = 0.5, maximum = 2, default = 1.0, title = \"N \\\"quoted\\\"\" }\n\
         fields.flag = { type = \"boolean\", default = false, description = \"back\\\\slash, bell \\u0007, tab\\t, é\" }\nfields.pick = { enum = [1, 2.5, true, \"x\"] }\n",
        "t.toml",
    )
    .unwrap();
    for schema in [Schema::casebook(), kanban(), book(), external] {
        let text = schema.to_toml();
        let again =
            Schema::parse(&text, "printed.toml").unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
        assert_eq!(again, schema, "{text}");
        assert_eq!(again.to_toml(), text, "printing is stable");
    }
}

#[test]
fn print_looks_like_the_hand_written_file() {
    let text = kanban().to_toml();
    assert!(
        text.contains("[types.Card]\nparent = \"Column\"\nplural = \"cards\"\n"),
        "{text}"
    );
    assert!(text.contains("fields.color = { enum = [\"none\", \"red\", \"green\", \"blue\"], default = \"none\" }"), "{text}");
    assert!(
        text.contains("lock.lease = \"2m\"\nlock.takeover = \"manager\"\nlock.wait = false\n"),
        "{text}"
    );
}

// ---- refusals ----

#[test]
fn unknown_keys_anywhere_are_refused_with_their_path() {
    let lines = refused(&format!(
        "{}colour = 1\n",
        thing("lock.leas = \"2m\"\nfields.x = { type = \"string\", maxLenght = 3 }")
    ));
    assert!(
        lines.contains(
            &"t.toml: types.Thing.lock.leas: unknown key (expected lease, takeover or wait)"
                .to_string()
        ),
        "{lines:?}"
    );
    assert_problem(
        &lines,
        "types.Thing.fields.x.maxLenght",
        "unknown keyword (expected type, enum,",
    );
    assert_problem(&lines, "types.Thing.colour", "unknown key (expected parent, plural, ordered, movable, fields, required, unique, label, store or lock)");
    let lines = refused("title = \"x\"\n[types.Thing]\n");
    assert_problem(&lines, "title", "unknown key (expected types)");
}

#[test]
fn all_problems_are_collected() {
    let lines = refused(
        "[types.card]\n[types.Lock]\n[types.Thing]\nparent = \"Nope\"\nordered = \"yes\"\nlock.takeover = \"admin\"\n",
    );
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(
        lines[0].starts_with("t.toml: types.card:"),
        "type by type: {lines:?}"
    );
    assert!(
        lines[1].starts_with("t.toml: types.Lock:"),
        "type by type: {lines:?}"
    );
    assert!(
        lines[1].ends_with("(Case, User, Lock, Waiter, Membership and LockEvent are)"),
        "{lines:?}"
    );
    assert_problem(&lines, "types.card", "PascalCase");
    assert_problem(&lines, "types.Lock", "taken");
    assert_problem(
        &lines,
        "types.Thing.parent",
        "no type named Nope is declared",
    );
    assert_problem(&lines, "types.Thing.ordered", "must be true or false");
    assert_problem(
        &lines,
        "types.Thing.lock.takeover",
        "\"editor\", \"manager\" or \"none\"",
    );
}

#[test]
fn a_syntax_error_names_file_and_line() {
    let e = Schema::parse(
        "[types.A]\nordered = true\nfields.x = { type = \n",
        "bad.toml",
    )
    .unwrap_err();
    assert_eq!(e.file, "bad.toml");
    let text = e.to_string();
    assert!(text.starts_with("bad.toml: line 3, column"), "{text}");
    assert!(text.ends_with("(in `fields.x = { type =`)"), "{text}");
}

#[test]
fn an_unreadable_file_is_named() {
    let e = Schema::load(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: can't read it"),
        "{e}"
    );
}

#[test]
fn at_least_one_type() {
    assert_problem(&refused(""), "types", "no types declared");
    assert_problem(&refused("[types]\n"), "types", "no types declared");
    assert_problem(&refused("types = 3\n"), "types", "must be a table");
}

#[test]
fn type_names() {
    for bad in ["card", "Book_Component", "\"Book Component\""] {
        let lines = refused(&format!("[types.{bad}]\n"));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("PascalCase"), "{lines:?}");
    }
    for taken in TAKEN_NAMES {
        assert_problem(
            &refused(&format!("[types.{taken}]\n")),
            &format!("types.{taken}"),
            "taken",
        );
    }
    assert_problem(
        &refused("[types.Thing]\n[types.THING]\n"),
        "types.THING",
        "body key thing is also Thing's",
    );
}

#[test]
fn parents_must_be_declared_and_not_external() {
    assert_problem(
        &refused(&thing("parent = \"Page\"")),
        "types.Thing.parent",
        "no type named Page is declared (a parent is \"Case\" or one of: Thing)",
    );
    let lines =
        refused("[types.Invoice]\nstore = \"external\"\n[types.Line]\nparent = \"Invoice\"\n");
    assert_problem(
        &lines,
        "types.Line.parent",
        "Invoice is an external type, so it can't have children",
    );
    assert_problem(
        &refused(&thing("parent = 3")),
        "types.Thing.parent",
        "must be a string",
    );
}

#[test]
fn a_cycle_names_every_type_in_it() {
    let lines = refused(
        "[types.A]\nparent = \"C\"\n[types.B]\nparent = \"A\"\n[types.C]\nparent = \"B\"\n[types.D]\nparent = \"A\"\n",
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        lines[0],
        "t.toml: types.A.parent, types.B.parent, types.C.parent: the parents form a cycle: A → C → B → A (every chain of parents must end at the case)"
    );
    let lines = refused("[types.A]\nparent = \"A\"\n");
    assert_problem(&lines, "types.A.parent", "A → A");
}

#[test]
fn plurals() {
    assert_problem(
        &refused(&thing("plural = \"Things\"")),
        "types.Thing.plural",
        "must be lower case",
    );
    assert_problem(
        &refused("[types.Box]\n[types.Crate]\nplural = \"boxes\"\n"),
        "types.Crate.plural",
        "boxes is also the plural of Box",
    );
    assert_problem(
        &refused(&thing("plural = \"users\"")),
        "types.Thing.plural",
        "one of baton's own routes (/users)",
    );
    assert_problem(
        &refused("[types.Metric]\n"),
        "types.Metric.plural",
        "metrics is one of baton's own routes (/metrics) (the default plural of Metric",
    );
    for reserved in RESERVED_PLURALS {
        assert_problem(
            &refused(&thing(&format!("plural = \"{reserved}\""))),
            "types.Thing.plural",
            "baton's own routes",
        );
    }
    assert_problem(
        &refused(&thing("plural = \"active_locks\"")),
        "types.Thing.plural",
        "would nest as activeLocks, a key a case's JSON already has",
    );
    assert_problem(
        &refused("[types.A]\n[types.B]\nparent = \"A\"\nplural = \"version\"\n"),
        "types.B.plural",
        "would nest as version, a key every A record already has",
    );
}

#[test]
fn movable_needs_a_parent_type() {
    assert_problem(
        &refused(&thing("movable = true")),
        "types.Thing.movable",
        "under the case can't be movable",
    );
    assert!(Schema::parse(&thing("movable = false"), "t.toml").is_ok());
}

#[test]
fn external_types_have_no_fields_and_sit_under_the_case() {
    let lines = refused(
        "[types.Page]\n[types.Invoice]\nstore = \"external\"\nparent = \"Page\"\nordered = true\nmovable = false\n\
         fields.x = { type = \"string\" }\nrequired = [\"x\"]\nunique = [\"x\"]\nlabel = \"x\"\n",
    );
    for key in [
        "fields", "required", "unique", "label", "ordered", "movable",
    ] {
        assert_problem(
            &lines,
            &format!("types.Invoice.{key}"),
            "not allowed on an external type",
        );
    }
    assert_problem(
        &lines,
        "types.Invoice.parent",
        "an external type's parent is the case",
    );
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert_problem(
        &refused(&thing("store = \"mine\"")),
        "types.Thing.store",
        "\"baton\" or \"external\"",
    );
    assert!(Schema::parse(
        "[types.I]\nstore = \"external\"\nparent = \"Case\"\n",
        "t.toml"
    )
    .is_ok());
}

#[test]
fn field_names() {
    for (name, words) in [
        ("Title", "a field name is a lower-case letter"),
        ("due-on", "a field name is a lower-case letter"),
        ("\"due on\"", "a field name is a lower-case letter"),
        ("id", "reserved"),
        ("type", "reserved"),
        ("table", "reserved"),
        ("param", "reserved"),
        ("caseId", "reserved"),
        ("position", "reserved"),
        ("version", "reserved"),
        ("createdAt", "reserved"),
        ("updatedAt", "reserved"),
    ] {
        let lines = refused(&thing(&format!("fields.{name} = {{ type = \"string\" }}")));
        assert_problem(&lines, &format!("types.Thing.fields.{name}"), words);
    }
    // The type's own parent key, but not another type's.
    let lines = refused(
        "[types.Column]\n[types.Card]\nparent = \"Column\"\nfields.columnId = { type = \"integer\" }\n",
    );
    assert_problem(
        &lines,
        "types.Card.fields.columnId",
        "reserved: it carries the record's Column id",
    );
    assert!(Schema::parse(&thing("fields.columnId = { type = \"integer\" }"), "t.toml").is_ok());
    // A child type's nest key.
    let lines = refused(
        "[types.Column]\nfields.cards = { type = \"string\" }\n[types.Card]\nparent = \"Column\"\n",
    );
    assert_problem(
        &lines,
        "types.Column.fields.cards",
        "where a Column's Card records nest",
    );
}

#[test]
fn field_schemas() {
    let cases: &[(&str, &str, &str)] = &[
        ("{ title = \"x\" }", "fields.f", "needs a type"),
        ("3", "fields.f", "must be a JSON Schema table"),
        (
            "{ type = [\"string\", \"null\"] }",
            "fields.f.type",
            "one type, as a string",
        ),
        ("{ type = \"object\" }", "fields.f.type", "must be one of"),
        ("{ enum = [] }", "fields.f.enum", "at least one value"),
        (
            "{ enum = [[1]] }",
            "fields.f.enum",
            "strings, numbers or booleans",
        ),
        ("{ enum = [\"a\", \"a\"] }", "fields.f.enum", "listed twice"),
        (
            "{ type = \"integer\", enum = [1, \"two\"] }",
            "fields.f.enum",
            "\"two\" is not of the field's type, integer",
        ),
        (
            "{ type = \"integer\", format = \"date\" }",
            "fields.f.format",
            "only to a field of type = \"string\"",
        ),
        (
            "{ type = \"string\", format = \"ipv4\" }",
            "fields.f.format",
            "must be one of",
        ),
        (
            "{ type = \"integer\", maxLength = 3 }",
            "fields.f.maxLength",
            "only to strings, and this field is integer",
        ),
        (
            "{ type = \"boolean\", pattern = \"x\" }",
            "fields.f.pattern",
            "only to strings",
        ),
        (
            "{ type = \"string\", minLength = -1 }",
            "fields.f.minLength",
            "0 or more",
        ),
        (
            "{ type = \"string\", minLength = 1.5 }",
            "fields.f.minLength",
            "whole number",
        ),
        (
            "{ type = \"string\", minLength = 5, maxLength = 2 }",
            "fields.f.minLength",
            "5 is more than maxLength, 2",
        ),
        (
            "{ type = \"string\", pattern = \"[a-\" }",
            "fields.f.pattern",
            "\"[a-\" is not a valid regular expression",
        ),
        (
            "{ type = \"string\", minimum = 1 }",
            "fields.f.minimum",
            "only to numbers",
        ),
        (
            "{ type = \"number\", maximum = \"ten\" }",
            "fields.f.maximum",
            "must be a number",
        ),
        (
            "{ type = \"integer\", minimum = 5, maximum = 1 }",
            "fields.f.minimum",
            "5 is more than maximum, 1",
        ),
        (
            "{ type = \"string\", title = 3 }",
            "fields.f.title",
            "must be a string",
        ),
        (
            "{ type = \"string\", description = false }",
            "fields.f.description",
            "must be a string",
        ),
        (
            "{ type = \"string\", format = \"date\", default = 2026-11-25 }",
            "fields.f.default",
            "in quotes",
        ),
        (
            "{ type = \"string\", default = [\"a\"] }",
            "fields.f.default",
            "must be a string, number or boolean",
        ),
        (
            "{ type = \"string\", \"$ref\" = \"http://example.com/s.json\" }",
            "fields.f.\"$ref\"",
            "unknown keyword",
        ),
    ];
    for (schema, path, words) in cases {
        let lines = refused(&thing(&format!("fields.f = {schema}")));
        assert_problem(&lines, &format!("types.Thing.{path}"), words);
    }
}

#[test]
fn a_default_that_breaks_its_own_schema_is_refused() {
    for (schema, words) in [
        (
            "{ enum = [\"none\", \"red\"], default = \"purple\" }",
            "the default must be one of: none, red.",
        ),
        (
            "{ type = \"string\", format = \"date\", default = \"2026-13-40\" }",
            "the default must be a date like 2026-11-25.",
        ),
        (
            "{ type = \"string\", maxLength = 2, default = \"abc\" }",
            "the default is too long (at most 2 characters).",
        ),
        (
            "{ type = \"integer\", default = \"1\" }",
            "the default must be a whole number.",
        ),
        (
            "{ type = \"string\", minLength = 1, default = \"\" }",
            "the default can't be blank.",
        ),
    ] {
        let lines = refused(&thing(&format!("fields.f = {schema}")));
        assert_problem(&lines, "types.Thing.fields.f.default", words);
    }
}

#[test]
fn required_unique_and_label() {
    let f = "fields.title = { type = \"string\" }\nfields.done = { type = \"boolean\" }\nfields.n = { type = \"integer\" }\n";
    assert_problem(
        &refused(&thing(&format!("{f}required = [\"titel\"]"))),
        "types.Thing.required",
        "titel is not a declared field (its fields: title, done, n)",
    );
    assert_problem(
        &refused(&thing(&format!("{f}required = [\"title\", \"title\"]"))),
        "types.Thing.required",
        "listed twice",
    );
    assert_problem(
        &refused(&thing(&format!("{f}required = \"title\""))),
        "types.Thing.required",
        "must be an array",
    );
    assert_problem(
        &refused(&thing(&format!("{f}unique = [\"done\"]"))),
        "types.Thing.unique",
        "done is true or false, so it can't be unique",
    );
    assert_problem(
        &refused(&thing(&format!("{f}unique = [\"nope\"]"))),
        "types.Thing.unique",
        "not a declared field",
    );
    assert_problem(
        &refused(&thing(&format!("{f}label = \"n\""))),
        "types.Thing.label",
        "n is integer; a label must be a string field",
    );
    assert_problem(
        &refused(&thing(&format!("{f}label = \"nope\""))),
        "types.Thing.label",
        "nope is not a declared field",
    );
    assert_problem(
        &refused(&thing("required = [\"x\"]")),
        "types.Thing.required",
        "the type has no fields",
    );
    // A string enum is a string field; a unique integer is fine.
    let s = Schema::parse(
        &thing(&format!("{f}fields.tag = {{ enum = [\"a\", \"b\"] }}\nunique = [\"n\", \"title\"]\nlabel = \"tag\"")),
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.get("Thing").unwrap().label.as_deref(), Some("tag"));
}

#[test]
fn lock_rules_are_checked() {
    assert_problem(
        &refused(&thing("lock.lease = \"0s\"")),
        "types.Thing.lock.lease",
        "more than zero",
    );
    assert_problem(
        &refused(&thing("lock.lease = \"soon\"")),
        "types.Thing.lock.lease",
        "\"soon\" is not a duration",
    );
    assert_problem(
        &refused(&thing("lock.lease = 120")),
        "types.Thing.lock.lease",
        "must be a string",
    );
    assert_problem(
        &refused(&thing("lock.wait = \"no\"")),
        "types.Thing.lock.wait",
        "must be true or false, not a string",
    );
    assert_problem(
        &refused(&thing("lock = \"strict\"")),
        "types.Thing.lock",
        "must be a table",
    );
    let s = Schema::parse(
        &thing("lock.lease = \"1h 30m\"\nlock.takeover = \"none\""),
        "t.toml",
    )
    .unwrap();
    let lock = &s.get("Thing").unwrap().lock;
    assert_eq!(lock.lease, Some(std::time::Duration::from_secs(5400)));
    assert_eq!(lock.lease_text.as_deref(), Some("1h 30m"));
    assert_eq!(lock.takeover, TakeoverRule::None);
    assert!(lock.wait);
}

#[test]
fn schema_error_display_is_one_line_per_problem() {
    let e = SchemaError {
        file: "kanban.toml".to_string(),
        problems: vec!["a: one".to_string(), "b: two".to_string()],
    };
    assert_eq!(e.to_string(), "kanban.toml: a: one\nkanban.toml: b: two");
}

// ---- bodies ----

#[test]
fn check_create_fills_defaults_and_nulls() {
    let s = kanban();
    let card = s.get("Card").unwrap();
    let record = card.check_create(&obj(json!({}))).unwrap();
    assert_eq!(
        Value::Object(record),
        json!({"content": "", "color": "none"})
    );
    let record = card
        .check_create(&obj(json!({"color": "red", "content": "Fix the boiler"})))
        .unwrap();
    let keys: Vec<&str> = record.keys().map(String::as_str).collect();
    assert_eq!(keys, ["content", "color"], "declaration order");
    assert_eq!(record["color"], "red");

    let s = book();
    let component = s.get("BookComponent").unwrap();
    let record = component
        .check_create(&obj(json!({"title": "Preface", "dueOn": null})))
        .unwrap();
    assert_eq!(
        Value::Object(record),
        json!({"title": "Preface", "content": "", "status": "draft", "dueOn": null, "source": null})
    );
}

#[test]
fn check_create_collects_every_bad_field() {
    let s = kanban();
    let card = s.get("Card").unwrap();
    let errors = card
        .check_create(&obj(
            json!({"colour": "red", "color": "purple", "content": 5, "position": 1}),
        ))
        .unwrap_err();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["content", "color", "colour", "position"]);
    assert_eq!(
        messages(&errors),
        [
            "card.content must be a string.",
            "card.color must be one of: none, red, green, blue.",
            "card.colour is not a field of Card (its fields: content, color).",
            "card.position is not a field of Card (its fields: content, color).",
        ]
    );
    let long = "x".repeat(20001);
    let errors = card
        .check_create(&obj(json!({"content": long})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        ["card.content is too long (at most 20000 characters)."]
    );
}

#[test]
fn casebook_messages() {
    let s = Schema::casebook();
    let card = s.get("Card").unwrap();
    for body in [json!({}), json!({"content": null})] {
        let errors = card.check_create(&obj(body)).unwrap_err();
        assert_eq!(
            errors,
            [FieldError {
                field: "content".into(),
                message: "card.content is required.".into()
            }]
        );
    }
    assert!(
        card.check_create(&obj(json!({"content": ""}))).is_ok(),
        "it may be empty"
    );

    let page = s.get("Page").unwrap();
    for blank in ["", "   ", "\t\n"] {
        let errors = page
            .check_create(&obj(json!({"title": blank})))
            .unwrap_err();
        assert_eq!(
            messages(&errors),
            ["page.title can't be blank."],
            "{blank:?}"
        );
    }
    let errors = page
        .check_create(&obj(json!({"title": "t".repeat(201)})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        ["page.title is too long (at most 200 characters)."]
    );

    let note = s.get("Edgenote").unwrap();
    let errors = note
        .check_create(&obj(json!({"slug": "Bad Slug", "caption": " "})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "edgenote.slug must match the pattern ^[a-z0-9][a-z0-9-]*$ (Lowercase letters, digits and dashes; unique within the case).",
            "edgenote.caption can't be blank.",
        ]
    );
    let record = note
        .check_create(&obj(json!({"slug": "fig-1", "caption": "Figure 1"})))
        .unwrap();
    assert_eq!(
        Value::Object(record),
        json!({"slug": "fig-1", "caption": "Figure 1", "content": ""})
    );
}

#[test]
fn pattern_without_description_and_short_strings() {
    let s = Schema::parse(
        &thing("fields.code = { type = \"string\", pattern = \"^[A-Z]+$\", minLength = 3 }"),
        "t.toml",
    )
    .unwrap();
    let t = s.get("Thing").unwrap();
    let errors = t.check_create(&obj(json!({"code": "abcd"}))).unwrap_err();
    assert_eq!(
        messages(&errors),
        ["thing.code must match the pattern ^[A-Z]+$."]
    );
    let errors = t.check_create(&obj(json!({"code": "AB"}))).unwrap_err();
    assert_eq!(
        messages(&errors),
        ["thing.code is too short (at least 3 characters)."]
    );
}

#[test]
fn formats_are_asserted() {
    let s = book();
    let c = s.get("BookComponent").unwrap();
    let errors = c
        .check_create(&obj(
            json!({"title": "Ch. 1", "dueOn": "2026-13-40", "source": "not an address"}),
        ))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "bookComponent.dueOn must be a date like 2026-11-25.",
            "bookComponent.source must be an address like https://example.com/.",
        ]
    );
    assert!(c
        .check_create(&obj(json!({"title": "Ch. 1", "dueOn": "2026-02-28", "source": "https://example.com/ms.docx"})))
        .is_ok());

    let s = Schema::parse(
        &thing("fields.at = { type = \"string\", format = \"date-time\" }\nfields.mail = { type = \"string\", format = \"email\" }"),
        "t.toml",
    )
    .unwrap();
    let t = s.get("Thing").unwrap();
    let errors = t
        .check_update(&obj(json!({"at": "2026-11-25 10:42", "mail": "bob"})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "thing.at must be a date and time like 2026-11-25T10:42:00Z.",
            "thing.mail must be an email address like bob@example.com.",
        ]
    );
    assert!(t
        .check_update(&obj(
            json!({"at": "2026-11-25T10:42:00Z", "mail": "bob@example.com"})
        ))
        .is_ok());
}

#[test]
fn type_and_range_messages() {
    let s = Schema::parse(
        &thing(
            "fields.count = { type = \"integer\", minimum = 0, maximum = 10 }\n\
             fields.ratio = { type = \"number\", minimum = 0.5 }\n\
             fields.done = { type = \"boolean\" }\n\
             fields.name = { type = \"string\" }\n\
             fields.pick = { enum = [1, 2, 3] }",
        ),
        "t.toml",
    )
    .unwrap();
    let t = s.get("Thing").unwrap();
    let errors = t
        .check_update(&obj(
            json!({"count": 1.5, "ratio": "x", "done": "yes", "name": 3, "pick": 4}),
        ))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "thing.count must be a whole number.",
            "thing.ratio must be a number.",
            "thing.done must be true or false.",
            "thing.name must be a string.",
            "thing.pick must be one of: 1, 2, 3.",
        ]
    );
    let errors = t
        .check_update(&obj(json!({"count": -1, "ratio": 0.25})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        [
            "thing.count must be 0 or more.",
            "thing.ratio must be 0.5 or more."
        ]
    );
    let changes = t
        .check_update(&obj(json!({"count": 2.0, "ratio": 2.0})))
        .unwrap();
    assert_eq!(
        Value::Object(changes),
        json!({"count": 2, "ratio": 2.0}),
        "2.0 is a whole number"
    );
    let errors = t.check_update(&obj(json!({"count": 11}))).unwrap_err();
    assert_eq!(messages(&errors), ["thing.count must be 10 or less."]);
}

#[test]
fn check_update_takes_only_the_given_fields() {
    let s = kanban();
    let card = s.get("Card").unwrap();
    assert!(card.check_update(&obj(json!({}))).unwrap().is_empty());
    let changes = card
        .check_update(&obj(json!({"color": "blue", "content": null})))
        .unwrap();
    assert_eq!(Value::Object(changes), json!({"color": "blue"}));
    let errors = card
        .check_update(&obj(json!({"colour": "blue"})))
        .unwrap_err();
    assert_eq!(
        messages(&errors),
        ["card.colour is not a field of Card (its fields: content, color)."]
    );
    // A required field may be left out of an update, but not made blank.
    let s = Schema::casebook();
    let page = s.get("Page").unwrap();
    assert!(page.check_update(&obj(json!({}))).unwrap().is_empty());
    assert_eq!(
        messages(&page.check_update(&obj(json!({"title": " "}))).unwrap_err()),
        ["page.title can't be blank."]
    );
}

#[test]
fn unknown_keys_on_a_type_without_fields() {
    let s = Schema::parse("[types.Folder]\n", "t.toml").unwrap();
    let folder = s.get("Folder").unwrap();
    assert!(folder.check_create(&obj(json!({}))).unwrap().is_empty());
    let errors = folder.check_create(&obj(json!({"name": "x"}))).unwrap_err();
    assert_eq!(
        messages(&errors),
        ["folder.name is not a field of Folder (it has no fields)."]
    );
}

#[test]
fn value_fits_for_start_up_checks() {
    let s = book();
    let c = s.get("BookComponent").unwrap();
    assert!(c.value_fits("title", &json!("Preface")));
    assert!(!c.value_fits("title", &json!(null)), "required");
    assert!(!c.value_fits("title", &json!(3)));
    assert!(c.value_fits("dueOn", &json!(null)), "optional");
    assert!(!c.value_fits("dueOn", &json!("2026-13-40")));
    assert!(c.value_fits("status", &json!("review")));
    assert!(!c.value_fits("status", &json!("lost")));
    assert!(!c.value_fits("nope", &json!("x")));
}

#[test]
fn a_schema_can_be_shared_between_threads() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Schema>();
    shared::<SchemaError>();
}
