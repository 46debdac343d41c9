//! Trust, second pass: every way access changes has the same effect (a
//! token running out, a site admin made an ordinary user, the command line
//! on a running server), a host's cases are the host's, no request waits on
//! a row before its caller's role is known, a user's channels are bounded,
//! and fencing tokens keep growing across a power cut. Each test is one
//! attack of the review, on both databases where both apply.

mod common;

use std::time::Duration;

use baton::config::Settings;
use baton::models::{ApiKey, Role};
use common::listening::{assert_kicked, channel, Channel};
use common::{
    described, id, lock_body, run_baton, short_lifetimes, text, Backend, ServerProcess, TestApp,
    TestUser,
};
use serde_json::{json, Value};

on_both_backends!(|backend| TestApp::start_with(backend, |s: &mut Settings| s.token_ttl = Duration::from_secs(2)) =>
    a_channel_is_signed_out_when_its_token_runs_out,
);
on_both_backends!(TestApp::start =>
    a_demoted_site_admin_loses_locks_and_channels_outside_their_cases,
    a_command_line_removal_or_new_password_reaches_the_running_server,
    a_host_cannot_provision_into_a_case_a_person_made,
);
on_both_backends!(|backend| TestApp::start_with(backend, short_lifetimes) =>
    a_tab_rejoining_renews_no_lock_its_user_may_no_longer_hold,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s: &mut Settings| s.user_cases = false) =>
    without_user_cases_only_site_admins_create_cases,
);
on_both_backends!(|backend| TestApp::start_with(backend, |s: &mut Settings| s.channels_per_user = 2) =>
    a_users_channels_past_the_cap_are_refused_with_429,
);

fn is_destroy_of_lock(frame: &Value, lock_id: i64, reason: &str) -> bool {
    frame["type"] == "destroy"
        && frame["watchable"]["type"] == "Lock"
        && frame["watchable"]["id"] == lock_id
        && frame["watchable"]["reason"] == reason
}

fn is_update_of(frame: &Value, type_name: &str, id: i64) -> bool {
    frame["type"] == "update"
        && frame["watchable"]["type"] == type_name
        && frame["watchable"]["id"] == id
}

async fn lock_status(app: &TestApp, by: &TestUser, lock_id: i64) -> u16 {
    app.get(&format!("/locks/{lock_id}"))
        .by(by)
        .send()
        .await
        .status
}

// ---- every way access changes ----

/// A host mints short tokens to end access: the channel opened with one is
/// told `signed_out` and closed (1008) when it runs out, as when a token is
/// revoked — it neither answers pings nor hears the case any longer.
async fn a_channel_is_signed_out_when_its_token_runs_out(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let fixture = app.case("short-lived", &[(&bob, Role::Editor)]).await;
    let (mut tab, _) = channel(&app, &fixture.slug, &bob).await;
    assert_kicked(&mut tab, "signed_out").await;
}

/// Root, a site admin, holds locks in a case she is not a member of, one
/// she only reads and one she edits, with a channel on each. Made an
/// ordinary user, she loses at once what only the rank allowed: the first
/// two locks (`kicked`) and the channel where she is no member
/// (`access_removed`); the lock and channels where she is a member stay.
async fn a_demoted_site_admin_loses_locks_and_channels_outside_their_cases(app: TestApp) {
    let ada = app.admin("Ada").await;
    let root = app.admin("Root").await.tab("root-tab");
    let bob = app.user("Bob").await.tab("bob-tab");
    let outside = app.case("outside", &[(&bob, Role::Editor)]).await;
    let reading = app
        .case("reading", &[(&bob, Role::Editor), (&root, Role::Reader)])
        .await;
    let editing = app
        .case("editing", &[(&bob, Role::Editor), (&root, Role::Editor)])
        .await;
    let lock_outside = id(&app.lock(&root, "Card", outside.card_id).await);
    let lock_reading = id(&app.lock(&root, "Card", reading.card_id).await);
    let lock_editing = id(&app.lock(&root, "Card", editing.card_id).await);
    let (mut hers_outside, _) = channel(&app, &outside.slug, &root).await;
    let (mut hers_reading, _) = channel(&app, &reading.slug, &root).await;
    let (mut hers_editing, _) = channel(&app, &editing.slug, &root).await;
    let (mut his, _) = channel(&app, &outside.slug, &bob).await;

    app.patch(&format!("/users/{}", root.id))
        .by(&ada)
        .json(json!({ "user": { "admin": false } }))
        .send()
        .await
        .expect(200);

    his.next_where("her lock outside her cases ended", |f| {
        is_destroy_of_lock(f, lock_outside, "kicked")
    })
    .await;
    assert_kicked(&mut hers_outside, "access_removed").await;
    assert_eq!(
        lock_status(&app, &bob, lock_reading).await,
        404,
        "a reader holds no lock"
    );
    assert_eq!(
        lock_status(&app, &bob, lock_editing).await,
        200,
        "an editor keeps hers"
    );
    // Her channels where she is a member still hear the case.
    for (tab, fixture) in [(&mut hers_reading, &reading), (&mut hers_editing, &editing)] {
        app.patch(&format!("/edgenotes/{}", fixture.edgenote_id))
            .by(&bob)
            .json(json!({ "edgenote": { "caption": "after the demotion" } }))
            .send()
            .await
            .expect(200);
        tab.next_where("an edit after the demotion", |f| {
            is_update_of(f, "Edgenote", fixture.edgenote_id)
        })
        .await;
    }
    // The record outside is free for Bob at once.
    app.lock(&bob, "Card", outside.card_id).await;
}

