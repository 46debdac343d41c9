//! The OpenAPI document: its snapshot (every change to the wire shows in
//! review), that it lists exactly the routes the app serves, and that it is
//! served at `/openapi.json` and rendered at `/docs`.

mod common;

use std::collections::BTreeSet;

use common::TestApp;
use reqwest::Method;
use serde_json::{json, Value};

fn document() -> Value {
    serde_json::to_value(baton::http::openapi::document()).expect("document as JSON")
}

/// `(path, method)` of every operation in the document.
fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    let paths = doc["paths"].as_object().expect("paths");
    paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .expect("path item")
                .keys()
                .filter(|k| ["get", "post", "put", "patch", "delete"].contains(&k.as_str()))
                .map(move |method| (path.clone(), method.clone()))
        })
        .collect()
}

#[test]
fn the_document_matches_its_snapshot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let now = serde_json::to_string_pretty(&document()).expect("pretty") + "\n";
    if std::env::var_os("BATON_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &now).expect("write openapi.json");
    }
    let snapshot = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        snapshot == now,
        "openapi.json is not what the code describes; run \
         `BATON_UPDATE_OPENAPI=1 cargo test --test openapi` and review the diff"
    );
}

#[test]
fn the_document_is_openapi_3_1_with_a_bearer_scheme() {
    let doc = document();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for schema in [
        "Lock",
        "User",
        "Card",
        "ErrorBody",
        "ServerFrame",
        "LockEvent",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} is missing"
        );
    }
    let login = &doc["paths"]["/auth/login"]["post"];
    assert_eq!(
        login["security"],
        serde_json::json!([{}]),
        "login is public"
    );
}

#[test]
fn every_route_is_documented_and_every_documented_route_exists() {
    let doc = document();
    let in_doc = documented(&doc);
    let served: BTreeSet<(String, String)> = baton::http::served_routes()
        .into_iter()
        .map(|(path, method)| (path, method.to_string()))
        .collect();
    let undocumented: Vec<_> = served.difference(&in_doc).collect();
    let unserved: Vec<_> = in_doc.difference(&served).collect();
    assert!(
        undocumented.is_empty(),
        "served but not in the document: {undocumented:?}"
    );
    assert!(
        unserved.is_empty(),
        "documented but not served: {unserved:?}"
    );
}

/// The document's paths with their parameters filled in.
fn concrete(path: &str) -> String {
    path.replace("{id}", "1")
        .replace("{slug}", "no-such-case")
        .replace("{sessionId}", "no-such-tab")
}

async fn served_as_documented(app: TestApp) {
    for (path, method) in documented(&document()) {
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let res = app.req(method.clone(), &concrete(&path)).send().await;
        let message = res.body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            res.status != 405 && !message.starts_with("There is no route"),
            "{method} {path} is documented but answered {}: {message}",
            res.status
        );
    }
    let res = app.req(Method::PUT, "/cases").send().await;
    assert_eq!(res.status, 405);
    assert_eq!(res.headers["allow"], "GET, POST");
    assert_eq!(res.body["error"]["code"], "method_not_allowed");
}

async fn document_and_docs_are_served(app: TestApp) {
    let served = app.get("/openapi.json").send().await.expect(200);
    assert_eq!(served.body, document());
    let docs = app
        .http
        .get(format!("{}/docs/", app.base))
        .send()
        .await
        .expect("GET /docs/");
    assert_eq!(docs.status(), 200);
    let html = docs.text().await.unwrap();
    assert!(
        html.contains("swagger-ui"),
        "not the Swagger UI page: {html}"
    );
    let script = app
        .http
        .get(format!("{}/docs/swagger-ui-bundle.js", app.base))
        .send()
        .await
        .expect("GET the UI bundle");
    assert_eq!(script.status(), 200, "the UI's assets are built in");
}

on_both_backends!(TestApp::start =>
    served_as_documented,
    document_and_docs_are_served,
);

#[test]
fn operation_ids_are_unique() {
    let doc = document();
    let mut seen = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                assert!(seen.insert(id.to_owned()), "operationId {id} is used twice");
            }
        }
    }
    assert_eq!(seen.len(), baton::http::served_routes().len());
}

