//! The OpenAPI document: its snapshot (every change to the wire shows in
//! review), that it lists exactly the routes the app serves, and that it is
//! served at `/openapi.json` and rendered at `/docs`.

mod common;

use std::collections::BTreeSet;

use common::TestApp;
use reqwest::Method;
use serde_json::Value;

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
