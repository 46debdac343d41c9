//! Attacks on trust, on both databases (and across two instances on
//! PostgreSQL): another user's session id, access that ends, a non-member
//! probing a case, U+0000 in any string, oversized sign-ins and a host's
//! frame for a record baton stores. Each test is one attack; each asserts
//! what the contract's "Trust: a tab is its person's, and access is what it
//! says" says baton answers to it.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use baton::config::Settings;
use baton::models::{ApiKey, Role};
use common::line::wait_body;
use common::listening::{assert_kicked, channel, channel_at, Channel};
use common::{
    id, lock_body, short_lifetimes, Backend, Fixture, Resp, ServerProcess, TestApp, TestUser,
};
use reqwest::Method;
use serde_json::{json, Value};

on_both_backends!(start =>
    an_admin_kick_with_a_user_closes_only_that_users_tab,
    a_removed_member_loses_locks_line_and_channel_at_once,
    a_demoted_member_loses_locks_and_line_but_keeps_watching,
    a_signed_out_persons_channel_is_told_and_closed,
    a_non_member_probing_locks_waiters_and_records_learns_nothing,
);
on_both_backends!(host =>
    a_host_frame_for_a_record_baton_stores_is_422,
);
on_both_backends!(|backend| start_with(backend, |s| { short_lifetimes(s); s.lock_ttl = Duration::from_secs(20); }) =>
    her_session_id_on_his_channel_starts_no_grace_on_her_lock,
);
on_both_backends!(|backend| start_with(backend, short_lifetimes) =>
    her_session_id_on_his_channel_does_not_renew_her_lock,
    her_session_id_on_an_acquire_or_a_release_leaves_hers_hers_and_his_his,
);
on_both_backends!(|backend| start_with(backend, |s| { s.login_account_limit = 5; s.login_address_limit = 10; }) =>
    oversized_sign_ins_are_422_and_do_not_count,
);
on_both_backends!(start =>
    nul_in_any_string_is_refused_and_never_500,
    a_manager_adding_a_member_learns_nothing_of_them_beyond_the_email,
    schema_drop_audits_and_broadcasts_each_lock_it_ends,
);
on_both_backends!(her_session_id_on_a_save_is_tagged_with_his_user_and_refused_on_her_record,);

// ---- one schema for the whole module ----

/// The casebook (baton's default schema: pages, cards, edgenotes, stored by
/// baton) and invoices, which live in a host's database. One process serves
/// one schema, so every test here starts with this one.
fn schema_file() -> &'static PathBuf {
    static FILE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &FILE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("trust.toml");
            let schema = format!(
                "{}\n[types.Invoice]\nstore = \"external\"\n",
                include_str!("../examples/schemas/casebook.toml")
            );
            std::fs::write(&path, schema).expect("write the schema");
            (dir, path)
        })
        .1
}

async fn start(backend: Backend) -> Option<TestApp> {
    start_with(backend, |_| {}).await
}

