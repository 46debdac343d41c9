//! Rolling upgrades (PostgreSQL): instances starting together migrate once,
//! the functions made at start are named by their text and leave another
//! release's alone, and an instance of the previous release serves one
//! database beside this one through a storm, restarted in the middle of it.
//!
//! The storm needs the previous release's binary in
//! `BATON_TEST_PREVIOUS_BIN`; `.ci/build-previous` builds it from the commit
//! in `.ci/previous-release`.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::db::DbConn;
use common::{free_port, Backend, ServerProcess, TestApp, TestDb};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn instances_starting_together_apply_each_migration_once() {
    let (_db, url) = TestDb::create(Backend::Postgres).expect("BATON_TEST_POSTGRES_URL");
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut conn = baton::db::connect(&url).expect("connect");
                baton::db::migrate(&mut conn).map_err(|e| e.to_string())
            })
        })
        .collect();
    for start in starts {
        start.join().expect("thread").expect("every start migrates");
    }
    let mut conn = baton::db::connect(&url).expect("connect");
    let status = baton::db::migration_status(&mut conn).expect("status");
    assert!(status.pending.is_empty(), "{status:?}");
    assert!(status.newer.is_empty(), "{status:?}");
    assert!(status.applied.len() >= 13, "{status:?}");
}

#[derive(QueryableByName)]
struct Function {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    body: String,
}

fn functions(conn: &mut DbConn) -> BTreeMap<String, String> {
    diesel::sql_query(
        "SELECT proname::text AS name, prosrc AS body FROM pg_proc WHERE proname LIKE 'baton\\_%'",
    )
    .load::<Function>(conn)
    .expect("pg_proc")
    .into_iter()
    .map(|f| (f.name, f.body))
    .collect()
}

#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn a_start_makes_its_own_functions_and_leaves_another_releases_alone() {
    let app = TestApp::start(Backend::Postgres)
        .await
        .expect("BATON_TEST_POSTGRES_URL");
    let mut conn = baton::db::connect(&app.db_url).expect("connect");
    // What a previous release made under the names it calls.
    conn.batch_execute(
        "CREATE FUNCTION baton_fast_save() RETURNS INT LANGUAGE sql AS $$ SELECT 1 $$; \
         CREATE FUNCTION baton_fast_guard() RETURNS INT LANGUAGE sql AS $$ SELECT 2 $$;",
    )
    .expect("the previous release's functions");
    let before = functions(&mut conn);
    let ours: Vec<&String> = before
        .keys()
        .filter(|name| {
            name.len() == "baton_fast_save_".len() + 16
                || name.len() == "baton_fast_guard_".len() + 16
        })
        .collect();
    assert_eq!(
        ours.len(),
        2,
        "one hashed function each: {:?}",
        before.keys()
    );

    // Another instance of this release starts on the same database.
    let other = ServerProcess::spawn(&app.db_url, "another", &[]).await;
    let after = functions(&mut conn);
    assert_eq!(before, after, "a start replaced a function");
    assert!(after["baton_fast_save"].contains("SELECT 1"));
    assert!(after["baton_fast_guard"].contains("SELECT 2"));
    drop(other);
}

// ---- The storm: the previous release and this one on one database ----