/// Bob's tab holds a lock; his role is then lowered to reader by a path
/// that ends nothing (a row changed in the database, as a previous release
/// or a race could leave it). His tab closes and comes back within the
/// grace, again and again: a rejoin renews nothing he may no longer hold,
/// so the lock runs out.
async fn a_tab_rejoining_renews_no_lock_its_user_may_no_longer_hold(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let mia = app.user("Mia").await;
    let fixture = app
        .case("demoted", &[(&bob, Role::Editor), (&mia, Role::Manager)])
        .await;
    let lock = id(&app.lock(&bob, "Card", fixture.card_id).await);
    let (case_id, user_id) = (fixture.case_id, bob.id);
    app.state
        .db
        .write(None, move |tx| {
            use baton::db::schema::memberships::dsl as m;
            use diesel::prelude::*;
            diesel::update(
                m::memberships
                    .filter(m::case_id.eq(case_id))
                    .filter(m::user_id.eq(user_id)),
            )
            .set(m::role.eq("reader"))
            .execute(tx.conn)?;
            Ok::<_, baton::error::AppError>(())
        })
        .await
        .expect("lower the role in place");
    // The lease is 1.2 s and the grace 500 ms: 4 s of rejoining every 300 ms
    // would keep a renewed lock alive throughout.
    let until = tokio::time::Instant::now() + Duration::from_secs(4);
    while tokio::time::Instant::now() < until {
        let (tab, _) = channel(&app, &fixture.slug, &bob).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        tab.close();
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert_eq!(
        lock_status(&app, &mia, lock).await,
        404,
        "the lock of a reader was renewed by his rejoining tab"
    );
}

/// `baton user remove` and `baton user passwd`, run beside the server (on
/// SQLite another process writing the same file), have the routes' effect
/// on open tabs: the removed user's lock ends for everyone watching and
/// their tab is signed out; a new password signs out the user's tabs.
async fn a_command_line_removal_or_new_password_reaches_the_running_server(app: TestApp) {
    let bob = app.user("Bob").await.tab("bob-tab");
    let dan = app.user("Dan").await.tab("dan-tab");
    let carol = app.user("Carol").await.tab("carol-tab");
    let fixture = app
        .case(
            "commands",
            &[
                (&bob, Role::Editor),
                (&dan, Role::Editor),
                (&carol, Role::Editor),
            ],
        )
        .await;
    let lock = id(&app.lock(&bob, "Card", fixture.card_id).await);
    let (mut his, _) = channel(&app, &fixture.slug, &bob).await;
    let (mut dans, _) = channel(&app, &fixture.slug, &dan).await;
    let (mut hers, _) = channel(&app, &fixture.slug, &carol).await;

    let output = baton_command(&app, &["user", "remove", "--email", &bob.email]).await;
    assert!(output.status.success(), "{}", described(&output));
    hers.next_where("Bob's lock ended", |f| {
        is_destroy_of_lock(f, lock, "kicked")
    })
    .await;
    assert_kicked(&mut his, "signed_out").await;

    let output = baton_command(
        &app,
        &[
            "user",
            "passwd",
            "--email",
            &dan.email,
            "--password",
            "a new one 123",
        ],
    )
    .await;
    assert!(output.status.success(), "{}", described(&output));
    assert_kicked(&mut dans, "signed_out").await;
}

async fn baton_command(app: &TestApp, args: &[&str]) -> std::process::Output {
    let url = app.db_url.clone();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_baton(&url, &args)
    })
    .await
    .expect("the command's thread")
}

