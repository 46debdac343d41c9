//! The HTTP floor: the least any lock service on actix-web must spend to
//! answer the bench's requests. A bare actix-web server (as many workers as
//! baton's in the bench, TCP_NODELAY as baton's) that parses the same
//! requests, checks the same bearer token's signature, runs each request's
//! raw statements, prepared, and answers with the status baton gives. It
//! does nothing else: no revocation or role check (but where the statement
//! itself answers it), no audit row, no event, no JSON view of the lock.
//!
//! - `POST /locks`: `INSERT … SELECT` the record's case `ON CONFLICT
//!   (lockable_type, lockable_id) DO UPDATE … WHERE` the holder is the same
//!   user and tab `RETURNING id` (re-entrant for the same tab, nothing for
//!   anyone else): 201 `{"id": …}`, or 409.
//! - `DELETE /locks/:id`: `DELETE … WHERE id AND user_id`: 204, or 404.
//! - `PATCH /<plural>/:id`: the bench's raw guarded update (the record's
//!   row locked and read, the lock check, the versioned UPDATE, one
//!   transaction), the body's fields merged into the record's: 200, or 423.
//! - `POST /guard` (API key): one query that finds the key, the case, the
//!   record, the user's role on the case and any lock on the record or deep
//!   lock in the case: 204, 403 or 423.
//!
//! PostgreSQL: tokio-postgres, 16 connections (half on each worker, so a
//! request never leaves its worker's thread), each statement prepared once
//! per connection. SQLite: one connection with the pragmas of baton's
//! writer (WAL, the server's `synchronous`, no automatic checkpoint: a
//! thread checkpoints every 200 ms as baton's does), each statement
//! prepared once, run on the worker's own thread under a mutex: a
//! statement takes microseconds, less than a hand-off to another thread.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::net::TcpListener;
use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use actix_web::http::header::{AUTHORIZATION, ETAG};
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use baton::auth::JwtKeys;
use libsqlite3_sys as ffi;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::{OnceCell, Semaphore};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// A statement parameter for tokio-postgres.
type PgParam<'a> = dyn tokio_postgres::types::ToSql + Sync + 'a;

/// PostgreSQL connections per worker: 16 in all with baton's 2 workers.
const PG_CONNECTIONS_PER_WORKER: usize = 8;
/// As baton's SQLite checkpointer (`src/db/writer.rs`).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// What the floor server needs to know about the bench's database.
#[derive(Clone)]
pub struct FloorSetup {
    /// The database baton serves: a SQLite file or a PostgreSQL URL.
    pub database_url: String,
    pub postgres: bool,
    /// SQLite's `synchronous`, as baton's writer has it (`NORMAL`, `FULL`).
    pub sqlite_synchronous: &'static str,
    /// baton's signing keys: the floor checks the same bearer tokens.
    pub jwt: JwtKeys,
    /// The record type the clients lock and save, and its URL plural.
    pub type_name: String,
    pub plural: String,
    /// The lease a new lock gets.
    pub ttl: Duration,
    pub workers: usize,
}

/// Starts the floor server on `listener` in the current actix system; stop
/// it through its handle.
pub fn start(setup: FloorSetup, listener: TcpListener) -> Result<actix_web::dev::Server, BoxError> {
    let sql = Arc::new(Sql::new(&setup));
    let sqlite = match setup.postgres {
        true => None,
        false => Some(Arc::new(SqliteFloor::open(&setup, &sql)?)),
    };
    let workers = setup.workers;
    let setup = Arc::new(setup);
    let server = HttpServer::new(move || {
        let backend = match &sqlite {
            Some(lite) => Backend::Sqlite(
                lite.clone(),
                Rc::new(Lite::connect(&setup, &sql).expect("the floor's SQLite reader")),
            ),
            // Each worker opens its connections at its first request (the
            // factory cannot wait), so they live on its thread.
            None => Backend::Postgres(Rc::new(PgWorker::default())),
        };
        App::new()
            .app_data(web::Data::from(setup.clone()))
            .app_data(web::Data::from(sql.clone()))
            .app_data(backend)
            .route("/locks", web::post().to(acquire))
            .route("/locks/{id}", web::delete().to(release))
            .route(&format!("/{}/{{id}}", setup.plural), web::patch().to(save))
            .route("/guard", web::post().to(guard))
    })
    .disable_signals()
    .tcp_nodelay(true)
    .workers(workers)
    .listen(listener)?
    .run();
    Ok(server)
}

