//! Test harness: a real baton server on 127.0.0.1 over a fresh SQLite file or
//! a fresh PostgreSQL database (when `BATON_TEST_POSTGRES_URL` is set), plus
//! helpers to make users, cases and requests.
#![allow(dead_code)]

pub mod fault_proxy;
pub mod line;
pub mod listening;
pub mod records;
pub mod storm;

use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use baton::auth::password;
use baton::config::Settings;
use baton::models::Role;
use baton::models::{Case, CaseId, Membership, Place, StoredRecord, User, UserId};
use baton::state::AppState;
use diesel::connection::SimpleConnection;
use diesel::Connection;
use reqwest::Method;
use serde_json::{json, Value};

/// Creates a record of a declared type of the schema in force, its fields
/// checked as a create checks them; returns its id.
pub fn plant(
    tx: &mut baton::db::Tx,
    type_name: &str,
    place: Place,
    fields: Value,
) -> Result<i64, baton::error::AppError> {
    let ty = baton::schema::in_force()
        .get(type_name)
        .unwrap_or_else(|| panic!("{type_name} is not declared"));
    let fields = ty
        .check_create(fields.as_object().expect("fields as an object"))
        .unwrap_or_else(|_| panic!("fields that fit {type_name}"));
    let (record, _) = StoredRecord::create(tx.conn, ty, place, fields, None, tx.now)?;
    Ok(record.id.get())
}

/// Generates one test per backend, SQLite and PostgreSQL.
///
/// - `on_both_backends!(FIXTURE => name, …)`: each `async fn name(fixture)`
///   is handed what `FIXTURE(backend)` starts (an `Option`, `None` where
///   PostgreSQL is not configured), e.g. `TestApp::start` or
///   `|backend| TestApp::start_with(backend, short_lifetimes)`;
/// - `on_both_backends!(name, …)`: each `async fn name(backend: Backend)`
///   starts what it needs itself (two instances, a server process).
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[actix_web::test]
                async fn sqlite() {
                    super::$name($crate::common::Backend::Sqlite).await
                }

                #[actix_web::test]
                #[cfg_attr(not(baton_postgres_tests), ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it")]
                async fn postgres() {
                    super::$name($crate::common::Backend::Postgres).await
                }
            }
        )*
    };
    ($fixture:expr => $($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[actix_web::test]
                async fn sqlite() {
                    let backend = $crate::common::Backend::Sqlite;
                    let fixture = ($fixture)(backend).await;
                    super::$name($crate::common::started(fixture, backend)).await
                }

                #[actix_web::test]
                #[cfg_attr(not(baton_postgres_tests), ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it")]
                async fn postgres() {
                    let backend = $crate::common::Backend::Postgres;
                    let Some(fixture) = ($fixture)(backend).await else {
                        // Not configured: the test is ignored unless asked for.
                        assert!(
                            std::env::var_os("BATON_TEST_POSTGRES_URL").is_none(),
                            "the fixture did not start on the configured PostgreSQL"
                        );
                        return;
                    };
                    super::$name(fixture).await
                }
            }
        )*
    };
}