// ---- a host's cases are the host's ----

async fn host_key(app: &TestApp) -> String {
    let (key, hash) = baton::auth::api_keys::generate();
    app.state
        .db
        .write(None, move |tx| {
            Ok::<_, baton::error::AppError>(ApiKey::create(tx.conn, "host", &hash, tx.now)?)
        })
        .await
        .expect("add a key")
        .expect("a new name");
    key
}

/// Bob, any signed-in user, makes the case `acme` before the team's backend
/// first names it. The backend's call that names it is refused whole (409
/// naming the slug): nobody is provisioned into Bob's case, not even the
/// other case of the same call is made, and a removal there is refused too.
async fn a_host_cannot_provision_into_a_case_a_person_made(app: TestApp) {
    let bob = app.user("Bob").await;
    let key = host_key(&app).await;
    app.post("/cases")
        .by(&bob)
        .json(json!({ "case": { "slug": "acme", "title": "Squatted" } }))
        .send()
        .await
        .expect(201);
    let provision = |cases: Value| {
        app.post("/auth/tokens")
            .header("Authorization", format!("Bearer {key}"))
            .json(json!({ "user": { "externalId": "una-1", "name": "Una" }, "cases": cases }))
            .send()
    };
    let refused = provision(json!([
        { "slug": "acme-billing", "role": "editor" },
        { "slug": "acme", "role": "editor" }
    ]))
    .await
    .expect_error(409, "conflict");
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("'acme'"), "names the slug: {message}");
    let (una, billing) = app
        .state
        .db
        .read(|conn| {
            Ok::<_, baton::error::AppError>((
                baton::models::User::find_by_external_id(conn, "una-1")?,
                baton::models::Case::find_by_slug(conn, "acme-billing")?,
            ))
        })
        .await
        .expect("read");
    assert!(
        una.is_none() && billing.is_none(),
        "the refused call changed something"
    );
    provision(json!([{ "slug": "acme", "role": null }]))
        .await
        .expect_error(409, "conflict");
    // The host's own cases are its to provision.
    let minted = provision(json!([{ "slug": "acme-billing", "role": "editor" }]))
        .await
        .expect(201);
    let una = TestUser {
        token: minted.body["token"].as_str().expect("a token").to_owned(),
        id: minted.body["user"]["id"].as_i64().expect("a user id"),
        email: String::new(),
        session: None,
    };
    app.get("/cases/acme").by(&una).send().await.expect(403);
}

/// `BATON_USER_CASES=false`: a signed-in user may not make a case (so none
/// can be made ahead of a host); a site admin still may.
async fn without_user_cases_only_site_admins_create_cases(app: TestApp) {
    let bob = app.user("Bob").await;
    let root = app.admin("Root").await;
    let new_case = |slug: &str| json!({ "case": { "slug": slug, "title": "A case" } });
    app.post("/cases")
        .by(&bob)
        .json(new_case("bobs"))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/cases")
        .by(&root)
        .json(new_case("roots"))
        .send()
        .await
        .expect(201);
}

// ---- bounded for signed-in users ----

/// With `BATON_CHANNELS_PER_USER=2`, Bob's third channel is refused with
/// 429 and `Retry-After`; Carol's is not; once one of Bob's closes he may
/// open another.
async fn a_users_channels_past_the_cap_are_refused_with_429(app: TestApp) {
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await.tab("carol-tab");
    let fixture = app
        .case("capped", &[(&bob, Role::Reader), (&carol, Role::Reader)])
        .await;
    let (first, _) = channel(&app, &fixture.slug, &bob.tab("one")).await;
    let (_second, _) = channel(&app, &fixture.slug, &bob.tab("two")).await;
    let third = app.edits_url(&fixture.slug, &bob.tab("three"));
    match tokio_tungstenite::connect_async(&third).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 429);
            assert!(
                response.headers().contains_key("retry-after"),
                "no Retry-After: {:?}",
                response.headers()
            );
        }
        Ok(_) => panic!("a third channel was opened"),
        Err(other) => panic!("unexpected error: {other}"),
    }
    let _hers: Channel = channel(&app, &fixture.slug, &carol).await.0;
    first.close();
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio_tungstenite::connect_async(&third).await {
            Ok(_) => break,
            Err(_) if tokio::time::Instant::now() < until => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("no room once a channel closed: {e}"),
        }
    }
}