#[test]
fn every_record_schema_has_a_literal_type_and_table() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let mut tagged = Vec::new();
    for (name, schema) in schemas {
        let Some(all_of) = schema["allOf"].as_array() else {
            continue;
        };
        if all_of[0]["$ref"] != "#/components/schemas/Identity" {
            continue;
        }
        let tags = &all_of[1]["properties"];
        assert_eq!(tags["type"]["enum"], serde_json::json!([name]), "{name}");
        assert_eq!(
            tags["table"]["enum"].as_array().map(Vec::len),
            Some(1),
            "{name}"
        );
        tagged.push(name.as_str());
    }
    for name in [
        "Card",
        "Case",
        "Edgenote",
        "Lock",
        "LockEvent",
        "Page",
        "User",
        "Waiter",
    ] {
        assert!(tagged.contains(&name), "{name} is not tagged");
    }
}

// ---- what the document says of U+0000 ----

/// The schemas a request can carry (its parameters' and its body's), with
/// where each is; components they refer to are read once each.
fn request_schemas(doc: &Value) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let name = parameter["name"].as_str().unwrap_or_default();
                found.push((
                    format!("{method} {path} parameter {name}"),
                    parameter["schema"].clone(),
                ));
            }
            if let Some(content) = operation["requestBody"]["content"].as_object() {
                for (media, body) in content {
                    found.push((
                        format!("{method} {path} body ({media})"),
                        body["schema"].clone(),
                    ));
                }
            }
        }
    }
    found
}

