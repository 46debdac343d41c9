//! A type whose name holds an acronym, on `examples/schemas/api.toml`
//! (`APIEndpoint` under `Service`), on both databases: `GET /schema`
//! publishes its body key, parent key and nest key, so no client derives
//! them from the name; bodies nest under `apiEndpoint` (or the snake_case
//! `api_endpoint`), never `aPIEndpoint`, and a move names `serviceId`.

mod common;

use std::path::PathBuf;

use baton::models::Role;
use common::{id, Backend, TestApp};
use serde_json::{json, Value};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/schemas/api.toml");

on_both_backends!(the_schema_publishes_the_keys_and_bodies_use_them);

async fn the_schema_publishes_the_keys_and_bodies_use_them(backend: Backend) {
    let Some(app) =
        TestApp::start_with(backend, |s| s.database.schema = Some(PathBuf::from(SCHEMA))).await
    else {
        return;
    };
    let ann = app.user("Ann").await;
    let case = app.case_only("catalogue", &[(&ann, Role::Manager)]).await;

    let schema = app.get("/schema").by(&ann).send().await.expect(200).body;
    let types = schema["types"].as_array().expect("types");
    let keys = |t: &Value| {
        (
            t["name"].clone(),
            t["bodyKey"].clone(),
            t["parentKey"].clone(),
            t["nestKey"].clone(),
            t["plural"].clone(),
        )
    };
    assert_eq!(
        types.iter().map(keys).collect::<Vec<_>>(),
        vec![
            (
                json!("Service"),
                json!("service"),
                json!("caseId"),
                json!("services"),
                json!("services")
            ),
            (
                json!("APIEndpoint"),
                json!("apiEndpoint"),
                json!("serviceId"),
                json!("apiEndpoints"),
                json!("api_endpoints")
            ),
        ]
    );

    let orders = id(&app
        .post(&format!("/cases/{}/services", case.slug))
        .by(&ann)
        .json(json!({ "service": { "name": "Orders" } }))
        .send()
        .await
        .expect(201)
        .body);
    let tides = id(&app
        .post(&format!("/cases/{}/services", case.slug))
        .by(&ann)
        .json(json!({ "service": { "name": "Tides" } }))
        .send()
        .await
        .expect(201)
        .body);
    let created = app
        .post(&format!("/services/{orders}/api_endpoints"))
        .by(&ann)
        .json(json!({ "apiEndpoint": { "path": "/v1/orders", "public": true } }))
        .send()
        .await
        .expect(201)
        .body;
    assert_eq!(created["serviceId"], orders, "{created}");
    assert_eq!(created["method"], "GET", "{created}");
    assert_eq!(created["rateLimit"], 600, "{created}");
    let endpoint = id(&created);

    // the key a client would derive by lower-casing the first letter is refused
    app.post(&format!("/services/{orders}/api_endpoints"))
        .by(&ann)
        .json(json!({ "aPIEndpoint": { "path": "/v1/x" } }))
        .send()
        .await
        .expect_error(422, "invalid");
    // the snake_case name is accepted, as for every type
    app.patch(&format!("/api_endpoints/{endpoint}"))
        .by(&ann)
        .json(json!({ "api_endpoint": { "method": "POST" } }))
        .send()
        .await
        .expect(200);
    // a move names the parent key, or its snake_case
    let moved = app
        .patch(&format!("/api_endpoints/{endpoint}"))
        .by(&ann)
        .json(json!({ "apiEndpoint": { "serviceId": tides } }))
        .send()
        .await
        .expect(200)
        .body;
    assert_eq!(moved["serviceId"], tides, "{moved}");
    assert_eq!(moved["method"], "POST", "{moved}");
    app.patch(&format!("/api_endpoints/{endpoint}"))
        .by(&ann)
        .json(json!({ "apiEndpoint": { "service_id": orders } }))
        .send()
        .await
        .expect(200);

    // GET /cases/:slug nests them under the nest key
    let detail = app
        .get(&format!("/cases/{}", case.slug))
        .by(&ann)
        .send()
        .await
        .expect(200)
        .body;
    let services = detail["services"].as_array().expect("services");
    assert_eq!(services[0]["apiEndpoints"][0]["id"], endpoint, "{detail}");
    assert_eq!(services[1]["apiEndpoints"], json!([]), "{detail}");
}