// ---- the requests ----

#[derive(Deserialize)]
struct LockBody {
    lock: LockFields,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LockFields {
    lockable_type: String,
    lockable_param: Param,
}

/// A record's id, as a number or a decimal string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Param {
    Number(i64),
    Text(String),
}

impl Param {
    fn id(&self) -> Option<i64> {
        match self {
            Param::Number(n) => Some(*n),
            Param::Text(s) => s.parse().ok(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GuardBody {
    lockable_type: String,
    lockable_param: Param,
    case: String,
    user_external_id: String,
    session_id: Option<String>,
}

/// The caller's user id and tab, from a bearer token with a valid signature
/// and the `X-Session-ID` header.
fn caller(req: &HttpRequest, jwt: &JwtKeys) -> Option<(i64, String)> {
    let claims = jwt.verify(bearer(req)?).ok()?;
    let session = req.headers().get("x-session-id")?.to_str().ok()?;
    Some((claims.user_id.get(), session.to_owned()))
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
}

fn code(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn status(status: u16) -> HttpResponse {
    HttpResponse::build(code(status)).finish()
}

fn failed(e: String) -> HttpResponse {
    HttpResponse::InternalServerError().body(e)
}

fn json(status: u16, body: String) -> HttpResponse {
    HttpResponse::build(code(status))
        .content_type("application/json")
        .body(body)
}

fn backend(req: &HttpRequest) -> &Backend {
    req.app_data::<Backend>()
        .expect("the floor's app has its backend")
}

async fn acquire(
    req: HttpRequest,
    setup: web::Data<FloorSetup>,
    sql: web::Data<Sql>,
    body: web::Json<LockBody>,
) -> HttpResponse {
    let Some((user, session)) = caller(&req, &setup.jwt) else {
        return status(401);
    };
    let lock = &body.lock;
    let (Some(id), true) = (
        lock.lockable_param.id(),
        lock.lockable_type == setup.type_name,
    ) else {
        return status(422);
    };
    let ty = setup.type_name.as_str();
    let taken = match backend(&req) {
        Backend::Postgres(worker) => match worker.checkout(&setup, &sql).await {
            Ok(conn) => conn
                .client
                .query_opt(&conn.acquire, &[&ty, &id, &user, &session])
                .await
                .map(|row| row.map(|row| row.get::<_, i64>(0)))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        },
        Backend::Sqlite(lite, _) => {
            let (now, expires) = sqlite_times(setup.ttl);
            lite.with(|c| {
                let binds = [
                    Bind::Text(ty),
                    Bind::Int(id),
                    Bind::Int(user),
                    Bind::Text(&session),
                    Bind::Text(&now),
                    Bind::Text(&expires),
                ];
                Ok(c.run(Stmt::Acquire, &binds)?
                    .first()
                    .and_then(|r| r[0].int()))
            })
            .await
        }
    };
    match taken {
        Ok(Some(lock)) => json(201, format!("{{\"id\":{lock}}}")),
        Ok(None) => status(409),
        Err(e) => failed(e),
    }
}

async fn release(
    req: HttpRequest,
    setup: web::Data<FloorSetup>,
    sql: web::Data<Sql>,
    path: web::Path<i64>,
) -> HttpResponse {
    let Some((user, _)) = caller(&req, &setup.jwt) else {
        return status(401);
    };
    let id = path.into_inner();
    let deleted = match backend(&req) {
        Backend::Postgres(worker) => match worker.checkout(&setup, &sql).await {
            Ok(conn) => conn
                .client
                .execute(&conn.release, &[&id, &user])
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        },
        Backend::Sqlite(lite, _) => {
            lite.with(|c| {
                c.run(Stmt::Release, &[Bind::Int(id), Bind::Int(user)])?;
                Ok(c.changes())
            })
            .await
        }
    };
    match deleted {
        Ok(0) => status(404),
        Ok(_) => status(204),
        Err(e) => failed(e),
    }
}

/// What a guarded save came to.
enum Saved {
    Version(i64),
    NotFound,
    Locked,
}

async fn save(
    req: HttpRequest,
    setup: web::Data<FloorSetup>,
    sql: web::Data<Sql>,
    path: web::Path<i64>,
    body: web::Json<Map<String, Value>>,
) -> HttpResponse {
    let Some((user, session)) = caller(&req, &setup.jwt) else {
        return status(401);
    };
    let id = path.into_inner();
    // `{"<type>": {<fields>}}`: one object of fields.
    let Some(Value::Object(changed)) = body.into_inner().into_iter().next().map(|(_, v)| v) else {
        return status(422);
    };
    let ty = setup.type_name.as_str();
    // The stored fields with the changed ones over them.
    let merged = |stored: &str| -> Result<String, String> {
        let mut fields: Map<String, Value> =
            serde_json::from_str(stored).map_err(|e| e.to_string())?;
        fields.extend(changed.clone());
        Ok(Value::Object(fields).to_string())
    };
    let held_by_other = |holder: i64, tab: Option<&str>| holder != user || tab != Some(&session);
    let saved = match backend(&req) {
        Backend::Postgres(worker) => match worker.checkout(&setup, &sql).await {
            Ok(mut conn) => pg_save(&mut conn, ty, id, &merged, &held_by_other).await,
            Err(e) => Err(e),
        },
        Backend::Sqlite(lite, _) => {
            let (now, _) = sqlite_times(setup.ttl);
            lite.with(|c| {
                c.run(Stmt::BeginImmediate, &[])?;
                let outcome = sqlite_save(c, ty, id, &now, &merged, &held_by_other);
                let end = match outcome {
                    Ok(Saved::Version(_)) => Stmt::Commit,
                    _ => Stmt::Rollback,
                };
                c.run(end, &[])?;
                outcome
            })
            .await
        }
    };
    match saved {
        Ok(Saved::Version(version)) => HttpResponse::Ok()
            .content_type("application/json")
            .insert_header((ETAG, format!("\"{version}\"")))
            .body(format!("{{\"id\":{id},\"version\":{version}}}")),
        Ok(Saved::NotFound) => status(404),
        Ok(Saved::Locked) => status(423),
        Err(e) => failed(e),
    }
}

async fn pg_save(
    conn: &mut PgLease<'_>,
    ty: &str,
    id: i64,
    merged: &dyn Fn(&str) -> Result<String, String>,
    held_by_other: &dyn Fn(i64, Option<&str>) -> bool,
) -> Result<Saved, String> {
    let statements = conn.statements.clone();
    let tx = conn.client.transaction().await.map_err(|e| e.to_string())?;
    let Some(record) = tx
        .query_opt(&statements.select_record, &[&ty as &PgParam<'_>, &id])
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(Saved::NotFound);
    };
    let lock = tx
        .query_opt(&statements.select_lock, &[&ty as &PgParam<'_>, &id])
        .await
        .map_err(|e| e.to_string())?;
    if let Some(lock) = lock {
        if held_by_other(lock.get::<_, i64>(0), lock.get::<_, Option<&str>>(1)) {
            return Ok(Saved::Locked);
        }
    }
    let fields = merged(record.get::<_, &str>(1))?;
    let version: i64 = tx
        .query_one(&statements.update, &[&ty as &PgParam<'_>, &id, &fields])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(Saved::Version(version))
}

fn sqlite_save(
    c: &Lite,
    ty: &str,
    id: i64,
    now: &str,
    merged: &dyn Fn(&str) -> Result<String, String>,
    held_by_other: &dyn Fn(i64, Option<&str>) -> bool,
) -> Result<Saved, String> {
    let key = [Bind::Text(ty), Bind::Int(id)];
    let Some(record) = c.run(Stmt::SelectRecord, &key)?.pop() else {
        return Ok(Saved::NotFound);
    };
    if let Some(lock) = c.run(Stmt::SelectLock, &key)?.first() {
        if held_by_other(lock[0].int().unwrap_or(0), lock[1].text()) {
            return Ok(Saved::Locked);
        }
    }
    let fields = merged(record[1].text().unwrap_or("{}"))?;
    let binds = [
        Bind::Text(ty),
        Bind::Int(id),
        Bind::Text(&fields),
        Bind::Text(now),
    ];
    let version = c
        .run(Stmt::Update, &binds)?
        .first()
        .and_then(|r| r[0].int());
    version
        .map(Saved::Version)
        .ok_or_else(|| "the record went away".to_owned())
}

/// What the guard's query gives, one row per lock found (or one with no
/// lock): the user's role on the case, the user's id, the lock's holder and
/// the holder's tab.
type GuardRow = (String, i64, Option<i64>, Option<String>);

async fn guard(
    req: HttpRequest,
    setup: web::Data<FloorSetup>,
    sql: web::Data<Sql>,
    body: web::Json<GuardBody>,
) -> HttpResponse {
    let Some(key) = bearer(&req) else {
        return status(401);
    };
    let Some(id) = body.lockable_param.id() else {
        return status(422);
    };
    let key_hash = baton::auth::api_keys::hash(key);
    let (ty, case, who) = (
        body.lockable_type.as_str(),
        body.case.as_str(),
        body.user_external_id.as_str(),
    );
    let rows: Result<Vec<GuardRow>, String> = match backend(&req) {
        Backend::Postgres(worker) => match worker.checkout(&setup, &sql).await {
            Ok(conn) => conn
                .client
                .query(&conn.guard, &[&ty, &id, &case, &who, &key_hash])
                .await
                .map(|rows| {
                    rows.iter()
                        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                        .collect()
                })
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        },
        Backend::Sqlite(_, reader) => Ok::<_, String>(reader).and_then(|c| {
            let binds = [
                Bind::Text(ty),
                Bind::Int(id),
                Bind::Text(case),
                Bind::Text(who),
                Bind::Text(&key_hash),
            ];
            Ok(c.run(Stmt::Guard, &binds)?
                .into_iter()
                .map(|r| {
                    (
                        r[0].text().unwrap_or_default().to_owned(),
                        r[1].int().unwrap_or(0),
                        r[2].int(),
                        r[3].text().map(str::to_owned),
                    )
                })
                .collect())
        }),
    };
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return failed(e),
    };
    let Some((role, user, ..)) = rows.first() else {
        return status(403);
    };
    if role != "editor" && role != "manager" {
        return status(403);
    }
    let tab = body.session_id.as_deref();
    let locked = rows.iter().any(|(_, _, holder, holder_tab)| {
        holder.is_some_and(|holder| holder != *user || holder_tab.as_deref() != tab)
    });
    status(if locked { 423 } else { 204 })
}

// ---- the statements ----

/// The floor's SQL for one backend.
pub struct Sql {
    acquire: String,
    release: String,
    select_record: String,
    select_lock: String,
    update: String,
    guard: String,
}

impl Sql {
    fn new(setup: &FloorSetup) -> Sql {
        // The same text on both backends but for the clock and row locks:
        // SQLite takes its times as `?5`/`?6`/`?4` and `?N` for `$N`.
        let (now, expires, for_update, for_share) = if setup.postgres {
            let ttl = setup.ttl.as_millis();
            (
                "now()".to_owned(),
                format!("now() + interval '{ttl} milliseconds'"),
                " FOR NO KEY UPDATE",
                " FOR SHARE",
            )
        } else {
            ("$5".to_owned(), "$6".to_owned(), "", "")
        };
        let sql = |text: String| {
            if setup.postgres {
                text
            } else {
                text.replace('$', "?")
            }
        };
        let updated_at = if setup.postgres { "now()" } else { "$4" };
        Sql {
            acquire: sql(format!(
                "INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, \
                 created_at, expires_at, last_activity_at) \
                 SELECT CAST($1 AS TEXT), CAST($2 AS BIGINT), r.case_id, CAST($3 AS BIGINT), \
                 CAST($4 AS TEXT), {now}, {expires}, {now} FROM records r \
                 WHERE r.record_type = $1 AND r.id = $2 \
                 ON CONFLICT (lockable_type, lockable_id) DO UPDATE \
                 SET expires_at = excluded.expires_at, last_activity_at = excluded.last_activity_at \
                 WHERE locks.user_id = excluded.user_id AND locks.session_id = excluded.session_id \
                 RETURNING id"
            )),
            release: sql("DELETE FROM locks WHERE id = $1 AND user_id = $2".to_owned()),
            select_record: sql(format!(
                "SELECT version, fields FROM records WHERE record_type = $1 AND id = $2{for_update}"
            )),
            select_lock: sql(format!(
                "SELECT user_id, session_id FROM locks \
                 WHERE lockable_type = $1 AND lockable_id = $2{for_share}"
            )),
            update: sql(format!(
                "UPDATE records SET fields = $3, version = version + 1, updated_at = {updated_at} \
                 WHERE record_type = $1 AND id = $2 RETURNING version"
            )),
            guard: sql(
                "SELECT m.role, u.id, l.user_id, l.session_id FROM api_keys k \
                 JOIN cases c ON c.slug = $3 \
                 JOIN records r ON r.record_type = $1 AND r.id = $2 AND r.case_id = c.id \
                 JOIN users u ON u.external_id = $4 AND u.deactivated_at IS NULL \
                 JOIN memberships m ON m.case_id = c.id AND m.user_id = u.id \
                 LEFT JOIN locks l ON (l.lockable_type = $1 AND l.lockable_id = $2) \
                   OR (l.deep AND l.case_id = c.id) \
                 WHERE k.key_hash = $5 AND k.revoked_at IS NULL"
                    .to_owned(),
            ),
        }
    }
}

/// The current time and the end of a new lease, as diesel writes a
/// timestamp on SQLite (so baton reads the floor's rows as its own).
fn sqlite_times(ttl: Duration) -> (String, String) {
    let now = chrono::Utc::now().naive_utc();
    let expires = now + chrono::Duration::from_std(ttl).unwrap_or_default();
    let format = "%Y-%m-%d %H:%M:%S%.f";
    (
        now.format(format).to_string(),
        expires.format(format).to_string(),
    )
}

// ---- PostgreSQL ----

#[derive(Clone)]
enum Backend {
    Postgres(Rc<PgWorker>),
    /// The one writer, and this worker's own connection for reads (WAL
    /// lets reads run beside the writer, as baton's pool does).
    Sqlite(Arc<SqliteFloor>, Rc<Lite>),
}

/// One worker's connections, each with its statements prepared.
struct PgWorker {
    opened: OnceCell<()>,
    free: RefCell<Vec<PgConn>>,
    /// One permit per free connection.
    permits: Semaphore,
}

struct PgConn {
    client: tokio_postgres::Client,
    statements: Rc<PgStatements>,
}

struct PgStatements {
    acquire: tokio_postgres::Statement,
    release: tokio_postgres::Statement,
    select_record: tokio_postgres::Statement,
    select_lock: tokio_postgres::Statement,
    update: tokio_postgres::Statement,
    guard: tokio_postgres::Statement,
}

/// A connection checked out of its worker's pool until dropped.
struct PgLease<'a> {
    worker: &'a PgWorker,
    conn: Option<PgConn>,
}

impl std::ops::Deref for PgLease<'_> {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.conn.as_ref().expect("a lease holds its connection")
    }
}

impl std::ops::DerefMut for PgLease<'_> {
    fn deref_mut(&mut self) -> &mut PgConn {
        self.conn.as_mut().expect("a lease holds its connection")
    }
}

impl std::ops::Deref for PgConn {
    type Target = PgStatements;
    fn deref(&self) -> &PgStatements {
        &self.statements
    }
}

impl Drop for PgLease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.worker.free.borrow_mut().push(conn);
            self.worker.permits.add_permits(1);
        }
    }
}

impl Default for PgWorker {
    fn default() -> PgWorker {
        PgWorker {
            opened: OnceCell::new(),
            free: RefCell::new(Vec::new()),
            permits: Semaphore::new(0),
        }
    }
}

impl PgWorker {
    async fn checkout(&self, setup: &FloorSetup, sql: &Sql) -> Result<PgLease<'_>, String> {
        self.opened
            .get_or_try_init(|| async {
                for _ in 0..PG_CONNECTIONS_PER_WORKER {
                    let conn = pg_connect(&setup.database_url, sql).await?;
                    self.free.borrow_mut().push(conn);
                }
                self.permits.add_permits(PG_CONNECTIONS_PER_WORKER);
                Ok::<_, String>(())
            })
            .await?;
        self.permits
            .acquire()
            .await
            .map_err(|e| e.to_string())?
            .forget();
        let conn = self.free.borrow_mut().pop();
        match conn {
            Some(conn) => Ok(PgLease {
                worker: self,
                conn: Some(conn),
            }),
            None => Err("no free connection behind a permit".to_owned()),
        }
    }
}

async fn pg_connect(url: &str, sql: &Sql) -> Result<PgConn, String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))?;
    actix_web::rt::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("floor connection ended: {e}");
        }
    });
    let prepare = |text: &str| {
        let text = text.to_owned();
        let client = &client;
        async move {
            client
                .prepare(&text)
                .await
                .map_err(|e| format!("{text}: {e}"))
        }
    };
    let statements = PgStatements {
        acquire: prepare(&sql.acquire).await?,
        release: prepare(&sql.release).await?,
        select_record: prepare(&sql.select_record).await?,
        select_lock: prepare(&sql.select_lock).await?,
        update: prepare(&sql.update).await?,
        guard: prepare(&sql.guard).await?,
    };
    Ok(PgConn {
        client,
        statements: Rc::new(statements),
    })
}

