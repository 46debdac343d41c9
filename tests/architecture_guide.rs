//! "Adding a lockable type" in `docs/architecture.md` is exact: its schema
//! block is all a team writes, and a server started on it serves what the
//! guide lists — routes, validation, locks and the guard, deep locks over
//! the children, nesting, `GET /schema` and the OpenAPI document. (This
//! binary serves the guide's schema: one schema per process.)

mod common;

use std::path::PathBuf;

use baton::models::Role;
use common::{lock_body, Backend, TestApp};
use serde_json::json;

fn guide_schema() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the guide");
    let start = text
        .find("## Adding a lockable type")
        .expect("a section 'Adding a lockable type'");
    let rest = &text[start..];
    let block = rest.find("```toml\n").expect("a toml block in the section") + 8;
    let end = rest[block..].find("```").expect("the block's end");
    rest[block..block + end].to_owned()
}

async fn start(backend: Backend) -> Option<(TestApp, tempfile::TempDir)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("helpdesk.toml");
    std::fs::write(&file, guide_schema()).expect("write the schema");
    let app = TestApp::start_with(backend, |s| s.database.schema = Some(file)).await?;
    Some((app, dir))
}

async fn the_guide_declares_a_type_that_works_end_to_end(
    (app, _dir): (TestApp, tempfile::TempDir),
) {
    let (ann, bob) = (app.user("Ann").await, app.user("Bob").await);
    let case = app
        .case_only("desk", &[(&ann, Role::Manager), (&bob, Role::Editor)])
        .await;

    let ticket = app
        .post(&format!("/cases/{}/tickets", case.slug))
        .by(&bob)
        .json(json!({"ticket": {"title": "Fix the boiler"}}))
        .send()
        .await
        .expect(201);
    assert_eq!(ticket.body["type"], "Ticket");
    assert_eq!(ticket.body["table"], "tickets");
    assert_eq!(ticket.body["status"], "open", "the default is filled in");
    assert_eq!(ticket.body["position"], 0);
    let ticket_id = ticket.body["id"].as_i64().expect("an id");

    let comment = app
        .post(&format!("/tickets/{ticket_id}/comments"))
        .by(&bob)
        .json(json!({"comment": {"body": "On it."}}))
        .send()
        .await
        .expect(201);
    assert_eq!(comment.body["ticketId"], ticket_id);
    let comment_id = comment.body["id"].as_i64().expect("an id");

    // Validation against the declared fields: every bad field at once.
    let bad = app
        .post(&format!("/cases/{}/tickets", case.slug))
        .by(&bob)
        .json(json!({"ticket": {"title": "", "status": "lost"}}))
        .send()
        .await
        .expect_error(422, "invalid");
    let fields = bad.body["error"]["fields"].as_array().expect("fields");
    assert_eq!(fields.len(), 2, "{}", bad.body);

    // A deep lock on the ticket covers its comment: Ann cannot save it.
    app.lock_expect(
        &bob,
        json!({"lock": {"lockableType": "Ticket", "lockableParam": ticket_id, "depth": "infinity"}}),
        201,
    )
    .await;
    app.patch(&format!("/comments/{comment_id}"))
        .by(&ann)
        .json(json!({"comment": {"body": "Me too"}}))
        .send()
        .await
        .expect_error(423, "locked");
    // An unknown comment is 404 to the lock routes too.
    app.lock_expect(&ann, lock_body("Comment", 999), 404).await;

    // Nesting in the case, the schema and the document.
    let shown = app
        .get(&format!("/cases/{}", case.slug))
        .by(&ann)
        .send()
        .await
        .expect(200);
    assert_eq!(shown.body["tickets"][0]["comments"][0]["id"], comment_id);
    let schema = app.get("/schema").by(&ann).send().await.expect(200);
    assert_eq!(schema.body["types"][1]["name"], "Comment");
    assert_eq!(schema.body["types"][1]["lock"]["takeover"], "manager");
    let doc = app.get("/openapi.json").send().await.expect(200);
    assert!(doc.body["paths"]["/tickets/{id}/comments"]["post"].is_object());
    assert!(doc.body["components"]["schemas"]["LockableType"]["enum"]
        .as_array()
        .expect("an enum")
        .contains(&json!("Comment")));
}

on_both_backends!(start =>
    the_guide_declares_a_type_that_works_end_to_end,
);