#[actix_web::test]
#[cfg_attr(
    not(baton_previous_release_tests),
    ignore = "the previous release: set BATON_TEST_PREVIOUS_BIN (`.ci/build-previous` builds it) and BATON_TEST_POSTGRES_URL"
)]
async fn the_previous_release_and_this_one_serve_one_database_through_a_storm() {
    let previous = PathBuf::from(std::env::var("BATON_TEST_PREVIOUS_BIN").expect("previous bin"));
    let (_db, url) = TestDb::create(Backend::Postgres).expect("BATON_TEST_POSTGRES_URL");
    let logs = tempfile::tempdir().expect("log dir");

    // The roll-out's order: the previous release serves, then this one starts.
    let old_port = free_port();
    let mut old = start(
        &previous,
        old_port,
        &url,
        "previous",
        &logs.path().join("old-1.log"),
    )
    .await;
    let this = Path::new(env!("CARGO_BIN_EXE_baton"));
    let new = start(
        this,
        free_port(),
        &url,
        "this",
        &logs.path().join("new.log"),
    )
    .await;
    let bases = [old.base.clone(), new.base.clone()];

    let people = People::sign_in(&new.base).await;
    let cards = cards_of_the_case(&new.base, &people.watcher).await;
    assert!(cards.len() >= 3, "the demo's cards: {cards:?}");

    let log = Arc::new(StormLog::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut watchers = vec![
        Watcher::open(&new.base, &people.watcher, "watch-new").await,
        Watcher::open(&old.base, &people.watcher, "watch-old-1").await,
    ];
    let mut clients = Vec::new();
    for i in 0..8 {
        let client = Client {
            base: bases[i % 2].clone(),
            token: people.editors[i % 2].clone(),
            session: format!("storm-{i}"),
            http: reqwest::Client::new(),
            log: log.clone(),
        };
        let (cards, stop) = (cards.clone(), stop.clone());
        clients.push(actix_web::rt::spawn(async move {
            client.run(cards, stop, i as u64 + 1).await
        }));
    }

    // The previous release's instance restarts in the middle of the storm.
    actix_web::rt::time::sleep(Duration::from_secs(6)).await;
    watchers[1].closing = Some(Instant::now());
    old.terminate();
    let exited = old.exited_within(Duration::from_secs(15)).await;
    assert!(
        exited.is_some(),
        "the previous release did not stop on SIGTERM"
    );
    old = start(
        &previous,
        old_port,
        &url,
        "previous",
        &logs.path().join("old-2.log"),
    )
    .await;
    watchers.push(Watcher::open(&old.base, &people.watcher, "watch-old-2").await);
    actix_web::rt::time::sleep(Duration::from_secs(8)).await;

    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await.expect("client");
    }
    // Frames of the last answers are on their way.
    actix_web::rt::time::sleep(Duration::from_secs(1)).await;
    let end = Instant::now();

    let errors = log.errors.lock().unwrap().clone();
    let statuses = log.statuses.lock().unwrap().clone();
    let expected = log.expected.lock().unwrap().clone();
    let requests: usize = statuses.values().sum();
    let server_errors: usize = statuses.range(500..).map(|(_, n)| n).sum();
    let mut checked = 0;
    let mut missed = Vec::new();
    for watcher in &watchers {
        let frames = watcher.frames.lock().unwrap().clone();
        let until = watcher
            .closing
            .map_or(end, |closing| closing - Duration::from_millis(500));
        for e in &expected {
            if e.started < watcher.welcomed || e.answered > until {
                continue;
            }
            checked += 1;
            if !frames.iter().any(|f| e.frame.matches(f)) {
                missed.push(format!("{}: {:?}", watcher.name, e.frame));
            }
        }
    }
    let granted = double_grants(&watchers[0].frames.lock().unwrap());
    eprintln!(
        "rolling upgrade storm: {requests} requests ({} saves, {} lock cycles), statuses {statuses:?}, \
         {} unreachable during the restart, {checked} frames checked on {} tabs, \
         {} missed, {server_errors} 5xx, {} double grants",
        log.saves.load(Ordering::Relaxed),
        log.cycles.load(Ordering::Relaxed),
        log.unreachable.load(Ordering::Relaxed),
        watchers.len(),
        missed.len(),
        granted.len(),
    );
    let logs_say = || {
        ["old-1.log", "new.log", "old-2.log"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(logs.path().join(f)).unwrap_or_default();
                format!("--- {f}:\n{}", tail(&text, 3000))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        errors.is_empty(),
        "unexpected answers: {errors:#?}\n{}",
        logs_say()
    );
    assert_eq!(server_errors, 0, "5xx answers\n{}", logs_say());
    assert!(missed.is_empty(), "frames missed: {missed:#?}");
    assert!(granted.is_empty(), "double grants: {granted:#?}");
    assert!(
        log.saves.load(Ordering::Relaxed) > 50,
        "too few saves to tell"
    );
    assert!(checked > 100, "too few frames checked to tell");
    drop((old, new));
}

fn tail(text: &str, chars: usize) -> &str {
    let start = text.len().saturating_sub(chars);
    let start = (start..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    &text[start..]
}

async fn start(binary: &Path, port: u16, url: &str, instance: &str, log: &Path) -> ServerProcess {
    let log = std::fs::File::create(log).expect("log file");
    ServerProcess::spawn_binary(binary, port, url, instance, &[], &["--demo"], log).await
}

/// The demo's people: two editors for the storm, the admin watching.
struct People {
    editors: [String; 2],
    watcher: String,
}

impl People {
    async fn sign_in(base: &str) -> People {
        let token = |email: &'static str| async move {
            let answer: Value = reqwest::Client::new()
                .post(format!("{base}/auth/login"))
                .json(&json!({ "email": email, "password": "demo" }))
                .send()
                .await
                .expect("login")
                .json()
                .await
                .expect("login JSON");
            answer["token"].as_str().expect("token").to_owned()
        };
        People {
            editors: [
                token("bob@example.com").await,
                token("carol@example.com").await,
            ],
            watcher: token("alice@example.com").await,
        }
    }
}

const CASE: &str = "sample-case";

/// The ids of the demo case's cards.
async fn cards_of_the_case(base: &str, token: &str) -> Vec<i64> {
    let case: Value = reqwest::Client::new()
        .get(format!("{base}/cases/{CASE}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("case")
        .json()
        .await
        .expect("case JSON");
    let mut cards = Vec::new();
    collect_cards(&case, &mut cards);
    cards
}

fn collect_cards(value: &Value, cards: &mut Vec<i64>) {
    match value {
        Value::Object(object) => {
            if object.get("type") == Some(&json!("Card")) {
                if let Some(id) = object.get("id").and_then(Value::as_i64) {
                    cards.push(id);
                }
            }
            object.values().for_each(|v| collect_cards(v, cards));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_cards(v, cards)),
        _ => {}
    }
}

/// A frame an answer promises to every tab of the case.
#[derive(Clone, Debug)]
enum Promised {
    LockCreated(i64),
    LockDestroyed(i64),
    CardSaved { id: i64, version: i64 },
}

impl Promised {
    fn matches(&self, frame: &Value) -> bool {
        let watchable = &frame["watchable"];
        let param = |id: i64| watchable["param"] == json!(id.to_string());
        match self {
            Promised::LockCreated(id) => {
                frame["type"] == "create" && watchable["type"] == "Lock" && param(*id)
            }
            Promised::LockDestroyed(id) => {
                frame["type"] == "destroy" && watchable["type"] == "Lock" && param(*id)
            }
            Promised::CardSaved { id, version } => {
                frame["type"] == "update"
                    && watchable["type"] == "Card"
                    && param(*id)
                    && watchable["version"] == json!(version)
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Expected {
    started: Instant,
    answered: Instant,
    frame: Promised,
}

#[derive(Default)]
struct StormLog {
    statuses: Mutex<BTreeMap<u16, usize>>,
    /// Answers no step of the storm may get, with what was asked.
    errors: Mutex<Vec<String>>,
    expected: Mutex<Vec<Expected>>,
    unreachable: AtomicUsize,
    saves: AtomicUsize,
    cycles: AtomicUsize,
}

/// One storm client: a tab of an editor on one instance.
struct Client {
    base: String,
    token: String,
    session: String,
    http: reqwest::Client,
    log: Arc<StormLog>,
}

/// An answer: its status, body and when the request started.
struct Answer {
    status: u16,
    body: Value,
    started: Instant,
}

impl Client {
    async fn run(self, cards: Vec<i64>, stop: Arc<AtomicBool>, seed: u64) {
        let mut n = seed;
        // Something may be held that no answer named (a request cut by the
        // restart): the tab lets go of everything before going on.
        let mut unsure = false;
        while !stop.load(Ordering::SeqCst) {
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let card = cards[(n >> 33) as usize % cards.len()];
            if unsure {
                match self
                    .call("DELETE", "/locks?session=mine", None, &[204])
                    .await
                {
                    Some(_) => unsure = false,
                    None => continue,
                }
            }
            let done = match (n >> 40) % 10 {
                0..=5 => self.cycle(card, json!({})).await,
                6..=7 => self.cycle(card, json!({ "takeover": true })).await,
                _ => self.wait_in_line(card, n).await,
            };
            if done.is_none() {
                unsure = true;
            }
            actix_web::rt::time::sleep(Duration::from_millis(5 + (n >> 50) % 15)).await;
        }
    }

    /// Acquire (or take over), save under the lock, release.
    async fn cycle(&self, card: i64, extra: Value) -> Option<()> {
        let mut lock = json!({ "lockableType": "Card", "lockableParam": card.to_string() });
        lock.as_object_mut()?.extend(extra.as_object()?.clone());
        let got = self
            .call(
                "POST",
                "/locks",
                Some(json!({ "lock": lock })),
                &[200, 201, 403, 409],
            )
            .await?;
        if got.status == 201 {
            self.promise(&got, Promised::LockCreated(got.body["id"].as_i64()?));
        }
        if got.status == 201 || got.status == 200 {
            self.save_and_release(card, got.body["id"].as_i64()?)
                .await?;
        }
        Some(())
    }

    async fn save_and_release(&self, card: i64, lock: i64) -> Option<()> {
        let saved = self.call_with_token(card, lock, &[200, 412, 423]).await?;
        if saved.status == 200 {
            self.log.saves.fetch_add(1, Ordering::Relaxed);
            let version = saved.body["version"].as_i64()?;
            self.promise(&saved, Promised::CardSaved { id: card, version });
        }
        let released = self
            .call("DELETE", &format!("/locks/{lock}"), None, &[204, 403, 404])
            .await?;
        if released.status == 204 {
            self.log.cycles.fetch_add(1, Ordering::Relaxed);
            self.promise(&released, Promised::LockDestroyed(lock));
        }
        Some(())
    }

    /// Join the line; leave it a moment later (or release what it handed over).
    async fn wait_in_line(&self, card: i64, n: u64) -> Option<()> {
        let body = json!({ "lock": { "lockableType": "Card", "lockableParam": card.to_string(), "wait": true } });
        let got = self
            .call("POST", "/locks", Some(body), &[200, 201, 202])
            .await?;
        match got.status {
            201 | 200 => {
                if got.status == 201 {
                    self.promise(&got, Promised::LockCreated(got.body["id"].as_i64()?));
                }
                self.save_and_release(card, got.body["id"].as_i64()?).await
            }
            _ => {
                let waiter = got.body["id"].as_i64()?;
                actix_web::rt::time::sleep(Duration::from_millis(50 + (n >> 20) % 200)).await;
                self.call("DELETE", &format!("/waiters/{waiter}"), None, &[204, 404])
                    .await?;
                // A hand-off may have made this tab the holder meanwhile.
                self.call("DELETE", "/locks?session=mine", None, &[204])
                    .await
                    .map(|_| ())
            }
        }
    }

    fn promise(&self, answer: &Answer, frame: Promised) {
        self.log.expected.lock().unwrap().push(Expected {
            started: answer.started,
            answered: Instant::now(),
            frame,
        });
    }

    async fn call_with_token(&self, card: i64, lock: i64, allowed: &[u16]) -> Option<Answer> {
        let request = self
            .http
            .patch(format!("{}/cards/{card}", self.base))
            .header("Lock-Token", lock.to_string())
            .json(&json!({ "card": { "content": format!("{} under lock {lock}", self.session) } }));
        self.send(request, "PATCH /cards", allowed).await
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        allowed: &[u16],
    ) -> Option<Answer> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).ok()?;
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        self.send(request, &format!("{method} {path}"), allowed)
            .await
    }

    /// `None` when the instance was unreachable (restarting) or the answer
    /// was not one the step allows (recorded).
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
        allowed: &[u16],
    ) -> Option<Answer> {
        let started = Instant::now();
        let sent = request
            .bearer_auth(&self.token)
            .header("X-Session-ID", &self.session)
            .timeout(Duration::from_secs(20))
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(_) => {
                self.log.unreachable.fetch_add(1, Ordering::Relaxed);
                actix_web::rt::time::sleep(Duration::from_millis(100)).await;
                return None;
            }
        };
        let status = response.status().as_u16();
        *self.log.statuses.lock().unwrap().entry(status).or_default() += 1;
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !allowed.contains(&status) {
            self.log
                .errors
                .lock()
                .unwrap()
                .push(format!("{what} on {}: {status} {body}", self.base));
            return None;
        }
        Some(Answer {
            status,
            body,
            started,
        })
    }
}

/// A tab of the case on one instance, keeping every frame.
struct Watcher {
    name: &'static str,
    welcomed: Instant,
    /// When its instance was told to stop.
    closing: Option<Instant>,
    frames: Arc<Mutex<Vec<Value>>>,
}

impl Watcher {
    async fn open(base: &str, token: &str, name: &'static str) -> Watcher {
        let url = format!(
            "{}/cases/{CASE}/edits?token={token}&sessionId={name}",
            base.replacen("http", "ws", 1)
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("edits channel");
        let welcome = socket.next().await.expect("a frame").expect("welcome");
        let Message::Text(text) = welcome else {
            panic!("{name}: the first frame is not text")
        };
        let welcome: Value = serde_json::from_str(text.as_str()).expect("JSON");
        assert_eq!(welcome["type"], "welcome", "{name}: {welcome}");
        let frames = Arc::new(Mutex::new(Vec::new()));
        let kept = frames.clone();
        actix_web::rt::spawn(async move {
            // Reading answers the server's pings.
            while let Some(Ok(message)) = socket.next().await {
                if let Message::Text(text) = message {
                    if let Ok(frame) = serde_json::from_str::<Value>(text.as_str()) {
                        kept.lock().unwrap().push(frame);
                    }
                }
            }
        });
        Watcher {
            name,
            welcomed: Instant::now(),
            closing: None,
            frames,
        }
    }
}

/// Locks granted on a record while another lock held it, from one tab's
/// frames in the order they came (commit order per case).
fn double_grants(frames: &[Value]) -> Vec<String> {
    let mut held: HashMap<String, String> = HashMap::new();
    let mut found = Vec::new();
    for frame in frames {
        let watchable = &frame["watchable"];
        if watchable["type"] != "Lock" {
            continue;
        }
        let record = format!(
            "{}/{}",
            watchable["lockable"]["type"], watchable["lockable"]["param"]
        );
        let lock = watchable["param"].to_string();
        match frame["type"].as_str() {
            Some("create") => {
                if let Some(other) = held.insert(record.clone(), lock.clone()) {
                    found.push(format!(
                        "{record}: lock {lock} granted while {other} held it"
                    ));
                }
            }
            Some("destroy") if held.get(&record) == Some(&lock) => {
                held.remove(&record);
            }
            _ => {}
        }
    }
    found
}