// ---- SQLite ----

/// The one connection, and the checkpointer that runs while this lives.
struct SqliteFloor {
    conn: tokio::sync::Mutex<Lite>,
    _stop_checkpoints: mpsc::Sender<()>,
}

impl SqliteFloor {
    fn open(setup: &FloorSetup, sql: &Sql) -> Result<SqliteFloor, BoxError> {
        let conn = Lite::connect(setup, sql)?;
        let checkpointer = Lite::open(&setup.database_url)?;
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY)
            {
                let _ = checkpointer.exec("PRAGMA wal_checkpoint(PASSIVE);");
            }
        });
        Ok(SqliteFloor {
            conn: tokio::sync::Mutex::new(conn),
            _stop_checkpoints: stop,
        })
    }

    /// Runs `f` on the connection, on this worker's thread. A request
    /// waiting for another worker's statement to finish waits as a task,
    /// so the worker serves other connections meanwhile.
    async fn with<T>(&self, f: impl FnOnce(&Lite) -> Result<T, String>) -> Result<T, String> {
        let conn = self.conn.lock().await;
        f(&conn)
    }
}

/// The prepared statements of the SQLite floor, in the order prepared.
#[derive(Clone, Copy)]
enum Stmt {
    Acquire,
    Release,
    SelectRecord,
    SelectLock,
    Update,
    Guard,
    BeginImmediate,
    Commit,
    Rollback,
}