/// Where `schema` (at `at`) admits a string or an object key holding
/// U+0000, or an open object's other values without saying they may not:
/// one line each. A string needs a pattern that refuses a NUL (or, with a
/// pattern of its own, an `allOf` beside it with [`NO_NUL`]); an object
/// that is not closed needs `propertyNames` with [`NO_NUL`], and its other
/// keys' values a schema (`additionalProperties` or
/// `unevaluatedProperties`). `guarded`: a part of an `allOf` that has a
/// part with [`NO_NUL`], which refuses its strings a NUL.
fn admits_nul(
    doc: &Value,
    at: &str,
    schema: &Value,
    guarded: bool,
    seen: &mut BTreeSet<String>,
    wrong: &mut Vec<String>,
) {
    let Some(node) = schema.as_object() else {
        return;
    };
    let mut inner = |at: String, schema: &Value, guarded: bool| {
        admits_nul(doc, &at, schema, guarded, seen, wrong)
    };
    if let Some(target) = node.get("$ref").and_then(Value::as_str) {
        let name = target.rsplit('/').next().unwrap_or_default().to_owned();
        if seen.insert(name.clone()) {
            let component = &doc["components"]["schemas"][&name];
            admits_nul(doc, &format!("#{name}"), component, false, seen, wrong);
        }
        return;
    }
    let all_of = schema["allOf"].as_array().into_iter().flatten();
    let parts_guarded = guarded || all_of.clone().any(|part| part["pattern"] == NO_NUL);
    for (i, part) in all_of.enumerate() {
        inner(format!("{at}/allOf/{i}"), part, parts_guarded);
    }
    for key in ["anyOf", "oneOf"] {
        for (i, part) in schema[key].as_array().into_iter().flatten().enumerate() {
            inner(format!("{at}/{key}/{i}"), part, false);
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        inner(format!("{at}.{name}"), property, false);
    }
    for key in ["additionalProperties", "unevaluatedProperties", "items"] {
        if schema[key].is_object() {
            inner(format!("{at}/{key}"), &schema[key], false);
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let composed = ["allOf", "anyOf", "oneOf"]
        .iter()
        .any(|k| node.contains_key(*k));
    let fixed = node.contains_key("enum") || node.contains_key("const");
    let pattern = schema["pattern"].as_str();
    if types.is_empty() && !composed && !fixed && !guarded && pattern.is_none() {
        wrong.push(format!("{at}: a schema without a type admits any string"));
    }
    if types.contains(&"string") && !fixed && !guarded && pattern.is_none() {
        wrong.push(format!("{at}: a string without a pattern"));
    }
    if let Some(pattern) = pattern {
        let admits = matches(pattern, "a\u{0}b") || matches(pattern, "\u{0}");
        if admits && !parts_guarded {
            wrong.push(format!("{at}: pattern {pattern:?} admits a NUL"));
        }
    }
    let object = types.contains(&"object") || node.contains_key("properties");
    if object && schema["additionalProperties"] != Value::Bool(false) {
        if schema["propertyNames"]["pattern"] != NO_NUL {
            wrong.push(format!(
                "{at}: an open object without propertyNames {NO_NUL:?}"
            ));
        }
        let others = ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|k| schema[*k].is_object());
        if !others {
            wrong.push(format!(
                "{at}: an open object whose other values may be anything"
            ));
        }
    }
}

const NO_NUL: &str = r"^[^\u0000]*$";

/// Whether `value` matches the JSON Schema `pattern`, as a validator reads it.
fn matches(pattern: &str, value: &str) -> bool {
    jsonschema::validator_for(&json!({ "pattern": pattern }))
        .unwrap_or_else(|e| panic!("pattern {pattern:?}: {e}"))
        .is_valid(&json!(value))
}

/// A validator of requests to the schema `name`, with the document's
/// components to refer to.
fn validator_of(doc: &Value, name: &str) -> jsonschema::Validator {
    let root = json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every string a request can carry, in a parameter or a body, has a
/// pattern that refuses U+0000, and every open object says the same of
/// its keys and its other values: what baton refuses (422, 401 on sign-in)
/// is never what the document allows.
#[test]
fn no_string_a_request_carries_may_hold_a_nul_by_the_document() {
    let doc = document();
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for (at, schema) in request_schemas(&doc) {
        admits_nul(&doc, &at, &schema, false, &mut seen, &mut wrong);
    }
    assert!(seen.len() > 20, "only {} components reached", seen.len());
    assert!(
        wrong.is_empty(),
        "the document admits NULs:\n{}",
        wrong.join("\n")
    );
}

/// What the document now says, read by a JSON Schema validator: bodies
/// with a NUL in a field, a key or a key's value that baton ignores are
/// invalid; the same bodies without it (and "not blank" titles) are valid.
#[test]
fn bodies_with_a_nul_anywhere_are_invalid_by_the_document() {
    let doc = document();
    let cases: [(&str, Value, Value); 5] = [
        (
            "NewPageBody",
            json!({ "page": { "title": "Harbor ledger" } }),
            json!({ "page": { "title": "Harbor\u{0}ledger" } }),
        ),
        (
            "NewUserBody",
            json!({ "user": { "email": "dana@example.com", "name": "Dana", "password": "long enough" } }),
            json!({ "user": { "email": "dana@example.com", "name": "Dana", "password": "long enough", "note\u{0}": 1 } }),
        ),
        (
            "LockSetBody",
            json!({ "locks": [{ "lockableType": "Card", "lockableParam": "1" }], "note": { "a": ["b"] } }),
            json!({ "locks": [{ "lockableType": "Card", "lockableParam": "1" }], "note": { "a": ["b\u{0}"] } }),
        ),
        (
            "MembershipBody",
            json!({ "membership": { "email": "bob@example.com", "role": "editor" } }),
            json!({ "membership": { "email": "bob\u{0}@example.com", "role": "editor" } }),
        ),
        (
            "LoginBody",
            json!({ "email": "alice@example.com", "password": "demo", "remember": true }),
            json!({ "email": "alice@example.com", "password": "demo", "\u{0}": true }),
        ),
    ];
    let mut wrong = Vec::new();
    for (name, fine, with_nul) in cases {
        let validator = validator_of(&doc, name);
        if !validator.is_valid(&fine) {
            wrong.push(format!("{name}: {fine} is invalid"));
        }
        if validator.is_valid(&with_nul) {
            wrong.push(format!("{name}: {with_nul} is valid"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `POST /cases/{slug}/events` on a schema without an external type (the
/// built-in casebook): its request schema can be satisfied (it was an
/// empty `enum`, which no request could), and the document says that
/// every such request is refused (422).
#[test]
fn the_events_route_has_a_satisfiable_request_schema_without_external_types() {
    let doc = document();
    let event = json!({ "type": "update", "watchable": { "type": "Invoice", "param": "inv-1" } });
    assert!(
        validator_of(&doc, "HostEvent").is_valid(&event),
        "no event is valid by the document: {}",
        doc["components"]["schemas"]["RelayedRecord"]
    );
    let operation = &doc["paths"]["/cases/{slug}/events"]["post"];
    assert!(operation["responses"]["422"].is_object(), "{operation}");
    let said = doc["components"]["schemas"]["RelayedRecord"]["properties"]["type"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("declares none"), "{said}");
}