/// A fixture on SQLite, which needs nothing configured: it must start.
pub fn started<T>(fixture: Option<T>, backend: Backend) -> T {
    fixture.unwrap_or_else(|| panic!("the fixture did not start on {backend:?}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A server on the schema file `schema` with one case, `slug`, of four
/// people: Mia manages it, Bob and Carol edit it, Rita reads it.
pub struct Team {
    pub app: TestApp,
    pub mia: TestUser,
    pub bob: TestUser,
    pub carol: TestUser,
    pub rita: TestUser,
    pub slug: String,
}

impl Team {
    pub async fn start(backend: Backend, schema: &str, slug: &str) -> Option<Team> {
        let app = TestApp::on_schema(backend, schema).await?;
        let mia = app.user("Mia").await;
        let bob = app.user("Bob").await;
        let carol = app.user("Carol").await;
        let rita = app.user("Rita").await;
        let members = [
            (&mia, Role::Manager),
            (&bob, Role::Editor),
            (&carol, Role::Editor),
            (&rita, Role::Reader),
        ];
        let case = app.case_only(slug, &members).await;
        Some(Team {
            app,
            mia,
            bob,
            carol,
            rita,
            slug: case.slug,
        })
    }
}

pub const SECRET: &[u8] = b"test-secret-test-secret-test-secret";

/// A database that exists for one test and is removed after it.
pub enum TestDb {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDb {
    /// `None` for PostgreSQL when no test server is configured.
    pub fn create(backend: Backend) -> Option<(TestDb, String)> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = dir.path().join("baton.sqlite3").display().to_string();
                Some((TestDb::Sqlite(dir), url))
            }
            Backend::Postgres => {
                let Ok(admin_url) = std::env::var("BATON_TEST_POSTGRES_URL") else {
                    eprintln!("BATON_TEST_POSTGRES_URL is not set: PostgreSQL variant not run");
                    return None;
                };
                let name = format!("baton_test_{}", uuid::Uuid::new_v4().simple());
                let mut conn = diesel::PgConnection::establish(&admin_url)
                    .expect("connect to BATON_TEST_POSTGRES_URL");
                conn.batch_execute(&format!("CREATE DATABASE {name}"))
                    .expect("create test database");
                let (base, _) = admin_url
                    .rsplit_once('/')
                    .expect("postgres URL with a database");
                let url = format!("{base}/{name}");
                Some((TestDb::Postgres { admin_url, name }, url))
            }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let TestDb::Postgres { admin_url, name } = self {
            if let Ok(mut conn) = diesel::PgConnection::establish(admin_url) {
                let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// Settings for tests: short lifetimes stay long unless a test shortens them.
pub fn test_settings(url: &str) -> Settings {
    let mut settings = Settings::defaults(url);
    settings.workers = Some(2);
    settings.database.db_pool_size = 8;
    settings
}

/// Short lock lifetimes for tests that watch leases run out: a lease of
/// 1.2 s, a beat every 250 ms (room for a loaded machine: two missed pongs
/// mean a dead tab), a grace of 500 ms, the reaper every 50 ms.
pub fn short_lifetimes(s: &mut Settings) {
    s.lock_ttl = Duration::from_millis(1200);
    s.heartbeat_interval = Duration::from_millis(250);
    s.disconnect_grace = Duration::from_millis(500);
    s.reaper_interval = Duration::from_millis(50);
}

pub struct TestApp {
    pub base: String,
    pub state: AppState,
    pub http: reqwest::Client,
    pub backend: Backend,
    pub db_url: String,
    server: actix_web::dev::ServerHandle,
    _db: TestDb,
}

impl TestApp {
    pub async fn start(backend: Backend) -> Option<TestApp> {
        Self::start_with(backend, |_| {}).await
    }

    /// A token for the user with this email (a demo person, say).
    pub async fn signed_in(&self, email: &str) -> TestUser {
        let jwt = self.state.jwt.clone();
        let email = email.to_owned();
        self.state
            .db
            .write(None, move |tx| {
                let user = User::find_by_email(tx.conn, &email)?
                    .unwrap_or_else(|| panic!("no user has the email {email}"));
                let token = baton::auth::tokens::issue(tx.conn, &jwt, user.id, tx.now)?;
                Ok::<_, baton::error::AppError>(TestUser {
                    token,
                    id: user.id.get(),
                    email: user.email.unwrap_or_default(),
                    session: None,
                })
            })
            .await
            .expect("a token for the user")
    }

    /// A server on the schema file `schema` (a path).
    pub async fn on_schema(backend: Backend, schema: &str) -> Option<TestApp> {
        let schema = std::path::PathBuf::from(schema);
        Self::start_with(backend, move |s| s.database.schema = Some(schema)).await
    }

    pub async fn start_with(
        backend: Backend,
        tweak: impl FnOnce(&mut Settings),
    ) -> Option<TestApp> {
        let (db, url) = TestDb::create(backend)?;
        let mut settings = test_settings(&url);
        tweak(&mut settings);
        let state = baton::server::build_state(settings, SECRET).expect("build state");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = baton::server::start(state.clone(), listener).expect("start server");
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Some(TestApp {
            base,
            state,
            http: reqwest::Client::new(),
            backend,
            db_url: url,
            server: handle,
            _db: db,
        })
    }

    /// A user (not an admin) with a valid token.
    pub async fn user(&self, name: &str) -> TestUser {
        self.make_user(name, false).await
    }

    pub async fn admin(&self, name: &str) -> TestUser {
        self.make_user(name, true).await
    }

    async fn make_user(&self, name: &str, admin: bool) -> TestUser {
        let email = format!("{}@example.com", name.to_lowercase());
        let hash = password_hash().to_owned();
        let name = name.to_owned();
        let jwt = self.state.jwt.clone();
        let (user, token) = self
            .state
            .db
            .write(None, move |tx| {
                let user = User::create(tx.conn, &email, &name, &hash, admin, tx.now)?;
                let token = baton::auth::tokens::issue(tx.conn, &jwt, user.id, tx.now)?;
                Ok::<_, baton::error::AppError>((user, token))
            })
            .await
            .expect("create user");
        TestUser {
            token,
            id: user.id.get(),
            email: user.email.unwrap_or_default(),
            session: None,
        }
    }

    /// A case with members in the given roles and no records (for any
    /// schema); the fixture's record ids are 0.
    pub async fn case_only(&self, slug: &str, members: &[(&TestUser, Role)]) -> Fixture {
        let slug = slug.to_owned();
        let members: Vec<(i64, Role)> = members.iter().map(|(u, r)| (u.id, *r)).collect();
        self.state
            .db
            .write(None, move |tx| {
                let case = Case::create(
                    tx.conn,
                    &slug,
                    "A case",
                    baton::models::CaseMaker::Person,
                    tx.now,
                )?;
                for (user_id, role) in members {
                    Membership::create(tx.conn, case.id, UserId(user_id), role, tx.now)?;
                }
                Ok::<_, baton::error::AppError>(Fixture {
                    case_id: case.id.get(),
                    slug,
                    page_id: 0,
                    card_id: 0,
                    edgenote_id: 0,
                })
            })
            .await
            .expect("create case")
    }

    /// A case with members in the given roles, one page with one card, and
    /// one edgenote (the casebook schema).
    pub async fn case(&self, slug: &str, members: &[(&TestUser, Role)]) -> Fixture {
        let bare = self.case_only(slug, members).await;
        let case_id = CaseId(bare.case_id);
        let (page_id, card_id, edgenote_id) = self
            .state
            .db
            .write(None, move |tx| {
                let at_top = Place {
                    case_id,
                    parent_id: None,
                };
                let page = plant(tx, "Page", at_top, json!({"title": "Page one"}))?;
                let on_page = Place {
                    case_id,
                    parent_id: Some(page),
                };
                let card = plant(tx, "Card", on_page, json!({"content": "first draft"}))?;
                let note = plant(
                    tx,
                    "Edgenote",
                    at_top,
                    json!({"slug": "note", "caption": "A note", "content": "body"}),
                )?;
                Ok::<_, baton::error::AppError>((page, card, note))
            })
            .await
            .expect("create the case's records");
        Fixture {
            page_id,
            card_id,
            edgenote_id,
            ..bare
        }
    }

    /// Another card on the fixture's page.
    pub async fn card(&self, fixture: &Fixture, content: &str) -> i64 {
        let (case_id, page_id, content) = (fixture.case_id, fixture.page_id, content.to_owned());
        self.state
            .db
            .write(None, move |tx| {
                let place = Place {
                    case_id: CaseId(case_id),
                    parent_id: Some(page_id),
                };
                plant(tx, "Card", place, json!({ "content": content }))
            })
            .await
            .expect("create card")
    }

    pub fn req(&self, method: Method, path: &str) -> Req {
        self.req_at(&self.base, method, path)
    }

    /// A request to another instance serving the same database.
    pub fn req_at(&self, base: &str, method: Method, path: &str) -> Req {
        Req {
            builder: self.http.request(method, format!("{base}{path}")),
        }
    }

    pub fn get(&self, path: &str) -> Req {
        self.req(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> Req {
        self.req(Method::POST, path)
    }

    pub fn patch(&self, path: &str) -> Req {
        self.req(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> Req {
        self.req(Method::DELETE, path)
    }

    /// The audit trail of a case, oldest first, as (action, lock id, actor, holder).
    pub async fn audit(&self, case_id: i64) -> Vec<(String, i64, Option<i64>, i64)> {
        let mut events = self
            .state
            .db
            .read(move |conn| {
                baton::models::LockEvent::of_case(conn, CaseId(case_id), 100_000, None)
                    .map_err(baton::error::AppError::from)
            })
            .await
            .expect("read audit");
        events.reverse();
        events
            .into_iter()
            .map(|e| {
                (
                    e.action,
                    e.lock_id.get(),
                    e.actor_id.map(UserId::get),
                    e.holder_id.get(),
                )
            })
            .collect()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop accepting; the runtime of the test ends the rest.
        let handle = self.server.clone();
        actix_web::rt::spawn(async move { handle.stop(false).await });
    }
}

fn password_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| password::hash("password1").unwrap())
}

#[derive(Clone, Debug)]
pub struct TestUser {
    pub token: String,
    pub id: i64,
    pub email: String,
    pub session: Option<String>,
}

impl TestUser {
    /// The same user in a (new) browser tab.
    pub fn tab(&self, session: &str) -> TestUser {
        TestUser {
            session: Some(session.to_owned()),
            ..self.clone()
        }
    }
}

#[derive(Clone, Debug)]
pub struct Fixture {
    pub case_id: i64,
    pub slug: String,
    pub page_id: i64,
    pub card_id: i64,
    pub edgenote_id: i64,
}

pub struct Req {
    builder: reqwest::RequestBuilder,
}

impl Req {
    /// Authenticates as `user`, in their tab if they have one.
    pub fn by(mut self, user: &TestUser) -> Req {
        self.builder = self.builder.bearer_auth(&user.token);
        if let Some(session) = &user.session {
            self.builder = self.builder.header("X-Session-ID", session);
        }
        self
    }

    pub fn header(mut self, name: &str, value: impl AsRef<str>) -> Req {
        self.builder = self.builder.header(name, value.as_ref());
        self
    }

    pub fn json(mut self, body: Value) -> Req {
        self.builder = self.builder.json(&body);
        self
    }

    pub fn body(mut self, content_type: &str, body: impl Into<reqwest::Body>) -> Req {
        self.builder = self.builder.header("content-type", content_type).body(body);
        self
    }

    pub async fn send(self) -> Resp {
        let response = self
            .builder
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .expect("request failed");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"))
        };
        Resp {
            status,
            body,
            headers,
        }
    }
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Resp {
    /// Asserts the status, printing the body when it differs.
    #[track_caller]
    pub fn expect(self, status: u16) -> Resp {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        self
    }

    /// Asserts an error envelope with this status and code.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> Resp {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(
            self.body["error"]["code"], code,
            "unexpected error: {}",
            self.body
        );
        assert!(
            self.body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "error without a message: {}",
            self.body
        );
        self
    }

    pub fn etag(&self) -> Option<String> {
        self.headers
            .get("etag")
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

// ---- The usual people, and locks ----

/// The people of most scenarios, around case `c` ([`TestApp::case`]'s page,
/// card and edgenote): Mia manages it, Bob and Carol edit it, Rita reads it;
/// Eve is no member and Root is a site admin.
pub struct Cast {
    pub mia: TestUser,
    pub bob: TestUser,
    pub carol: TestUser,
    pub rita: TestUser,
    pub eve: TestUser,
    pub root: TestUser,
    pub case: Fixture,
}

impl TestApp {
    /// A server with the [`Cast`] on case `c`; `None` as [`TestApp::start`].
    pub async fn with_cast(backend: Backend) -> Option<(TestApp, Cast)> {
        let app = Self::start(backend).await?;
        let cast = app.cast().await;
        Some((app, cast))
    }

    /// The [`Cast`], on a new case `c`.
    pub async fn cast(&self) -> Cast {
        let mia = self.user("Mia").await;
        let bob = self.user("Bob").await;
        let carol = self.user("Carol").await;
        let rita = self.user("Rita").await;
        let eve = self.user("Eve").await;
        let root = self.admin("Root").await;
        let case = self
            .case(
                "c",
                &[
                    (&mia, Role::Manager),
                    (&bob, Role::Editor),
                    (&carol, Role::Editor),
                    (&rita, Role::Reader),
                ],
            )
            .await;
        Cast {
            mia,
            bob,
            carol,
            rita,
            eve,
            root,
            case,
        }
    }

    /// `POST /locks` with `body` as `user`, expecting `status`.
    pub async fn lock_expect(&self, user: &TestUser, body: Value, status: u16) -> Resp {
        self.post("/locks")
            .by(user)
            .json(body)
            .send()
            .await
            .expect(status)
    }

    /// `POST /locks` with `body` as `user`, expecting this error.
    pub async fn lock_error(&self, user: &TestUser, body: Value, status: u16, code: &str) -> Resp {
        self.post("/locks")
            .by(user)
            .json(body)
            .send()
            .await
            .expect_error(status, code)
    }

    /// Locks an unlocked record as `user` (201); the new lock.
    pub async fn lock(&self, user: &TestUser, lockable_type: &str, id: i64) -> Value {
        self.lock_expect(user, lock_body(lockable_type, id), 201)
            .await
            .body
    }

    /// [`TestApp::lock`] through the instance at `base` (another process).
    pub async fn lock_at(
        &self,
        base: &str,
        user: &TestUser,
        lockable_type: &str,
        id: i64,
    ) -> Value {
        self.req_at(base, Method::POST, "/locks")
            .by(user)
            .json(lock_body(lockable_type, id))
            .send()
            .await
            .expect(201)
            .body
    }

    /// Takes a record over as `user`, granted with a new lock (201); the lock.
    pub async fn takeover(&self, user: &TestUser, lockable_type: &str, id: i64) -> Value {
        self.lock_expect(user, takeover_body(lockable_type, id), 201)
            .await
            .body
    }

    /// `DELETE /locks/{id}` as `user`, expecting 204.
    pub async fn release(&self, user: &TestUser, lock_id: i64) {
        self.delete(&format!("/locks/{lock_id}"))
            .by(user)
            .send()
            .await
            .expect(204);
    }

    /// `GET /locks/{id}` as `user` answers 404: the lock has ended.
    pub async fn assert_lock_gone(&self, user: &TestUser, lock_id: i64) {
        self.get(&format!("/locks/{lock_id}"))
            .by(user)
            .send()
            .await
            .expect_error(404, "not_found");
    }

    /// The ids of the locks `GET /locks?case=:slug` lists to `user`.
    pub async fn lock_ids_of_case(&self, user: &TestUser, slug: &str) -> Vec<i64> {
        self.get(&format!("/locks?case={slug}"))
            .by(user)
            .send()
            .await
            .expect(200)
            .body
            .as_array()
            .expect("a list")
            .iter()
            .map(id)
            .collect()
    }
}

/// The `id` of a JSON resource (a lock, a card, …).
#[track_caller]
pub fn id(resource: &Value) -> i64 {
    resource["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no numeric id in {resource}"))
}

/// `{"lock": {"lockableType": …, "lockableParam": …}}`
pub fn lock_body(lockable_type: &str, id: i64) -> Value {
    serde_json::json!({ "lock": { "lockableType": lockable_type, "lockableParam": id.to_string() } })
}

pub fn takeover_body(lockable_type: &str, id: i64) -> Value {
    serde_json::json!({ "lock": { "lockableType": lockable_type, "lockableParam": id.to_string(), "takeover": true } })
}

// ---- WebSocket tabs ----

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

pub type RawSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A browser tab's edits channel, read continuously (so pings are answered)
/// by a background task that forwards every JSON text frame.
pub struct Tab {
    pub session_id: String,
    frames: tokio::sync::mpsc::UnboundedReceiver<Value>,
    close: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestApp {
    pub fn edits_url(&self, slug: &str, user: &TestUser) -> String {
        self.edits_url_at(&self.base, slug, user)
    }

    pub fn edits_url_at(&self, base: &str, slug: &str, user: &TestUser) -> String {
        let ws = base.replacen("http", "ws", 1);
        let mut url = format!("{ws}/cases/{slug}/edits?token={}", user.token);
        if let Some(session) = &user.session {
            url.push_str(&format!("&sessionId={session}"));
        }
        url
    }

    /// Connects without ever reading: a tab that stops answering pings.
    pub async fn raw_socket(&self, slug: &str, user: &TestUser) -> RawSocket {
        self.raw_socket_at(&self.base, slug, user).await
    }

    pub async fn raw_socket_at(&self, base: &str, slug: &str, user: &TestUser) -> RawSocket {
        let (socket, _) = tokio_tungstenite::connect_async(self.edits_url_at(base, slug, user))
            .await
            .expect("WebSocket connect");
        socket
    }

    /// The HTTP status a refused upgrade answers with.
    pub async fn refused_status(&self, url: &str) -> u16 {
        match tokio_tungstenite::connect_async(url).await {
            Ok(_) => panic!("the upgrade was accepted"),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                response.status().as_u16()
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }

    /// Opens a tab and returns it after its welcome.
    pub async fn open_tab(&self, slug: &str, user: &TestUser) -> (Tab, Value) {
        self.open_tab_at(&self.base, slug, user).await
    }

    /// Opens a tab on another instance serving the same database.
    pub async fn open_tab_at(&self, base: &str, slug: &str, user: &TestUser) -> (Tab, Value) {
        let socket = self.raw_socket_at(base, slug, user).await;
        let (frames_tx, frames) = tokio::sync::mpsc::unbounded_channel();
        let (close_tx, mut close_rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let mut socket = socket;
            loop {
                tokio::select! {
                    _ = &mut close_rx => {
                        let _ = socket.close(None).await;
                        // Drain until the server's close arrives.
                        while let Some(Ok(_)) = socket.next().await {}
                        return;
                    }
                    message = socket.next() => match message {
                        Some(Ok(Message::Text(text))) => {
                            let _ = frames_tx.send(serde_json::from_str(text.as_str()).expect("JSON frame"));
                        }
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        Some(Ok(_)) => {} // pings are answered by the library while reading
                    }
                }
            }
        });
        let mut tab = Tab {
            session_id: user.session.clone().unwrap_or_default(),
            frames,
            close: Some(close_tx),
        };
        let welcome = tab.next().await;
        assert_eq!(welcome["type"], "welcome", "first frame: {welcome}");
        tab.session_id = welcome["sessionId"].as_str().unwrap().to_owned();
        (tab, welcome)
    }
}

impl Tab {
    /// The next frame (5 s at most).
    pub async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(5), self.frames.recv())
            .await
            .expect("no frame within 5 s")
            .expect("channel closed")
    }

    /// The next frame that matches, skipping others (10 s at most).
    pub async fn next_where(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let frame = tokio::time::timeout_at(deadline, self.frames.recv())
                .await
                .unwrap_or_else(|_| panic!("no {what} within 10 s"))
                .unwrap_or_else(|| panic!("channel closed before {what}"));
            if matches(&frame) {
                return frame;
            }
        }
    }

    /// Every frame up to and including the first that matches (`limit` at
    /// most): for tests that check everything a tab saw.
    pub async fn collect_until(
        &mut self,
        what: &str,
        limit: Duration,
        matches: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut seen = Vec::new();
        loop {
            let frame = tokio::time::timeout_at(deadline, self.frames.recv())
                .await
                .unwrap_or_else(|_| panic!("no {what} within {limit:?}"))
                .unwrap_or_else(|| panic!("channel closed before {what}"));
            let done = matches(&frame);
            seen.push(frame);
            if done {
                return seen;
            }
        }
    }

    /// The next change frame (create/update/destroy), skipping presence.
    pub async fn next_change(&mut self) -> Value {
        self.next_where("change", |f| f["type"] != "presence").await
    }

    /// Whether the server closed the channel (within 5 s).
    pub async fn closed_by_server(&mut self) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            match tokio::time::timeout_at(deadline, self.frames.recv()).await {
                Ok(None) => return true,
                Ok(Some(_)) => continue,
                Err(_) => return false,
            }
        }
    }

    /// Closes the tab the way a browser does (close frame).
    pub fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
    }
}

// ---- baton as a separate process ----

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `baton serve` child process; killed (SIGKILL) when dropped.
pub struct ServerProcess {
    pub base: String,
    pub child: std::process::Child,
}

impl ServerProcess {
    /// Starts `baton serve` on a free port and waits until it answers.
    pub async fn spawn(db_url: &str, instance: &str, env: &[(&str, &str)]) -> ServerProcess {
        Self::spawn_with(db_url, instance, env, &[], std::process::Stdio::null()).await
    }

    /// Like [`ServerProcess::spawn`], with more `serve` arguments and its
    /// log (stderr) going to `log`.
    pub async fn spawn_with(
        db_url: &str,
        instance: &str,
        env: &[(&str, &str)],
        args: &[&str],
        log: impl Into<std::process::Stdio>,
    ) -> ServerProcess {
        let binary = std::path::Path::new(env!("CARGO_BIN_EXE_baton"));
        Self::spawn_binary(binary, free_port(), db_url, instance, env, args, log).await
    }

    /// `serve` of another build of baton (a previous release), on `port`.
    pub async fn spawn_binary(
        binary: &std::path::Path,
        port: u16,
        db_url: &str,
        instance: &str,
        env: &[(&str, &str)],
        args: &[&str],
        log: impl Into<std::process::Stdio>,
    ) -> ServerProcess {
        let mut command = std::process::Command::new(binary);
        command
            .arg("serve")
            .args(args)
            .env("DATABASE_URL", db_url)
            .env("BATON_JWT_SECRET", std::str::from_utf8(SECRET).unwrap())
            .env("BATON_BIND", format!("127.0.0.1:{port}"))
            .env("BATON_INSTANCE_ID", instance)
            .env("BATON_WORKERS", "2")
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(log);
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("spawn baton serve");
        let process = ServerProcess {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = reqwest::get(format!("{}/healthz", process.base)).await {
                if r.status() == 200 {
                    return process;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "baton serve did not come up"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGTERM: the graceful shutdown.
    pub fn terminate(&self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: sends a signal to our own child process; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }

    /// Waits for the process to exit (at most `limit`); its exit status.
    pub async fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// `kill -9`: no goodbye, no cleanup.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs a `baton` command (not `serve`) on `db_url`, with the built-in schema.
pub fn run_baton(db_url: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("RUST_LOG", "warn")
        .env_remove("BATON_SCHEMA")
        .output()
        .expect("run baton")
}

/// A command's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The exit status, stdout and stderr of a command's run, for messages.
pub fn described(output: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}