enum Bind<'a> {
    Int(i64),
    Text(&'a str),
}

enum Col {
    Int(i64),
    Text(String),
    Null,
}

impl Col {
    fn int(&self) -> Option<i64> {
        match self {
            Col::Int(n) => Some(*n),
            _ => None,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Col::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// A SQLite connection and its prepared statements, straight on the C API
/// that baton's SQLite is built from: no layer between the floor and the
/// statement.
struct Lite {
    db: *mut ffi::sqlite3,
    statements: Vec<*mut ffi::sqlite3_stmt>,
}

// SAFETY: a connection is used by one thread at a time (behind the floor's
// mutex, or by the checkpointer thread alone); SQLite's default threading
// mode (serialized) allows a connection to move between threads.
unsafe impl Send for Lite {}

impl Lite {
    /// A connection with the pragmas of baton's writer and every statement
    /// prepared.
    fn connect(setup: &FloorSetup, sql: &Sql) -> Result<Lite, String> {
        let mut conn = Lite::open(&setup.database_url)?;
        conn.exec(&format!(
            "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; \
             PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = {};",
            setup.sqlite_synchronous
        ))?;
        // In `Stmt`'s order.
        for text in [
            sql.acquire.as_str(),
            &sql.release,
            &sql.select_record,
            &sql.select_lock,
            &sql.update,
            &sql.guard,
            "BEGIN IMMEDIATE",
            "COMMIT",
            "ROLLBACK",
        ] {
            conn.prepare(text)?;
        }
        Ok(conn)
    }

    fn open(path: &str) -> Result<Lite, String> {
        let path = CString::new(path).map_err(|e| e.to_string())?;
        let mut db = std::ptr::null_mut();
        // SAFETY: `path` is NUL-terminated; `db` receives the handle, closed in Drop.
        let rc = unsafe {
            ffi::sqlite3_open_v2(
                path.as_ptr(),
                &mut db,
                ffi::SQLITE_OPEN_READWRITE,
                std::ptr::null(),
            )
        };
        let lite = Lite {
            db,
            statements: Vec::new(),
        };
        match rc {
            ffi::SQLITE_OK => Ok(lite),
            _ => Err(lite.error()),
        }
    }

    fn error(&self) -> String {
        // SAFETY: `db` is a handle from sqlite3_open_v2; the message is
        // copied before the next call on it.
        unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db)) }
            .to_string_lossy()
            .into_owned()
    }