// ---- no wait before the role (PostgreSQL: rows are locked there) ----

/// Holds a row lock of `table` row `id` in another connection until the
/// returned sender is dropped or used.
fn hold_row(url: &str, table: &'static str, id: i64) -> std::sync::mpsc::Sender<()> {
    use diesel::connection::SimpleConnection;
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let url = url.to_owned();
    std::thread::spawn(move || {
        let mut conn = baton::db::connect(&url).expect("connect");
        conn.batch_execute(&format!(
            "BEGIN; SELECT 1 FROM {table} WHERE id = {id} FOR UPDATE;"
        ))
        .expect("lock the row");
        held_tx.send(()).expect("tell");
        let _ = release_rx.recv();
        let _ = conn.batch_execute("ROLLBACK;");
    });
    held_rx.recv().expect("the row is held");
    release_tx
}

/// Eve is an editor of her own case only. While another transaction holds
/// the row of a card of Mia's case, Eve's acquire, lock set and save that
/// name it are answered (403, 422, 403) without waiting on it: with the
/// database timeout at 2 s, a wait would be a 503.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_non_member_waits_on_no_row_of_the_case() {
    let app = TestApp::start_with(Backend::Postgres, |s: &mut Settings| {
        s.database.db_timeout = Duration::from_secs(2);
    })
    .await
    .expect("PostgreSQL is configured");
    let mia = app.user("Mia").await;
    let eve = app.user("Eve").await.tab("eve-tab");
    let vault = app.case("vault", &[(&mia, Role::Manager)]).await;
    let hers = app.case("eves", &[(&eve, Role::Editor)]).await;
    let held = hold_row(&app.db_url, "records", vault.card_id);

    app.post("/locks")
        .by(&eve)
        .json(lock_body("Card", vault.card_id))
        .send()
        .await
        .expect_error(403, "forbidden");
    app.post("/locks/batch")
        .by(&eve)
        .json(json!({ "locks": [
            { "lockableType": "Card", "lockableParam": hers.card_id.to_string() },
            { "lockableType": "Card", "lockableParam": vault.card_id.to_string() }
        ] }))
        .send()
        .await
        .expect_error(422, "invalid");
    app.patch(&format!("/cards/{}", vault.card_id))
        .by(&eve)
        .json(json!({ "card": { "content": "mine now" } }))
        .send()
        .await
        .expect_error(403, "forbidden");
    drop(held);
}

// ---- fencing tokens survive a power cut (SQLite) ----

/// A power cut with `synchronous = NORMAL` can take back the last commits;
/// simulated by serving a backup taken earlier in place of the live file.
/// Tokens were granted after the backup; every token the restored file's
/// server grants is greater than every one seen before.
#[actix_web::test]
async fn tokens_granted_after_a_power_cut_are_greater_than_every_token_seen() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let bob = app.user("Bob").await.tab("bob-tab");
    let fixture = app.case("fenced", &[(&bob, Role::Editor)]).await;
    let mut seen = Vec::new();
    let grant = async |app: &TestApp, base: &str| {
        let lock = app.lock_at(base, &bob, "Card", fixture.card_id).await;
        let token: i64 = lock["token"]
            .as_str()
            .expect("a token")
            .parse()
            .expect("decimal");
        app.req_at(base, reqwest::Method::DELETE, &format!("/locks/{token}"))
            .by(&bob)
            .send()
            .await
            .expect(204);
        token
    };
    for _ in 0..3 {
        seen.push(grant(&app, &app.base.clone()).await);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join("before-the-cut.sqlite3");
    let output = baton_command(&app, &["backup", copy.to_str().expect("UTF-8 path")]).await;
    assert!(output.status.success(), "{}", described(&output));
    for _ in 0..3 {
        seen.push(grant(&app, &app.base.clone()).await);
    }
    let highest = *seen.iter().max().expect("tokens");

    let restored =
        ServerProcess::spawn(copy.to_str().expect("UTF-8 path"), "after-the-cut", &[]).await;
    let after = grant(&app, &restored.base).await;
    assert!(
        after > highest,
        "token {after} after the cut, {highest} granted before it ({seen:?}); {}",
        text(&output.stdout)
    );
}