async fn start_with(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> Option<TestApp> {
    TestApp::start_with(backend, |s| {
        s.database.schema = Some(schema_file().clone());
        tweak(s);
    })
    .await
}

// ---- the people ----

/// Around one case (`harbor-secrets`: a page "Harbor ledger" with a card
/// "Smuggling route", and an edgenote): Mia manages it, Alice, Bob and Carol
/// edit it, Rita reads it; Eve is in no case and Root is a site admin.
/// Alice's and Bob's tabs here share the session id `alice-tab`.
struct People {
    mia: TestUser,
    alice: TestUser,
    bob: TestUser,
    carol: TestUser,
    rita: TestUser,
    eve: TestUser,
    root: TestUser,
    case: Fixture,
    /// A second card on the page.
    other_card: i64,
}

const SLUG: &str = "harbor-secrets";
const PAGE_TITLE: &str = "Harbor ledger";
const CARD_TEXT: &str = "Smuggling route";
/// The session id Alice's tab made, and Bob copied from her lock's JSON.
const HER_TAB: &str = "alice-tab";

async fn people(app: &TestApp) -> People {
    let mia = app.user("Mia").await.tab("mia-tab");
    let alice = app.user("Alice").await.tab(HER_TAB);
    let bob = app.user("Bob").await.tab(HER_TAB);
    let carol = app.user("Carol").await.tab("carol-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let eve = app.user("Eve").await.tab("eve-tab");
    let root = app.admin("Root").await.tab("root-tab");
    let bare = app
        .case_only(
            SLUG,
            &[
                (&mia, Role::Manager),
                (&alice, Role::Editor),
                (&bob, Role::Editor),
                (&carol, Role::Editor),
                (&rita, Role::Reader),
            ],
        )
        .await;
    let page = app
        .post(&format!("/cases/{SLUG}/pages"))
        .by(&mia)
        .json(json!({ "page": { "title": PAGE_TITLE } }))
        .send()
        .await
        .expect(201);
    let page_id = id(&page.body);
    let card = app
        .post(&format!("/pages/{page_id}/cards"))
        .by(&mia)
        .json(json!({ "card": { "content": CARD_TEXT } }))
        .send()
        .await
        .expect(201);
    let other = app
        .post(&format!("/pages/{page_id}/cards"))
        .by(&mia)
        .json(json!({ "card": { "content": "Second card" } }))
        .send()
        .await
        .expect(201);
    let note = app
        .post(&format!("/cases/{SLUG}/edgenotes"))
        .by(&mia)
        .json(json!({ "edgenote": { "slug": "tide", "caption": "Tide tables", "content": "low at six" } }))
        .send()
        .await
        .expect(201);
    People {
        mia,
        alice,
        bob,
        carol,
        rita,
        eve,
        root,
        case: Fixture {
            page_id,
            card_id: id(&card.body),
            edgenote_id: id(&note.body),
            ..bare
        },
        other_card: id(&other.body),
    }
}

impl People {
    /// Bob's or anyone's membership id, as the manager sees it.
    async fn membership_of(&self, app: &TestApp, user: &TestUser) -> i64 {
        let members = app
            .get(&format!("/cases/{SLUG}/memberships"))
            .by(&self.mia)
            .send()
            .await
            .expect(200);
        members
            .body
            .as_array()
            .expect("a list of memberships")
            .iter()
            .find(|m| m["user"]["id"] == user.id)
            .map(id)
            .unwrap_or_else(|| panic!("no membership of user {} in {}", user.id, members.body))
    }
}

fn is_destroy_of(frame: &Value, type_name: &str, id: i64) -> bool {
    frame["type"] == "destroy"
        && frame["watchable"]["type"] == type_name
        && frame["watchable"]["id"] == id
}

fn is_presence_of(frame: &Value, names: &[&str]) -> bool {
    if frame["type"] != "presence" {
        return false;
    }
    let mut online: Vec<&str> = frame["onlineUsers"]
        .as_array()
        .map(|users| {
            users
                .iter()
                .filter_map(|u| u["user"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    online.sort_unstable();
    let mut names = names.to_vec();
    names.sort_unstable();
    online == names
}

async fn lock_json(app: &TestApp, by: &TestUser, lock_id: i64) -> Resp {
    app.get(&format!("/locks/{lock_id}")).by(by).send().await
}

/// The waiters of a record's line, as a member sees them.
async fn waiters_of(app: &TestApp, by: &TestUser, lockable_type: &str, param: i64) -> Vec<i64> {
    let status = app
        .get(&format!(
            "/locks/status?lockableType={lockable_type}&lockableParam={param}"
        ))
        .by(by)
        .send()
        .await
        .expect(200);
    status.body["waiters"]
        .as_array()
        .unwrap_or_else(|| panic!("no waiters in {}", status.body))
        .iter()
        .map(id)
        .collect()
}

// ---- 1. another user's session id ----

/// Bob copies the session id shown on Alice's lock, opens the edits channel
/// with it and closes it. Alice has no channel: only her lease (20 s here)
/// ends her lock. His close must start no grace on her lock (500 ms here),
/// and his pongs while open must not renew it: her lock is untouched.
async fn her_session_id_on_his_channel_starts_no_grace_on_her_lock(app: TestApp) {
    let p = people(&app).await;
    let (mut watcher, _) = channel(&app, SLUG, &p.rita).await;
    let lock = app.lock(&p.alice, "Card", p.case.card_id).await;
    assert_eq!(
        lock["sessionId"], HER_TAB,
        "every lock shows its session id"
    );

    let (his, _) = channel(&app, SLUG, &p.bob).await;
    watcher
        .next_where("Bob online", |f| is_presence_of(f, &["Rita", "Bob"]))
        .await;
    his.close();
    watcher
        .next_where("Bob offline", |f| is_presence_of(f, &["Rita"]))
        .await;
    // Past the grace, several reaper rounds over: a grace his close started
    // on her lock would have ended it by now.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let now = lock_json(&app, &p.alice, id(&lock)).await;
    assert_eq!(
        now.status, 200,
        "Bob's closed channel ended Alice's lock: {}",
        now.body
    );
    assert_eq!(
        now.body["expiresAt"], lock["expiresAt"],
        "Bob's channel (its pongs or its close) changed the lease of Alice's lock"
    );
    assert_eq!(now.body["user"]["id"], p.alice.id);
}

/// Bob keeps a channel open with Alice's session id. Alice has no channel,
/// so her lock must expire at the end of its lease (1.2 s); his pongs must
/// not keep it alive.
async fn her_session_id_on_his_channel_does_not_renew_her_lock(app: TestApp) {
    let p = people(&app).await;
    let (mut watcher, _) = channel(&app, SLUG, &p.rita).await;
    let (_his, _) = channel(&app, SLUG, &p.bob).await;
    let lock = app.lock(&p.alice, "Card", p.case.card_id).await;
    let gone = watcher
        .next_where("the end of Alice's lock (its lease is 1.2 s)", |f| {
            is_destroy_of(f, "Lock", id(&lock))
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "expired", "{gone}");
}

/// Bob saves with Alice's session id: the frame names Bob's user beside the
/// session id (so Alice's tab does not drop it as its own echo), and a save
/// of the record Alice holds is 423 even with her lock's token.
async fn her_session_id_on_a_save_is_tagged_with_his_user_and_refused_on_her_record(
    backend: Backend,
) {
    let Some(app) = start(backend).await else {
        return;
    };
    let p = people(&app).await;
    let (mut watcher, _) = channel(&app, SLUG, &p.rita).await;

    app.patch(&format!("/cards/{}", p.other_card))
        .by(&p.bob)
        .json(json!({ "card": { "content": "from Bob" } }))
        .send()
        .await
        .expect(200);
    let update = watcher
        .next_where("the card's update", |f| {
            f["type"] == "update" && f["watchable"]["id"] == p.other_card
        })
        .await;
    assert_eq!(update["editorSessionId"], HER_TAB, "{update}");
    assert_eq!(
        update["editorUserId"], p.bob.id,
        "the frame must name Bob, or Alice's tab drops his save as its own echo: {update}"
    );

    // Alice's own saves name her.
    app.patch(&format!("/cards/{}", p.other_card))
        .by(&p.alice)
        .json(json!({ "card": { "content": "from Alice" } }))
        .send()
        .await
        .expect(200);
    let update = watcher
        .next_where("Alice's update", |f| {
            f["type"] == "update" && f["watchable"]["content"] == "from Alice"
        })
        .await;
    assert_eq!(update["editorUserId"], p.alice.id, "{update}");

    // The record Alice holds: Bob's save with her session id, and with her
    // lock's token too (both are in her lock's JSON), is 423.
    let hers = app.lock(&p.alice, "Card", p.case.card_id).await;
    let token = hers["token"].as_str().expect("a token").to_owned();
    let refused = app
        .patch(&format!("/cards/{}", p.case.card_id))
        .by(&p.bob)
        .json(json!({ "card": { "content": "Bob over Alice" } }))
        .send()
        .await;
    assert_eq!(
        refused.status, 423,
        "Bob's save of Alice's record with her session id: {}",
        refused.body
    );
    let refused = app
        .patch(&format!("/cards/{}", p.case.card_id))
        .by(&p.bob)
        .header("Lock-Token", &token)
        .json(json!({ "card": { "content": "Bob over Alice" } }))
        .send()
        .await;
    assert_eq!(
        refused.status, 423,
        "Bob's save of Alice's record with her session id and token: {}",
        refused.body
    );
    let card = app
        .get(&format!("/cards/{}", p.case.card_id))
        .by(&p.alice)
        .send()
        .await
        .expect(200);
    assert_eq!(card.body["content"], CARD_TEXT);
}

/// Bob asks for the record Alice holds with her session id: 409 with her
/// lock, which stays as it was; asking to wait puts Bob in line (202). A
/// lock Bob takes with her session id is his tab's: Alice's open channel
/// does not keep it alive past its lease (1.2 s). `DELETE
/// /locks?session=mine` by Bob releases his own lock of that session id and
/// nothing of Alice's: not her lock, not her place in line.
async fn her_session_id_on_an_acquire_or_a_release_leaves_hers_hers_and_his_his(app: TestApp) {
    let p = people(&app).await;
    let (mut watcher, _) = channel(&app, SLUG, &p.rita).await;
    // Carol's and Alice's own tabs keep their locks alive.
    let (_carols_tab, _) = channel(&app, SLUG, &p.carol).await;
    let (_her_tab, _) = channel(&app, SLUG, &p.alice).await;
    let hers = app.lock(&p.alice, "Card", p.case.card_id).await;

    let asked = app
        .post("/locks")
        .by(&p.bob)
        .json(lock_body("Card", p.case.card_id))
        .send()
        .await;
    assert_eq!(
        asked.status, 409,
        "Bob's acquire with Alice's session id: {}",
        asked.body
    );
    assert_eq!(asked.body["error"]["code"], "lock_held");
    assert_eq!(asked.body["error"]["lock"]["id"], hers["id"]);
    let waited = app
        .post("/locks")
        .by(&p.bob)
        .json(wait_body("Card", p.case.card_id))
        .send()
        .await;
    assert_eq!(
        waited.status, 202,
        "Bob's wait with Alice's session id: {}",
        waited.body
    );
    assert_eq!(waited.body["type"], "Waiter");
    assert_eq!(waited.body["user"]["id"], p.bob.id);
    let now = lock_json(&app, &p.alice, id(&hers)).await.expect(200);
    assert_eq!(now.body["user"]["id"], p.alice.id);
    assert_eq!(now.body["token"], hers["token"]);
    assert_eq!(
        now.body["lastActivityAt"], hers["lastActivityAt"],
        "Bob's requests renewed Alice's lock"
    );

    // His lock, with her session id: only his own tab could renew it, and
    // he has none open.
    let his = app.lock(&p.bob, "Card", p.other_card).await;
    let gone = watcher
        .next_where(
            "the end of Bob's lock (its lease is 1.2 s and he has no channel)",
            |f| is_destroy_of(f, "Lock", id(&his)),
        )
        .await;
    assert_eq!(gone["watchable"]["reason"], "expired", "{gone}");

    // `?session=mine`: his lock goes, her lock and her place in line stay.
    let carols = app.lock(&p.carol, "Edgenote", p.case.edgenote_id).await;
    let her_place = app
        .lock_expect(&p.alice, wait_body("Edgenote", p.case.edgenote_id), 202)
        .await
        .body;
    let his = app.lock(&p.bob, "Card", p.other_card).await;
    app.delete("/locks?session=mine")
        .by(&p.bob)
        .send()
        .await
        .expect(204);
    app.assert_lock_gone(&p.bob, id(&his)).await;
    let now = lock_json(&app, &p.alice, id(&hers)).await;
    assert_eq!(
        now.status, 200,
        "Bob's ?session=mine released Alice's lock: {}",
        now.body
    );
    assert_eq!(now.body["lastActivityAt"], hers["lastActivityAt"]);
    assert_eq!(
        waiters_of(&app, &p.carol, "Edgenote", p.case.edgenote_id).await,
        vec![id(&her_place)],
        "Bob's ?session=mine took Alice out of the line"
    );
    lock_json(&app, &p.carol, id(&carols)).await.expect(200);
}

/// Alice's and Bob's tabs share a session id; the admin kicks Bob's with
/// `?user=`: Bob's tab is told and closed, Alice's stays open with her lock.
async fn an_admin_kick_with_a_user_closes_only_that_users_tab(app: TestApp) {
    let p = people(&app).await;
    let (mut her_tab, _) = channel(&app, SLUG, &p.alice).await;
    let (mut his_tab, _) = channel(&app, SLUG, &p.bob).await;
    let hers = app.lock(&p.alice, "Card", p.case.card_id).await;

    app.delete(&format!("/admin/sessions/{HER_TAB}?user={}", p.bob.id))
        .by(&p.root)
        .send()
        .await
        .expect(204);
    let (heard, code) = his_tab.closed_by_server("Bob's kicked tab").await;
    assert!(
        heard.iter().any(|f| f["type"] == "kicked"),
        "Bob's tab is told; heard {heard:?}"
    );
    assert_eq!(code, Some(1008), "heard {heard:?}");

    // Alice's tab still hears the case, and was told nothing of a kick.
    app.patch(&format!("/cards/{}", p.other_card))
        .by(&p.carol)
        .json(json!({ "card": { "content": "after the kick" } }))
        .send()
        .await
        .expect(200);
    let heard = her_tab
        .frames_until("Carol's update on Alice's tab", |f| {
            f["type"] == "update" && f["watchable"]["content"] == "after the kick"
        })
        .await;
    assert!(
        !heard
            .iter()
            .any(|f| f["type"] == "kicked" || is_destroy_of(f, "Lock", id(&hers))),
        "Alice's tab was kicked with Bob's: {heard:?}"
    );
    let now = lock_json(&app, &p.alice, id(&hers)).await;
    assert_eq!(
        now.status, 200,
        "Alice's lock after Bob's kick: {}",
        now.body
    );
}

// ---- 2. access that ends ----

/// A person with an open channel, a lock and a place in line, and what
/// the others see of them.
struct Holding {
    tab: Channel,
    lock: Value,
    place: Value,
    watcher: Channel,
}

/// Bob's tab is open, he holds the card and waits for the edgenote Carol
/// holds; Rita watches.
async fn bob_holding(app: &TestApp, p: &People, base: &str) -> Holding {
    let bob = p.bob.tab("bob-tab");
    let (watcher, _) = channel_at(app, base, SLUG, &p.rita).await;
    let (tab, _) = channel_at(app, base, SLUG, &bob).await;
    let lock = app
        .req_at(base, Method::POST, "/locks")
        .by(&bob)
        .json(lock_body("Card", p.case.card_id))
        .send()
        .await
        .expect(201)
        .body;
    app.req_at(base, Method::POST, "/locks")
        .by(&p.carol)
        .json(lock_body("Edgenote", p.case.edgenote_id))
        .send()
        .await
        .expect(201);
    let place = app
        .req_at(base, Method::POST, "/locks")
        .by(&bob)
        .json(wait_body("Edgenote", p.case.edgenote_id))
        .send()
        .await
        .expect(202)
        .body;
    Holding {
        tab,
        lock,
        place,
        watcher,
    }
}

/// The manager removes Bob from the case. In the same transaction his lock
/// ends (`kicked`) and his place in line goes; his channel is told
/// `access_removed` and closed with 1008.
async fn a_removed_member_loses_locks_line_and_channel_at_once(app: TestApp) {
    let p = people(&app).await;
    let mut bob = bob_holding(&app, &p, &app.base).await;
    let membership = p.membership_of(&app, &p.bob).await;

    app.delete(&format!("/memberships/{membership}"))
        .by(&p.mia)
        .send()
        .await
        .expect(204);
    // The same transaction: gone as soon as the removal is answered.
    let after = lock_json(&app, &p.mia, id(&bob.lock)).await;
    assert_eq!(
        after.status, 404,
        "a removed member's lock right after the removal: {}",
        after.body
    );
    let line = waiters_of(&app, &p.carol, "Edgenote", p.case.edgenote_id).await;
    assert!(
        line.is_empty(),
        "a removed member's place in line ({}) right after the removal: {line:?}",
        id(&bob.place)
    );
    let gone = bob
        .watcher
        .next_where("the destroy of Bob's lock", |f| {
            is_destroy_of(f, "Lock", id(&bob.lock))
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "kicked", "{gone}");
    assert_kicked(&mut bob.tab, "access_removed").await;
}

/// The manager lowers Bob to reader. His lock and place in line end in the
/// same transaction (`kicked`); his channel stays open (readers watch); he
/// can no longer renew what was his.
async fn a_demoted_member_loses_locks_and_line_but_keeps_watching(app: TestApp) {
    let p = people(&app).await;
    let mut bob = bob_holding(&app, &p, &app.base).await;
    let carols = app.lock(&p.carol, "Card", p.other_card).await;

    app.post(&format!("/cases/{SLUG}/memberships"))
        .by(&p.mia)
        .json(json!({ "membership": { "email": p.bob.email, "role": "reader" } }))
        .send()
        .await
        .expect(200);
    let after = lock_json(&app, &p.mia, id(&bob.lock)).await;
    assert_eq!(
        after.status, 404,
        "a demoted member's lock right after the demotion: {}",
        after.body
    );
    let line = waiters_of(&app, &p.carol, "Edgenote", p.case.edgenote_id).await;
    assert!(
        line.is_empty(),
        "a demoted member's place in line ({}) right after the demotion: {line:?}",
        id(&bob.place)
    );
    let gone = bob
        .watcher
        .next_where("the destroy of Bob's lock", |f| {
            is_destroy_of(f, "Lock", id(&bob.lock))
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "kicked", "{gone}");

    // His refresh renews nothing: his former lock has ended (404), and a
    // lock that is not his is 403.
    let bob_tab = p.bob.tab("bob-tab");
    let refreshed = app
        .post(&format!("/locks/{}/refresh", id(&bob.lock)))
        .by(&bob_tab)
        .send()
        .await;
    assert_eq!(
        refreshed.status, 404,
        "a reader's refresh of the lock he held as an editor: {}",
        refreshed.body
    );
    app.post(&format!("/locks/{}/refresh", id(&carols)))
        .by(&bob_tab)
        .send()
        .await
        .expect(403);

    // Still watching: his channel hears the next change, and no kick.
    app.patch(&format!("/cards/{}", p.other_card))
        .by(&p.carol)
        .json(json!({ "card": { "content": "read by a reader" } }))
        .send()
        .await
        .expect(200);
    let heard = bob
        .tab
        .frames_until("Carol's update on the demoted tab", |f| {
            f["type"] == "update" && f["watchable"]["content"] == "read by a reader"
        })
        .await;
    assert!(
        !heard.iter().any(|f| f["type"] == "kicked"),
        "a reader's channel stays open: {heard:?}"
    );
}

/// Bob signs out with the token his channel was opened with: REST with it
/// is 401 at once, and the channel is told `signed_out` and closed (1008).
async fn a_signed_out_persons_channel_is_told_and_closed(app: TestApp) {
    let p = people(&app).await;
    let mut bob = bob_holding(&app, &p, &app.base).await;
    let bob_tab = p.bob.tab("bob-tab");

    app.post("/auth/logout")
        .by(&bob_tab)
        .send()
        .await
        .expect(204);
    app.get("/me").by(&bob_tab).send().await.expect(401);
    app.post(&format!("/locks/{}/refresh", id(&bob.lock)))
        .by(&bob_tab)
        .send()
        .await
        .expect(401);
    assert_kicked(&mut bob.tab, "signed_out").await;
    drop(bob.watcher);
}

const LIFETIMES: [(&str, &str); 4] = [
    ("BATON_LOCK_TTL", "5s"),
    ("BATON_HEARTBEAT_INTERVAL", "250ms"),
    ("BATON_DISCONNECT_GRACE", "500ms"),
    ("BATON_REAPER_INTERVAL", "100ms"),
];

fn lifetimes(s: &mut Settings) {
    s.lock_ttl = Duration::from_secs(5);
    s.heartbeat_interval = Duration::from_millis(250);
    s.disconnect_grace = Duration::from_millis(500);
    s.reaper_interval = Duration::from_millis(100);
}

/// Two `baton serve` processes on one PostgreSQL database: Bob's channel is
/// on B, the manager removes him through A. His lock ends and B closes his
/// channel (`access_removed`, 1008). The time from the removal's answer to
/// the close is printed (a logged figure, not an assertion).
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_removal_through_one_instance_closes_the_channel_on_another() {
    let Some(app) = start_with(Backend::Postgres, lifetimes).await else {
        return;
    };
    let schema = schema_file().display().to_string();
    let mut env = LIFETIMES.to_vec();
    env.push(("BATON_SCHEMA", &schema));
    let a = ServerProcess::spawn(&app.db_url, "instance-a", &env).await;
    let b = ServerProcess::spawn(&app.db_url, "instance-b", &env).await;
    let p = people(&app).await;
    let mut bob = bob_holding(&app, &p, &b.base).await;
    let membership = p.membership_of(&app, &p.bob).await;

    app.req_at(
        &a.base,
        Method::DELETE,
        &format!("/memberships/{membership}"),
    )
    .by(&p.mia)
    .send()
    .await
    .expect(204);
    let answered = Instant::now();
    let (heard, code) = bob.tab.closed_by_server("Bob's channel on B").await;
    let took = answered.elapsed();
    println!(
        "membership removed through A: Bob's channel on B closed {} ms after the removal's answer",
        took.as_millis()
    );
    assert!(
        heard
            .iter()
            .any(|f| f["type"] == "kicked" && f["reason"] == "access_removed"),
        "heard {heard:?}"
    );
    assert_eq!(code, Some(1008), "heard {heard:?}");
    app.req_at(&b.base, Method::GET, &format!("/locks/{}", id(&bob.lock)))
        .by(&p.mia)
        .send()
        .await
        .expect(404);
    let gone = bob
        .watcher
        .next_where("the destroy of Bob's lock on B", |f| {
            is_destroy_of(f, "Lock", id(&bob.lock))
        })
        .await;
    assert_eq!(gone["watchable"]["reason"], "kicked", "{gone}");
}

// ---- 3. a non-member ----

/// A non-member's request: what it is, method, path, body, the status it
/// must get, and whether she named the record in it herself.
type Probe<'a> = (&'a str, Method, String, Option<Value>, u16, bool);

/// What a probe's answer must not contain.
fn leaks(body: &str, secrets: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = secrets
        .iter()
        .filter(|s| body.contains(*s))
        .map(|s| format!("{s:?}"))
        .collect();
    let bytes = body.as_bytes();
    if bytes.windows(4).any(|w| {
        w[0].is_ascii_digit() && w[1] == b':' && w[2].is_ascii_digit() && w[3].is_ascii_digit()
    }) {
        found.push("a clock time".into());
    }
    found
}

/// Eve, signed in but in no case, probes the case's locks, line and
/// records by id: each is 403 (404 only for what does not exist), and no
/// answer names a holder, a record's label or field, a time, a lock's
/// target or the case's slug (unless she sent it). Nothing she asks
/// changes anything, and asking about a record of an external type makes
/// no row for it.
async fn a_non_member_probing_locks_waiters_and_records_learns_nothing(app: TestApp) {
    let p = people(&app).await;
    let hers = app.lock(&p.alice, "Card", p.case.card_id).await;
    let place = app
        .lock_expect(&p.carol, wait_body("Card", p.case.card_id), 202)
        .await
        .body;
    let (lock_id, waiter_id, card, page) = (id(&hers), id(&place), p.case.card_id, p.case.page_id);
    let card_target = format!("Card {card}");
    let lock_body_of = |extra: Value| {
        let mut body = json!({ "lockableType": "Card", "lockableParam": card.to_string() });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({ "lock": body })
    };
    let probes: Vec<Probe> = vec![
        (
            "GET a lock",
            Method::GET,
            format!("/locks/{lock_id}"),
            None,
            403,
            false,
        ),
        (
            "refresh a lock",
            Method::POST,
            format!("/locks/{lock_id}/refresh"),
            None,
            403,
            false,
        ),
        (
            "DELETE a lock",
            Method::DELETE,
            format!("/locks/{lock_id}"),
            None,
            403,
            false,
        ),
        (
            "GET a lock that does not exist",
            Method::GET,
            "/locks/999999".into(),
            None,
            404,
            false,
        ),
        (
            "GET /locks/status",
            Method::GET,
            format!("/locks/status?lockableType=Card&lockableParam={card}"),
            None,
            403,
            true,
        ),
        (
            "POST /locks",
            Method::POST,
            "/locks".into(),
            Some(lock_body_of(json!({}))),
            403,
            true,
        ),
        (
            "POST /locks takeover",
            Method::POST,
            "/locks".into(),
            Some(lock_body_of(json!({ "takeover": true }))),
            403,
            true,
        ),
        (
            "POST /locks wait",
            Method::POST,
            "/locks".into(),
            Some(lock_body_of(json!({ "wait": true }))),
            403,
            true,
        ),
        (
            "POST /locks depth infinity on the page",
            Method::POST,
            "/locks".into(),
            Some(
                json!({ "lock": { "lockableType": "Page", "lockableParam": page.to_string(), "depth": "infinity" } }),
            ),
            403,
            true,
        ),
        (
            "refresh a waiter",
            Method::POST,
            format!("/waiters/{waiter_id}/refresh"),
            None,
            403,
            false,
        ),
        (
            "DELETE a waiter",
            Method::DELETE,
            format!("/waiters/{waiter_id}"),
            None,
            403,
            false,
        ),
        (
            "GET a card",
            Method::GET,
            format!("/cards/{card}"),
            None,
            403,
            true,
        ),
        (
            "PATCH a card",
            Method::PATCH,
            format!("/cards/{card}"),
            Some(json!({ "card": { "content": "Eve was here" } })),
            403,
            true,
        ),
        (
            "DELETE a card",
            Method::DELETE,
            format!("/cards/{card}"),
            None,
            403,
            true,
        ),
        (
            "GET a card that does not exist",
            Method::GET,
            "/cards/999999".into(),
            None,
            404,
            true,
        ),
    ];
    let mut wrong = Vec::new();
    for (what, method, path, body, status, named_it) in probes {
        let mut request = app.req(method, &path).by(&p.eve);
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = request.send().await;
        let text = answer.body.to_string();
        let mut secrets = vec!["Alice", "Carol", CARD_TEXT, PAGE_TITLE, SLUG, "UTC"];
        if !named_it {
            secrets.push(&card_target);
        }
        let leaked = leaks(&text, &secrets);
        if answer.status != status || !leaked.is_empty() {
            wrong.push(format!(
                "{what} ({path}): {} (want {status}), leaks {leaked:?}: {text}",
                answer.status
            ));
        }
    }

    // An external type: the case is named in the request, so its slug may
    // come back; nothing else may, and no row is made for a record only a
    // non-member asked about.
    let invoice = |param: &str, extra: Value| {
        let mut lock = json!({ "lockableType": "Invoice", "lockableParam": param, "case": SLUG });
        lock.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({ "lock": lock })
    };
    let held = app
        .post("/locks")
        .by(&p.alice)
        .json(invoice("inv-held", json!({})))
        .send()
        .await
        .expect(201);
    for (param, extra) in [
        ("inv-new", json!({})),
        ("inv-new", json!({ "takeover": true })),
        ("inv-new", json!({ "wait": true })),
        ("inv-held", json!({})),
        ("inv-held", json!({ "wait": true })),
    ] {
        let body = invoice(param, extra);
        let answer = app
            .post("/locks")
            .by(&p.eve)
            .json(body.clone())
            .send()
            .await;
        let text = answer.body.to_string();
        let leaked = leaks(&text, &["Alice", "Carol", "UTC"]);
        if answer.status != 403 || !leaked.is_empty() {
            wrong.push(format!(
                "POST /locks {body}: {} (want 403), leaks {leaked:?}: {text}",
                answer.status
            ));
        }
    }
    let status = app
        .get(&format!(
            "/locks/status?lockableType=Invoice&lockableParam=inv-held&case={SLUG}"
        ))
        .by(&p.eve)
        .send()
        .await;
    let text = status.body.to_string();
    let leaked = leaks(&text, &["Alice", "UTC"]);
    if status.status != 403 || !leaked.is_empty() {
        wrong.push(format!(
            "status of an invoice: {} (want 403), leaks {leaked:?}: {text}",
            status.status
        ));
    }
    let rows = external_rows(&app, "inv-new").await;
    if rows != 0 {
        wrong.push(format!(
            "a non-member's requests made {rows} external_records row(s)"
        ));
    }
    assert!(
        wrong.is_empty(),
        "a non-member's probes:\n{}",
        wrong.join("\n")
    );
    // A member's first lock of that invoice is an ordinary first lock.
    let first = app
        .post("/locks")
        .by(&p.alice)
        .json(invoice("inv-new", json!({})))
        .send()
        .await
        .expect(201);
    assert_eq!(first.body["user"]["id"], p.alice.id);
    lock_json(&app, &p.alice, id(&held.body)).await.expect(200);

    // Nothing changed: Alice's lock, Carol's place, the card.
    let now = lock_json(&app, &p.alice, lock_id).await.expect(200);
    assert_eq!(now.body["expiresAt"], hers["expiresAt"]);
    assert_eq!(
        waiters_of(&app, &p.mia, "Card", card).await,
        vec![waiter_id]
    );
    let card_now = app
        .get(&format!("/cards/{card}"))
        .by(&p.mia)
        .send()
        .await
        .expect(200);
    assert_eq!(card_now.body["content"], CARD_TEXT);
}

// ---- the host's key ----

struct Host {
    app: TestApp,
    key: String,
}

/// A server with a live API key for the host's backend.
async fn host(backend: Backend) -> Option<Host> {
    let app = start(backend).await?;
    let (key, hash) = baton::auth::api_keys::generate();
    app.state
        .db
        .write(None, move |tx| {
            Ok::<_, baton::error::AppError>(ApiKey::create(tx.conn, "host", &hash, tx.now)?)
        })
        .await
        .expect("add a key")
        .expect("a new name");
    Some(Host { app, key })
}

/// How many rows name this external record, read from the database.
async fn external_rows(app: &TestApp, param: &str) -> i64 {
    use baton::db::schema::external_records::dsl;
    use diesel::prelude::*;
    let param = param.to_owned();
    app.state
        .db
        .read(move |conn| {
            dsl::external_records
                .filter(dsl::param.eq(&param))
                .count()
                .get_result::<i64>(conn)
                .map_err(baton::error::AppError::from)
        })
        .await
        .expect("count external records")
}

// ---- 4. U+0000 ----

/// A request with a NUL: what it is, who sends it, method, path, body, the
/// status it must get, and the field its message must name ("" where the
/// contract names no field: a path segment, and a type name the schema
/// does not know anyway).
type NulProbe<'a> = (
    &'a str,
    &'a TestUser,
    Method,
    String,
    Option<Value>,
    u16,
    &'a str,
);

/// A NUL in each kind of string baton stores or looks up: 422 `invalid`
/// naming the field (401 on sign-in), never a 500, on both databases; the
/// card stays saveable after its refused save.
async fn nul_in_any_string_is_refused_and_never_500(app: TestApp) {
    let backend = app.backend;
    let p = people(&app).await;
    let card = p.case.card_id;
    let page = p.case.page_id;
    let (alice, root) = (&p.alice, &p.root);
    let probes: Vec<NulProbe> = vec![
        (
            "a card's content on create",
            alice,
            Method::POST,
            format!("/pages/{page}/cards"),
            Some(json!({ "card": { "content": "x\u{0}y" } })),
            422,
            "content",
        ),
        (
            "a card's content on update",
            alice,
            Method::PATCH,
            format!("/cards/{card}"),
            Some(json!({ "card": { "content": "x\u{0}y" } })),
            422,
            "content",
        ),
        (
            "a page's title on create",
            alice,
            Method::POST,
            format!("/cases/{SLUG}/pages"),
            Some(json!({ "page": { "title": "x\u{0}y" } })),
            422,
            "title",
        ),
        (
            "an edgenote's caption on update",
            alice,
            Method::PATCH,
            format!("/edgenotes/{}", p.case.edgenote_id),
            Some(json!({ "edgenote": { "caption": "x\u{0}y" } })),
            422,
            "caption",
        ),
        (
            "a case's slug",
            alice,
            Method::POST,
            "/cases".into(),
            Some(json!({ "case": { "slug": "new\u{0}case", "title": "New" } })),
            422,
            "slug",
        ),
        (
            "a case's title",
            alice,
            Method::POST,
            "/cases".into(),
            Some(json!({ "case": { "slug": "new-case", "title": "New\u{0}" } })),
            422,
            "title",
        ),
        (
            "a case's title on update",
            &p.mia,
            Method::PATCH,
            format!("/cases/{SLUG}"),
            Some(json!({ "case": { "title": "New\u{0}" } })),
            422,
            "title",
        ),
        (
            "a membership's email",
            &p.mia,
            Method::POST,
            format!("/cases/{SLUG}/memberships"),
            Some(json!({ "membership": { "email": "eve\u{0}@example.com", "role": "editor" } })),
            422,
            "email",
        ),
        (
            "a new user's email",
            root,
            Method::POST,
            "/users".into(),
            Some(
                json!({ "user": { "email": "nul\u{0}@example.com", "name": "Nul", "password": "password1" } }),
            ),
            422,
            "email",
        ),
        (
            "a new user's name",
            root,
            Method::POST,
            "/users".into(),
            Some(
                json!({ "user": { "email": "nul2@example.com", "name": "N\u{0}ul", "password": "password1" } }),
            ),
            422,
            "name",
        ),
        (
            "a new user's password",
            root,
            Method::POST,
            "/users".into(),
            Some(
                json!({ "user": { "email": "nul3@example.com", "name": "Nul", "password": "pass\u{0}word1" } }),
            ),
            422,
            "password",
        ),
        (
            "a user's name on update",
            root,
            Method::PATCH,
            format!("/users/{}", alice.id),
            Some(json!({ "user": { "name": "Ali\u{0}ce" } })),
            422,
            "name",
        ),
        (
            "a user's own new password",
            alice,
            Method::PATCH,
            format!("/users/{}", alice.id),
            Some(
                json!({ "user": { "password": "new\u{0}password" }, "currentPassword": "password1" }),
            ),
            422,
            "password",
        ),
        (
            "a user's current password",
            alice,
            Method::PATCH,
            format!("/users/{}", alice.id),
            Some(
                json!({ "user": { "password": "newpassword1" }, "currentPassword": "pass\u{0}word1" }),
            ),
            422,
            "currentPassword",
        ),
        (
            "a lock's param",
            alice,
            Method::POST,
            "/locks".into(),
            Some(json!({ "lock": { "lockableType": "Card", "lockableParam": "1\u{0}" } })),
            422,
            "lockableParam",
        ),
        (
            "a lock's type",
            alice,
            Method::POST,
            "/locks".into(),
            Some(json!({ "lock": { "lockableType": "Ca\u{0}rd", "lockableParam": "1" } })),
            422,
            "",
        ),
        (
            "?case= on GET /locks",
            alice,
            Method::GET,
            "/locks?case=%00".into(),
            None,
            422,
            "case",
        ),
        (
            "?case= with a slug around a NUL",
            alice,
            Method::GET,
            format!("/locks?case={SLUG}%00"),
            None,
            422,
            "case",
        ),
        (
            "?lockableParam= on GET /locks/status",
            alice,
            Method::GET,
            "/locks/status?lockableType=Card&lockableParam=%00".into(),
            None,
            422,
            "lockableParam",
        ),
        (
            "?lockableType= on GET /locks/status",
            alice,
            Method::GET,
            "/locks/status?lockableType=Card%00&lockableParam=1".into(),
            None,
            422,
            "",
        ),
        (
            "a case slug in the path",
            alice,
            Method::GET,
            "/cases/%00".into(),
            None,
            422,
            "",
        ),
        (
            "a case slug in the path, after a real one",
            alice,
            Method::GET,
            format!("/cases/{SLUG}%00"),
            None,
            422,
            "",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, by, method, path, body, status, field) in probes {
        let mut request = app.req(method, &path).by(by);
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = request.send().await;
        let message = answer.body["error"]["message"].as_str().unwrap_or("");
        let fine = answer.status == status
            && answer.body["error"]["code"] == "invalid"
            && message.contains(field);
        if !fine {
            wrong.push(format!(
                "{what} ({path}): {} (want {status} invalid naming {field:?}): {}",
                answer.status, answer.body
            ));
        }
    }
    for (what, body) in [
        (
            "sign-in with a NUL in the email",
            json!({ "email": "alice\u{0}@example.com", "password": "password1" }),
        ),
        (
            "sign-in with a NUL in the password",
            json!({ "email": alice.email, "password": "password1\u{0}" }),
        ),
        (
            "sign-in with only a NUL as the email",
            json!({ "email": "\u{0}", "password": "x" }),
        ),
        (
            "sign-in with the right password and a NUL in a key it ignores",
            json!({ "email": alice.email, "password": "password1", "remember\u{0}": true }),
        ),
        (
            "sign-in with the right password and a NUL in a value it ignores",
            json!({ "email": alice.email, "password": "password1", "remember": ["\u{0}"] }),
        ),
    ] {
        let answer = app.post("/auth/login").json(body).send().await;
        if answer.status != 401 {
            wrong.push(format!(
                "{what}: {} (want 401): {}",
                answer.status, answer.body
            ));
        }
    }
    // The card stays saveable (a NUL stored by a create or an update would
    // make PostgreSQL refuse every later save of it).
    let saved = app
        .patch(&format!("/cards/{card}"))
        .by(alice)
        .json(json!({ "card": { "content": "clean again" } }))
        .send()
        .await;
    if saved.status != 200 {
        wrong.push(format!(
            "a plain save after the refused one: {} {}",
            saved.status, saved.body
        ));
    }
    let cards = app
        .get(&format!("/cases/{SLUG}"))
        .by(alice)
        .send()
        .await
        .expect(200);
    for card in cards.body["pages"][0]["cards"].as_array().unwrap() {
        let content = card["content"].as_str().unwrap_or("");
        if content.contains('\u{0}') {
            wrong.push(format!("a card holds a NUL: {card}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "NUL characters on {backend:?}:\n{}",
        wrong.join("\n")
    );
}

// ---- 5. oversized sign-ins ----

/// An email over 254 characters or a password over 1,024 is 422 (not a
/// wrong-credentials 401), and none of them counts against the throttle:
/// after more of them than the account and address limits, the right
/// password still signs in.
async fn oversized_sign_ins_are_422_and_do_not_count(app: TestApp) {
    let alice = app.user("Alice").await;
    let long_email = format!("{}@example.com", "a".repeat(243)); // 255 characters
    assert_eq!(long_email.len(), 255);
    let long_password = "p".repeat(1025);
    // Each kind of answer once, with how many times it came.
    let mut answers: Vec<(String, u16, usize, String)> = Vec::new();
    for _ in 0..12 {
        for (what, body) in [
            (
                "a 255-character email",
                json!({ "email": long_email, "password": "password1" }),
            ),
            (
                "a 1,025-character password",
                json!({ "email": alice.email, "password": long_password }),
            ),
        ] {
            let answer = app.post("/auth/login").json(body).send().await;
            match answers
                .iter_mut()
                .find(|(w, status, _, _)| w == what && *status == answer.status)
            {
                Some(seen) => seen.2 += 1,
                None => answers.push((what.into(), answer.status, 1, answer.body.to_string())),
            }
        }
    }
    let mut wrong: Vec<String> = answers
        .iter()
        .filter(|(_, status, _, _)| *status != 422)
        .map(|(what, status, times, body)| format!("{what}: {status} ({times} times): {body}"))
        .collect();
    // At the limits themselves: 254 and 1,024 characters are ordinary
    // wrong credentials.
    let at_limit = format!("{}@example.com", "a".repeat(242));
    assert_eq!(at_limit.len(), 254);
    let answer = app
        .post("/auth/login")
        .json(json!({ "email": at_limit, "password": "password1" }))
        .send()
        .await;
    if answer.status != 401 {
        wrong.push(format!(
            "a 254-character email: {} (want 401) {}",
            answer.status, answer.body
        ));
    }
    let signed_in = app
        .post("/auth/login")
        .json(json!({ "email": alice.email, "password": "password1" }))
        .send()
        .await;
    if signed_in.status != 200 {
        wrong.push(format!(
            "the right password afterwards: {} {}",
            signed_in.status, signed_in.body
        ));
    }
    assert!(
        wrong.is_empty(),
        "oversized sign-ins:\n{}",
        wrong.join("\n")
    );
}

// ---- 6. a host's frame for a stored type ----

/// With an API key, `POST /cases/:slug/events` relays frames of external
/// types only: a frame for a record baton stores (a card, with a version no
/// save made), a lock, a waiter or another of baton's own is 422, and no
/// tab hears it.
async fn a_host_frame_for_a_record_baton_stores_is_422(h: Host) {
    let app = &h.app;
    let ann = app.user("Ann").await.tab("ann-tab");
    app.case_only("acme", &[(&ann, Role::Editor)]).await;
    let page = app
        .post("/cases/acme/pages")
        .by(&ann)
        .json(json!({ "page": { "title": "Accounts" } }))
        .send()
        .await
        .expect(201);
    let card = app
        .post(&format!("/pages/{}/cards", id(&page.body)))
        .by(&ann)
        .json(json!({ "card": { "content": "real" } }))
        .send()
        .await
        .expect(201);
    let (mut tab, _) = channel(app, "acme", &ann).await;
    let announce = |body: Value| {
        app.post("/cases/acme/events")
            .header("Authorization", format!("Bearer {}", h.key))
            .json(body)
    };
    let card_param = id(&card.body).to_string();
    let mut wrong = Vec::new();
    for watchable in [
        json!({ "type": "Card", "param": card_param, "version": 999_999, "content": "forged" }),
        json!({ "type": "Card", "param": "1", "version": 999_999 }),
        json!({ "type": "Lock", "param": "1" }),
        json!({ "type": "Waiter", "param": "1" }),
        json!({ "type": "Case", "param": "1" }),
        json!({ "type": "User", "param": "1" }),
        json!({ "type": "Membership", "param": "1" }),
        json!({ "type": "LockEvent", "param": "1" }),
    ] {
        for change in ["create", "update", "destroy"] {
            let body = json!({ "type": change, "watchable": watchable, "editorSessionId": "host" });
            let answer = announce(body.clone()).send().await;
            if answer.status != 422 {
                wrong.push(format!("{body}: {} {}", answer.status, answer.body));
            }
        }
    }
    announce(json!({ "type": "update", "watchable": { "type": "Invoice", "param": "inv-1" } }))
        .send()
        .await
        .expect(202);
    let heard = tab
        .frames_until("the invoice's frame", |f| {
            f["watchable"]["type"] == "Invoice"
        })
        .await;
    for frame in &heard {
        // Frames of Ann's own saves may still arrive after the welcome; the
        // host's frames carry its session id.
        if frame["editorSessionId"] == "host" && frame["watchable"]["type"] != "Invoice" {
            wrong.push(format!("a tab heard {frame}"));
        }
    }
    let stored = app
        .get(&format!("/cards/{card_param}"))
        .by(&ann)
        .send()
        .await
        .expect(200);
    assert_eq!(stored.body["content"], "real");
    assert!(
        wrong.is_empty(),
        "host frames for baton's own types:\n{}",
        wrong.join("\n")
    );
}

// ---- 7. what adding a member tells a manager ----

/// Mia, who manages the case, adds Root (a site admin) and a user a host
/// provisioned with an email, by email: the answer's user is the public
/// one with the email she typed, no `admin`, no `externalId`.
async fn a_manager_adding_a_member_learns_nothing_of_them_beyond_the_email(app: TestApp) {
    let p = people(&app).await;
    let mut wrong = Vec::new();
    for (email, role, status) in [
        (p.root.email.clone(), "reader", 201),
        (p.root.email.clone(), "editor", 200),
        (p.eve.email.clone(), "editor", 201),
    ] {
        let added = app
            .post(&format!("/cases/{SLUG}/memberships"))
            .by(&p.mia)
            .json(json!({ "membership": { "email": email, "role": role } }))
            .send()
            .await
            .expect(status);
        let user = added.body["user"].as_object().expect("a user").clone();
        let keys: Vec<&str> = user.keys().map(String::as_str).collect();
        if user.contains_key("admin") || user.contains_key("externalId") {
            wrong.push(format!("adding {email} as {role}: the user has {keys:?}"));
        }
        if user.get("email") != Some(&json!(email)) {
            wrong.push(format!("adding {email}: email {:?}", user.get("email")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---- 8. a lock ended from a shell ----

/// Bob holds the card when an operator runs `baton schema drop Card`: his
/// lock ends with an audit row (`kicked`, by nobody), and on PostgreSQL
/// Mia's channel hears its `destroy` (reason `kicked`) from the command,
/// another process, through the event stream. (On SQLite a running server
/// does not hear another process; the audit row is there.)
async fn schema_drop_audits_and_broadcasts_each_lock_it_ends(app: TestApp) {
    let p = people(&app).await;
    let (mut mia, _) = channel(&app, SLUG, &p.mia).await;
    let lock = app.lock(&p.bob, "Card", p.case.card_id).await;
    let lock_id = id(&lock);
    let dropped = common::run_baton(&app.db_url, &["schema", "drop", "Card"]);
    assert!(dropped.status.success(), "{}", common::described(&dropped));
    let audit = app.audit(p.case.case_id).await;
    assert!(
        audit.contains(&("kicked".to_owned(), lock_id, None, p.bob.id)),
        "no audit row of lock {lock_id} ending: {audit:?}"
    );
    app.assert_lock_gone(&p.bob, lock_id).await;
    if app.backend == Backend::Postgres {
        let gone = mia
            .next_where("the destroy of Bob's lock", |f| {
                is_destroy_of(f, "Lock", lock_id)
            })
            .await;
        assert_eq!(gone["watchable"]["reason"], "kicked", "{gone}");
    }
}

// ---- 9. the callers every instance keeps ----

/// The auth epoch (PostgreSQL's fast path: every instance forgets the
/// callers it knows when it moves), as it is now.
fn auth_epoch(app: &TestApp) -> i64 {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Epoch {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        epoch: i64,
    }
    let mut pg = diesel::PgConnection::establish(&app.db_url).expect("connect");
    diesel::sql_query("SELECT epoch FROM auth_epoch")
        .get_result::<Epoch>(&mut pg)
        .expect("the auth epoch")
        .epoch
}

/// Alice renames herself and makes a case, Mia adds Eve and raises Rita
/// to editor: none of it moves the auth epoch (each used to flush every
/// instance's callers), and Alice's next lock, on the fast path, names her
/// by her new name. Demoting Bob moves it, and so does his signing out,
/// after which his token is refused at once.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn harmless_writes_leave_the_auth_epoch_and_narrowing_ones_move_it() {
    let Some(app) = start(Backend::Postgres).await else {
        return;
    };
    let p = people(&app).await;
    let first = app.lock(&p.alice, "Card", p.case.card_id).await;
    app.release(&p.alice, id(&first)).await;
    let before = auth_epoch(&app);
    app.patch(&format!("/users/{}", p.alice.id))
        .by(&p.alice)
        .json(json!({ "user": { "name": "Alice Renamed" } }))
        .send()
        .await
        .expect(200);
    app.post("/cases")
        .by(&p.alice)
        .json(json!({ "case": { "slug": "alices-own", "title": "Her own" } }))
        .send()
        .await
        .expect(201);
    let member = |email: &str, role: &str| {
        app.post(&format!("/cases/{SLUG}/memberships"))
            .by(&p.mia)
            .json(json!({ "membership": { "email": email, "role": role } }))
    };
    member(&p.eve.email, "reader").send().await.expect(201);
    member(&p.rita.email, "editor").send().await.expect(200);
    assert_eq!(
        auth_epoch(&app),
        before,
        "a rename, a new case, a new member or a raised role moved the epoch"
    );
    let again = app.lock(&p.alice, "Card", p.case.card_id).await;
    assert_eq!(again["user"]["name"], "Alice Renamed", "{again}");

    member(&p.bob.email, "reader").send().await.expect(200);
    let demoted = auth_epoch(&app);
    assert!(demoted > before, "demoting Bob did not move the epoch");
    app.post("/auth/logout").by(&p.bob).send().await.expect(204);
    assert!(
        auth_epoch(&app) > demoted,
        "signing out did not move the epoch"
    );
    app.lock_error(
        &p.bob,
        common::lock_body("Card", p.other_card),
        401,
        "unauthorized",
    )
    .await;
}