    fn exec(&self, sql: &str) -> Result<(), String> {
        let sql = CString::new(sql).map_err(|e| e.to_string())?;
        // SAFETY: a live handle and a NUL-terminated script; no callback.
        let rc = unsafe {
            ffi::sqlite3_exec(
                self.db,
                sql.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        match rc {
            ffi::SQLITE_OK => Ok(()),
            _ => Err(self.error()),
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<(), String> {
        let mut stmt = std::ptr::null_mut();
        // SAFETY: the text and its length are valid for the call; the
        // statement is finalized in Drop.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                self.db,
                sql.as_ptr().cast::<c_char>(),
                c_int::try_from(sql.len()).map_err(|e| e.to_string())?,
                &mut stmt,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(format!("{sql}: {}", self.error()));
        }
        self.statements.push(stmt);
        Ok(())
    }

    /// Runs a prepared statement with `binds` (`?1`, `?2`, …) to its end and
    /// returns its rows.
    fn run(&self, stmt: Stmt, binds: &[Bind]) -> Result<Vec<Vec<Col>>, String> {
        let stmt = self.statements[stmt as usize];
        // SAFETY: `stmt` is one of this connection's prepared statements and
        // is used by one thread at a time; texts are copied by SQLite
        // (SQLITE_TRANSIENT); columns are read before the next step.
        unsafe {
            for (i, bind) in binds.iter().enumerate() {
                let i = c_int::try_from(i + 1).map_err(|e| e.to_string())?;
                let rc = match bind {
                    Bind::Int(n) => ffi::sqlite3_bind_int64(stmt, i, *n),
                    Bind::Text(s) => ffi::sqlite3_bind_text(
                        stmt,
                        i,
                        s.as_ptr().cast::<c_char>(),
                        c_int::try_from(s.len()).map_err(|e| e.to_string())?,
                        ffi::SQLITE_TRANSIENT(),
                    ),
                };
                if rc != ffi::SQLITE_OK {
                    ffi::sqlite3_reset(stmt);
                    return Err(self.error());
                }
            }
            let mut rows = Vec::new();
            let outcome = loop {
                match ffi::sqlite3_step(stmt) {
                    ffi::SQLITE_ROW => {
                        let columns = ffi::sqlite3_column_count(stmt);
                        let row = (0..columns)
                            .map(|c| match ffi::sqlite3_column_type(stmt, c) {
                                ffi::SQLITE_INTEGER => Col::Int(ffi::sqlite3_column_int64(stmt, c)),
                                ffi::SQLITE_NULL => Col::Null,
                                _ => {
                                    let text = ffi::sqlite3_column_text(stmt, c);
                                    let len = ffi::sqlite3_column_bytes(stmt, c);
                                    let bytes = std::slice::from_raw_parts(
                                        text,
                                        usize::try_from(len).unwrap_or(0),
                                    );
                                    Col::Text(String::from_utf8_lossy(bytes).into_owned())
                                }
                            })
                            .collect();
                        rows.push(row);
                    }
                    ffi::SQLITE_DONE => break Ok(rows),
                    _ => break Err(self.error()),
                }
            };
            ffi::sqlite3_reset(stmt);
            ffi::sqlite3_clear_bindings(stmt);
            outcome
        }
    }

    /// Rows changed by the last statement.
    fn changes(&self) -> u64 {
        // SAFETY: a live handle.
        u64::try_from(unsafe { ffi::sqlite3_changes(self.db) }).unwrap_or(0)
    }
}

impl Drop for Lite {
    fn drop(&mut self) {
        // SAFETY: each statement and the handle are finalized once, last.
        unsafe {
            for stmt in self.statements.drain(..) {
                ffi::sqlite3_finalize(stmt);
            }
            ffi::sqlite3_close(self.db);
        }
    }
}
