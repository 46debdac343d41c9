//! The web app at `/`: its files with their types and cache headers, the
//! page for browser navigations outside the API, and the API's JSON 404
//! everywhere else.

mod common;

use common::{Backend, TestApp};

/// The script the page loads (`/assets/index-<hash>.js`).
fn script_of(page: &str) -> String {
    let start = page.find("/assets/").expect("the page loads an asset");
    let rest = &page[start..];
    let end = rest.find('"').expect("a quoted asset path");
    rest[..end].to_owned()
}

async fn get(app: &TestApp, path: &str, accept: &str) -> reqwest::Response {
    app.http
        .get(format!("{}{path}", app.base))
        .header("accept", accept)
        .send()
        .await
        .expect("request")
}

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

#[actix_web::test]
async fn the_app_is_served_at_the_root_with_its_assets() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let page = get(&app, "/", BROWSER).await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    // The page runs only its own script, and cannot be framed.
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let etag = page.headers()["etag"].to_str().unwrap().to_owned();
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<div id=\"root\">"),
        "not the app's page: {html}"
    );

    let again = app
        .http
        .get(format!("{}/", app.base))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    let script = get(&app, &script_of(&html), "*/*").await;
    assert_eq!(script.status(), 200);
    assert!(script.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));
    assert_eq!(
        script.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
}

#[actix_web::test]
async fn browser_navigations_outside_the_api_get_the_app_and_the_api_keeps_its_404() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let deep = get(&app, "/app/cases/sample-case", BROWSER).await;
    assert_eq!(deep.status(), 200);
    assert!(deep.text().await.unwrap().contains("<div id=\"root\">"));

    // Not a navigation (a script, curl): the JSON 404.
    let fetched = get(&app, "/app/cases/sample-case", "application/json").await;
    assert_eq!(fetched.status(), 404);
    let body: serde_json::Value = fetched.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");

    // Under an API route, even a navigation keeps the API's JSON answer.
    for path in [
        "/cases/x/y/z",
        "/locks/1/nothing",
        "/nope.json/../cases/a/b/c",
    ] {
        let res = get(&app, path, BROWSER).await;
        assert_eq!(res.status(), 404, "{path}");
        assert!(res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"));
    }
    // A known API route answers as the API, whatever the Accept header says.
    let api = get(&app, "/healthz", BROWSER).await;
    assert_eq!(api.status(), 200);
    assert_eq!(api.headers()["content-type"], "application/json");
}

#[actix_web::test]
async fn the_demo_people_are_listed_only_in_demo_mode() {
    let plain = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    plain
        .get("/auth/demo")
        .send()
        .await
        .expect_error(404, "not_found");
    let demo = TestApp::start_with(Backend::Sqlite, |s| s.demo = true)
        .await
        .expect("sqlite");
    let people = demo.get("/auth/demo").send().await.expect(200);
    assert_eq!(people.body["users"][0]["email"], "alice@example.com");
    assert_eq!(people.body["users"].as_array().unwrap().len(), 3);
}
