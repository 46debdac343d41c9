//! The database layer: one connection type over SQLite and PostgreSQL, the
//! pool, migrations, and the two ways in — `read` and `write`. `write` is the
//! single place where a transaction commits and its events are published.

pub mod outbox;
pub mod prepared;
mod retry;

pub use retry::TransientConflict;
pub mod schema;
mod writer;

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDateTime;
use diesel::connection::{SimpleConnection, TransactionManager};
use diesel::pg::PgConnection;
use diesel::r2d2::{self as diesel_r2d2, ManageConnection, R2D2Connection};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, ConnectionError};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::clock;
pub use outbox::{AuditEntry, Event, EventBus, Frame, Outgoing};
pub use prepared::Prepared;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// One connection, whichever backend `DATABASE_URL` names.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    Postgresql(PgConnection),
    Sqlite(SqliteConnection),
}

/// The one way to reach the backend-specific connection, for what the
/// `DbConn` enum cannot carry (`ON CONFLICT`, row locks). With one body, the
/// same diesel expression runs on either inner connection; with `postgres:`
/// and `sqlite:` arms, each backend gets its own. Keep such statements in the
/// model modules.
#[macro_export]
macro_rules! on_backend {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::db::DbConn::Postgresql($c) => $body,
            $crate::db::DbConn::Sqlite($c) => $body,
        }
    };
    ($conn:expr, postgres: |$p:ident| $pg:expr, sqlite: |$s:ident| $sqlite:expr $(,)?) => {
        match $conn {
            $crate::db::DbConn::Postgresql($p) => $pg,
            $crate::db::DbConn::Sqlite($s) => $sqlite,
        }
    };
}

/// (Lookups use `get_result`, not `first`: diesel binds `first`'s LIMIT as a
/// parameter, which makes SQLite re-prepare the statement on every call.)
///
/// One row read `FOR NO KEY UPDATE` on PostgreSQL; a plain select on SQLite,
/// whose write transactions are exclusive already. Not `FOR UPDATE`: that
/// would also block the `FOR KEY SHARE` every foreign-key check takes on its
/// parent row (a presence or audit row inserted for this case), and turn
/// unrelated writes into waits, or deadlocks.
#[macro_export]
macro_rules! select_one_for_no_key_update {
    ($conn:expr, $query:expr) => {
        $crate::on_backend!($conn,
            postgres: |c| $query.for_no_key_update().get_result(c).optional(),
            sqlite: |c| $query.get_result(c).optional(),
        )
    };
}

/// On PostgreSQL, takes `FOR UPDATE` on the rows of `$table` that `$filter`
/// selects, in id order, before a multi-row write of them (see "Row-lock
/// order" in `crate::locks`); nothing on SQLite, whose write transactions are
/// exclusive.
#[macro_export]
macro_rules! lock_rows_for_update_in_order {
    ($conn:expr, $table:ident, $filter:expr) => {
        $crate::on_backend!($conn,
            postgres: |c| $table::table
                .select($table::id)
                .filter($filter)
                .order($table::id.asc())
                .for_update()
                .execute(c)
                .map(|_| ()),
            sqlite: |_c| Ok(()),
        )
    };
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to the database: {0}")]
    Connection(#[from] ConnectionError),
    #[error("no database connection available: {0}")]
    Pool(#[from] r2d2::Error),
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    #[error("database migration failed: {0}")]
    Migration(String),
    #[error("the database worker was cancelled")]
    Cancelled,
    /// SQLite's writer or checkpointer thread could not start.
    #[error("cannot start SQLite's {0} thread: {1}")]
    Thread(&'static str, String),
    /// The call did not finish within `BATON_DB_TIMEOUT`.
    #[error("{}", timeout_message(*.limit, *.outcome))]
    Timeout {
        limit: Duration,
        outcome: TimeoutOutcome,
    },
    /// The connection died under a statement (PostgreSQL restarted, the
    /// network cut it). A transaction on it did not commit.
    #[error("the connection to the database was lost: {0}")]
    Lost(String),
    /// The connection died while a COMMIT was in flight: it may have
    /// committed or not.
    #[error("the connection to the database was lost during a commit: {0}")]
    CommitUnknown(String),
}

/// What a call that gave up left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutOutcome {
    /// Nothing was changed: a read, or a write given up before its commit
    /// (it is rolled back, or never starts).
    NotApplied,
    /// A commit had been sent and not yet confirmed: it may have happened.
    Unknown,
}

fn timeout_message(limit: Duration, outcome: TimeoutOutcome) -> String {
    let limit = humantime::format_duration(limit);
    match outcome {
        TimeoutOutcome::NotApplied => {
            format!("The database did not answer within {limit}; nothing was changed. Try again.")
        }
        TimeoutOutcome::Unknown => format!(
            "The database did not confirm the change within {limit}; it may have been saved. \
             Reload before you try again (a retry with If-Match or Lock-Token is refused \
             with 412 if it was)."
        ),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of_url(url: &str) -> Backend {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// The database server's clock in SQL (PostgreSQL): UTC, as baton stores
/// time. Statements that decide about leases on their own (the lock fast
/// path) use it instead of a bound time; see [`now`].
#[macro_export]
macro_rules! db_now {
    () => {
        "(now() AT TIME ZONE 'UTC')"
    };
}

/// The time every lease decision is made at. On PostgreSQL it is the
/// database server's clock (the transaction's start, inside a transaction),
/// so that instances whose clocks disagree still agree about every lock;
/// SQLite, one instance, uses the process clock. Stored like [`clock::now`]:
/// UTC, whole microseconds.
pub fn now(conn: &mut DbConn) -> diesel::QueryResult<NaiveDateTime> {
    match conn {
        DbConn::Postgresql(pg) => {
            use diesel::RunQueryDsl;
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Timestamp>(
                crate::db_now!(),
            ))
            .get_result(pg)
        }
        DbConn::Sqlite(_) => Ok(clock::now()),
    }
}

/// Strips an optional `sqlite://`/`sqlite:` prefix: diesel wants a file name.
pub fn sqlite_path(url: &str) -> &str {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url)
}

/// Opens one connection and applies the per-connection settings. No
/// statement limits: for migrations and tools (the pool's connections get
/// theirs from [`connect_bounded`]).
pub fn connect(url: &str) -> Result<DbConn, ConnectionError> {
    match Backend::of_url(url) {
        Backend::Postgres => Ok(DbConn::Postgresql(PgConnection::establish(url)?)),
        Backend::Sqlite => sqlite_connect(url, Duration::from_secs(5)),
    }
}

fn sqlite_connect(url: &str, busy: Duration) -> Result<DbConn, ConnectionError> {
    let mut conn = SqliteConnection::establish(sqlite_path(url))?;
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {}; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
        busy.as_millis().max(1)
    ))
    .map_err(ConnectionError::CouldntSetupConfiguration)?;
    Ok(DbConn::Sqlite(conn))
}

/// A pooled connection, bounded by `timeout` (`BATON_DB_TIMEOUT`).
///
/// On PostgreSQL the server enforces it too, so that nothing a request
/// gave up on lingers: a statement running longer is cancelled
/// (`statement_timeout`), and a transaction whose client went quiet in the
/// middle of it (a stalled network, a stuck process) is aborted, its row
/// locks freed (`idle_in_transaction_session_timeout`). libpq gives up
/// connecting after the timeout (`connect_timeout`, whole seconds, at least
/// 2) and drops a connection whose peer stopped acknowledging
/// (`tcp_user_timeout`, TCP keepalives); options already in the URL win.
/// On SQLite, a writer waits for the file's lock as long.
pub fn connect_bounded(url: &str, timeout: Duration) -> Result<DbConn, ConnectionError> {
    match Backend::of_url(url) {
        Backend::Postgres => {
            let mut conn = PgConnection::establish(&with_libpq_limits(url, timeout))?;
            let ms = timeout.as_millis().max(1);
            conn.batch_execute(&format!(
                "SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms};"
            ))
            .map_err(ConnectionError::CouldntSetupConfiguration)?;
            Ok(DbConn::Postgresql(conn))
        }
        Backend::Sqlite => sqlite_connect(url, timeout),
    }
}

/// `url` with libpq's connection limits for `timeout` added, unless it
/// sets them itself.
pub fn with_libpq_limits(url: &str, timeout: Duration) -> String {
    let secs = timeout.as_secs_f64().ceil().max(1.0) as u64;
    let options = [
        ("connect_timeout", secs.max(2).to_string()),
        ("keepalives", "1".to_owned()),
        ("keepalives_idle", secs.to_string()),
        ("keepalives_interval", secs.to_string()),
        ("keepalives_count", "3".to_owned()),
        ("tcp_user_timeout", timeout.as_millis().max(1).to_string()),
    ];
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let given: Vec<&str> = query
        .split('&')
        .filter_map(|pair| pair.split('=').next())
        .collect();
    let mut url = url.to_owned();
    for (key, value) in options {
        if !given.contains(&key) {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&format!("{key}={value}"));
        }
    }
    url
}

/// Applies the embedded migrations of the connection's backend.
pub fn migrate(conn: &mut DbConn) -> Result<(), DbError> {
    let result = match conn {
        DbConn::Postgresql(c) => c.run_pending_migrations(POSTGRES_MIGRATIONS).map(|_| ()),
        DbConn::Sqlite(c) => {
            // WAL persists in the file; set it once here, before any pool exists.
            c.batch_execute("PRAGMA journal_mode = WAL;")
                .map_err(|e| DbError::Migration(e.to_string()))?;
            c.run_pending_migrations(SQLITE_MIGRATIONS).map(|_| ())
        }
    };
    result.map_err(|e| DbError::Migration(e.to_string()))
}

/// r2d2 manager that picks the backend by URL scheme. (diesel's generic
/// manager over the enum reports a dead PostgreSQL as an invalid URL.)
pub struct ConnectionManager {
    url: String,
    timeout: Duration,
}

/// A pooled connection, and whether it was found dead. The pool does not
/// test connections before handing them out (that would cost a round trip
/// per request); a request that finds its connection dead marks it, so the
/// pool drops it, and retries once on a fresh one.
pub struct PooledConn {
    conn: DbConn,
    lost: bool,
}

impl std::ops::Deref for PooledConn {
    type Target = DbConn;
    fn deref(&self) -> &DbConn {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut DbConn {
        &mut self.conn
    }
}

impl PooledConn {
    /// After a failure: whether the connection itself is gone (then it is
    /// marked so the pool drops it).
    fn lost_after_error(&mut self) -> bool {
        self.lost = self.conn.ping().is_err();
        self.lost
    }
}

/// `error`, or [`DbError::Lost`] when the connection it came from no
/// longer answers (marked so the pool drops it).
fn lost_or(conn: &mut PooledConn, error: DbError) -> DbError {
    if conn.lost_after_error() {
        DbError::Lost(error.to_string())
    } else {
        error
    }
}

/// One database call's progress, shared by the request that waits for it
/// and the blocking thread that runs it. The request gives up (after
/// `BATON_DB_TIMEOUT`) only from `RUNNING`, which the thread then sees
/// before it would commit, so a write given up on rolls back; once the
/// thread is `COMMITTING`, giving up leaves the outcome unknown.
struct CallState(AtomicU8);

const RUNNING: u8 = 0;
const COMMITTING: u8 = 1;
const ABANDONED: u8 = 2;
const ABANDONED_COMMITTING: u8 = 3;

impl CallState {
    /// The thread is about to commit (or to run a statement that commits on
    /// its own); false if the request has given up already.
    fn may_commit(&self) -> bool {
        self.0
            .compare_exchange(RUNNING, COMMITTING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// The request gives up; what the call leaves behind.
    fn abandon(&self) -> TimeoutOutcome {
        match self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| match s {
                RUNNING => Some(ABANDONED),
                COMMITTING => Some(ABANDONED_COMMITTING),
                _ => None,
            }) {
            Ok(COMMITTING) => TimeoutOutcome::Unknown,
            _ => TimeoutOutcome::NotApplied,
        }
    }

    fn abandoned(&self) -> bool {
        self.0.load(Ordering::SeqCst) >= ABANDONED
    }
}

tokio::task_local! {
    /// How long the current request has waited for the database so far.
    static DB_WAITED: Cell<Duration>;
}

/// Runs a request's future with its own database time budget: all its
/// database calls together wait at most `BATON_DB_TIMEOUT`. (Outside such a
/// scope, background tasks for instance, each call has the whole timeout.)
pub async fn with_request_budget<F: Future>(future: F) -> F::Output {
    DB_WAITED.scope(Cell::new(Duration::ZERO), future).await
}

fn budget_left(limit: Duration) -> Duration {
    DB_WAITED
        .try_with(|waited| limit.saturating_sub(waited.get()))
        .unwrap_or(limit)
}

fn record_wait(elapsed: Duration) {
    let _ = DB_WAITED.try_with(|waited| waited.set(waited.get() + elapsed));
}

impl ManageConnection for ConnectionManager {
    type Connection = PooledConn;
    type Error = diesel_r2d2::Error;

    fn connect(&self) -> Result<PooledConn, Self::Error> {
        let conn = connect_bounded(&self.url, self.timeout)
            .map_err(diesel_r2d2::Error::ConnectionError)?;
        Ok(PooledConn { conn, lost: false })
    }

    fn is_valid(&self, conn: &mut PooledConn) -> Result<(), Self::Error> {
        conn.conn.ping().map_err(diesel_r2d2::Error::QueryError)
    }

    /// A connection dropped by a panicking thread, left in a broken
    /// transaction, or found dead must not go back into the pool.
    fn has_broken(&self, conn: &mut PooledConn) -> bool {
        std::thread::panicking() || conn.lost || conn.conn.is_broken()
    }
}

pub type Pool = r2d2::Pool<ConnectionManager>;

/// A write transaction in progress: the connection, the transaction's clock,
/// and what it will publish once it has committed.
pub struct Tx<'a> {
    pub conn: &'a mut DbConn,
    /// One timestamp for everything the transaction writes and decides:
    /// the database's clock (see [`now`]).
    pub now: NaiveDateTime,
    editor_session_id: Option<String>,
    events: Vec<Event>,
    after_commit: Vec<Box<dyn FnOnce()>>,
}

impl<'a> Tx<'a> {
    /// A transaction begun on `conn` at `now`, publishing nothing yet.
    fn new(conn: &'a mut DbConn, now: NaiveDateTime, editor_session_id: Option<String>) -> Tx<'a> {
        Tx {
            conn,
            now,
            editor_session_id,
            events: Vec::new(),
            after_commit: Vec::new(),
        }
    }

    /// The session (browser tab) whose request this is; broadcasts carry it.
    pub fn editor_session_id(&self) -> Option<&str> {
        self.editor_session_id.as_deref()
    }

    /// Queues a frame or a kick for publication after commit. A frame for
    /// the case of the audit entry just written is that entry's row: a lock
    /// change is one row of the event stream.
    pub fn publish(&mut self, outgoing: Outgoing) {
        if let Outgoing::Frame(frame) = &outgoing {
            if let Some(last) = self.events.last_mut().filter(|last| {
                last.outgoing.is_none()
                    && last
                        .audit
                        .as_ref()
                        .is_some_and(|a| a.case_id == frame.case_id)
            }) {
                last.outgoing = Some(outgoing);
                return;
            }
        }
        self.events.push(Event {
            audit: None,
            outgoing: Some(outgoing),
        });
    }

    /// Queues an audit entry, written with the transaction's other events
    /// just before COMMIT.
    pub fn audit(&mut self, entry: AuditEntry) {
        self.events.push(Event {
            audit: Some(entry),
            outgoing: None,
        });
    }

    /// Runs `f` once the transaction has committed (never on rollback): for
    /// counting what happened.
    pub fn after_commit(&mut self, f: impl FnOnce() + 'static) {
        self.after_commit.push(Box::new(f));
    }
}

/// The pool plus the rules for using it.
#[derive(Clone)]
pub struct Database {
    pool: Pool,
    backend: Backend,
    bus: Arc<dyn EventBus>,
    /// SQLite has one writer at a time: every write goes to one thread,
    /// which commits the requests waiting at that moment together
    /// (`writer`). It also keeps commit order for the SQLite bus. `None` on
    /// PostgreSQL, where writers run side by side and the outbox table's ids
    /// give the order.
    sqlite_writer: Option<writer::GroupWriter>,
    /// Requests waiting for a pooled connection right now.
    waiting: Arc<AtomicUsize>,
    /// `BATON_DB_TIMEOUT`.
    timeout: Duration,
}

/// How the pool is used, for the metrics.
#[derive(Clone, Copy, Debug)]
pub struct PoolStats {
    pub in_use: u32,
    pub idle: u32,
    pub waiting: usize,
}

impl Database {
    /// Migrates the database, then builds the pool. `timeout`
    /// (`BATON_DB_TIMEOUT`) bounds every call: see [`Database::read`].
    pub fn open(
        url: &str,
        pool_size: u32,
        timeout: Duration,
        bus: Arc<dyn EventBus>,
    ) -> Result<Database, DbError> {
        let mut conn = connect(url)?;
        migrate(&mut conn)?;
        drop(conn);
        let pool = r2d2::Pool::builder()
            .max_size(pool_size)
            .min_idle(Some(1))
            // No `SELECT 1` before every request: a connection found broken
            // when used is discarded and the request retried once (below).
            .test_on_check_out(false)
            .connection_timeout(timeout)
            .build(ConnectionManager {
                url: url.to_owned(),
                timeout,
            })?;
        let backend = Backend::of_url(url);
        let sqlite_writer = match backend {
            Backend::Sqlite => Some(writer::GroupWriter::start(url, Arc::clone(&bus), timeout)?),
            Backend::Postgres => None,
        };
        Ok(Database {
            pool,
            backend,
            bus,
            sqlite_writer,
            waiting: Arc::new(AtomicUsize::new(0)),
            timeout,
        })
    }

    /// `BATON_DB_TIMEOUT`.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `job` on the blocking pool and waits for it at most what is
    /// left of the request's budget (see [`with_request_budget`]). When the
    /// wait ends first, the answer is [`DbError::Timeout`]; the thread,
    /// which may be stuck in a statement, finishes on its own: it never
    /// commits once given up on (see [`CallState`]), and drops its
    /// connection instead of returning it to the pool.
    async fn bounded<T, E, J>(&self, job: J) -> Result<T, E>
    where
        J: FnOnce(&CallState) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let state = Arc::new(CallState(AtomicU8::new(RUNNING)));
        let call = actix_web::web::block({
            let state = state.clone();
            move || job(&state)
        });
        self.wait_for(&state, call).await
    }

    /// Waits for `call` at most what is left of the request's budget; on
    /// timeout, gives up on `state` and answers [`DbError::Timeout`]. An
    /// `Err` from `call` itself means the worker never answered (it
    /// panicked).
    async fn wait_for<T, E, C, Never>(&self, state: &CallState, call: C) -> Result<T, E>
    where
        C: Future<Output = Result<Result<T, E>, Never>>,
        E: From<DbError>,
    {
        let limit = budget_left(self.timeout);
        let started = Instant::now();
        let outcome = tokio::time::timeout(limit, call).await;
        record_wait(started.elapsed());
        match outcome {
            Ok(done) => done.map_err(|_| DbError::Cancelled)?,
            Err(_) => {
                let outcome = state.abandon();
                let label = match outcome {
                    TimeoutOutcome::NotApplied => "not_applied",
                    TimeoutOutcome::Unknown => "unknown",
                };
                metrics::counter!("baton_db_timeouts_total", "outcome" => label).increment(1);
                tracing::warn!(?outcome, "a database call gave up after {:?}", self.timeout);
                Err(DbError::Timeout {
                    limit: self.timeout,
                    outcome,
                }
                .into())
            }
        }
    }

    /// The timeout error for a call given up on before it changed anything.
    fn not_applied(&self) -> DbError {
        DbError::Timeout {
            limit: self.timeout,
            outcome: TimeoutOutcome::NotApplied,
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool itself, for tools that measure raw SQL next to baton.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub fn bus(&self) -> &Arc<dyn EventBus> {
        &self.bus
    }

    pub fn pool_stats(&self) -> PoolStats {
        let state = self.pool.state();
        PoolStats {
            in_use: state.connections - state.idle_connections,
            idle: state.idle_connections,
            waiting: self.waiting.load(Ordering::Relaxed),
        }
    }

    /// A pooled connection, counted as waiting until it is handed over. At
    /// most `BATON_DB_TIMEOUT`: then (no connection free, or none could be
    /// made) [`DbError::Timeout`], the reason in the log.
    fn checkout(&self) -> Result<r2d2::PooledConnection<ConnectionManager>, DbError> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let conn = self.pool.get();
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        conn.map_err(|e| {
            tracing::warn!(error = %e, "no database connection within {:?}", self.timeout);
            self.not_applied()
        })
    }

    /// [`Database::checkout`] for a call that may have been given up on
    /// while it waited: then it does not start.
    fn checkout_for(
        &self,
        state: &CallState,
    ) -> Result<r2d2::PooledConnection<ConnectionManager>, DbError> {
        let conn = self.checkout()?;
        if state.abandoned() {
            return Err(self.not_applied());
        }
        Ok(conn)
    }

    /// Runs `f` on a pooled connection on the blocking pool, outside any
    /// transaction. For reads. If the connection turns out to be dead (the
    /// pool does not test connections before handing them out), `f` runs
    /// once more on a fresh one.
    ///
    /// Like every call here, it waits for the database at most
    /// `BATON_DB_TIMEOUT` (less what the request has waited already), then
    /// answers [`DbError::Timeout`] (503).
    pub async fn read<T, E, F>(&self, mut f: F) -> Result<T, E>
    where
        F: FnMut(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let db = self.clone();
        self.bounded(move |state| {
            let mut conn = db.checkout_for(state)?;
            let outcome = match f(&mut conn) {
                Err(_) if conn.lost_after_error() => {
                    drop(conn);
                    conn = db.checkout_for(state)?;
                    match f(&mut conn) {
                        Err(e) if conn.lost_after_error() => {
                            drop(e);
                            Err(DbError::Lost("twice in a row".into()).into())
                        }
                        outcome => outcome,
                    }
                }
                outcome => outcome,
            };
            conn.lost |= state.abandoned();
            outcome
        })
        .await
    }

    /// Runs `f` on a pooled connection outside any transaction, for a write
    /// that is one statement and commits on its own (the lock fast path).
    /// Not retried: a statement sent may have committed. When `published`
    /// says the statement wrote outbox rows, the bus is woken to deliver them.
    pub async fn autocommit<T, F>(&self, f: F, published: fn(&T) -> bool) -> Result<T, DbError>
    where
        F: FnOnce(&mut DbConn) -> diesel::QueryResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.clone();
        self.bounded(move |state| {
            let mut conn = db.checkout_for(state)?;
            // The statement commits by itself: from here on, giving up
            // leaves its outcome unknown.
            if !state.may_commit() {
                return Err(db.not_applied());
            }
            let outcome = match f(&mut conn) {
                Ok(value) => {
                    if published(&value) {
                        db.bus.wake();
                    }
                    Ok(value)
                }
                // The statement may have committed before the connection died.
                Err(e) => Err(match lost_or(&mut conn, DbError::from(e)) {
                    DbError::Lost(e) => DbError::CommitUnknown(e),
                    other => other,
                }),
            };
            conn.lost |= state.abandoned();
            outcome
        })
        .await
    }

    /// Runs `f` in one write transaction (immediate on SQLite). On success the
    /// transaction commits and its events are published, in commit order; on
    /// error it rolls back and nothing is published.
    pub async fn write<T, E, F>(&self, editor_session_id: Option<String>, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut Tx) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        if let Some(writer) = &self.sqlite_writer {
            let state = Arc::new(CallState(AtomicU8::new(RUNNING)));
            let outcome = writer.submit(Arc::clone(&state), editor_session_id, f);
            return self.wait_for(&state, outcome).await;
        }
        let db = self.clone();
        self.bounded(move |state| db.write_on(state, editor_session_id, f))
            .await
    }

    fn write_on<T, E, F>(
        &self,
        state: &CallState,
        editor_session_id: Option<String>,
        f: F,
    ) -> Result<T, E>
    where
        F: FnOnce(&mut Tx) -> Result<T, E>,
        E: From<DbError>,
    {
        let mut conn = self.checkout_for(state)?;
        if let Err(e) = begin(&mut conn) {
            // A dead pooled connection shows here first: retry once.
            if !conn.lost_after_error() {
                return Err(DbError::from(e).into());
            }
            drop(conn);
            conn = self.checkout_for(state)?;
            if let Err(e) = begin(&mut conn) {
                return Err(lost_or(&mut conn, DbError::from(e)).into());
            }
        }
        // Given up on (or not) from here on, a connection that was used
        // past the request's patience is not reused.
        let outcome = self.in_transaction(state, &mut conn, editor_session_id, f);
        conn.lost |= state.abandoned();
        outcome
    }

    /// The transaction begun on `conn`: runs `f`, then commits (unless the
    /// request has given up: then it rolls back) or rolls back.
    fn in_transaction<T, E, F>(
        &self,
        state: &CallState,
        conn: &mut PooledConn,
        editor_session_id: Option<String>,
        f: F,
    ) -> Result<T, E>
    where
        F: FnOnce(&mut Tx) -> Result<T, E>,
        E: From<DbError>,
    {
        let now = match now(conn) {
            Ok(now) => now,
            Err(e) => {
                let _ = rollback(conn);
                return Err(lost_or(conn, DbError::from(e)).into());
            }
        };
        let mut tx = Tx::new(conn, now, editor_session_id);
        let outcome = f(&mut tx);
        let events = std::mem::take(&mut tx.events);
        let after_commit = std::mem::take(&mut tx.after_commit);
        match outcome {
            Ok(value) => {
                if let Err(e) = self.bus.stage(conn, &events) {
                    let _ = rollback(conn);
                    return Err(lost_or(conn, DbError::from(e)).into());
                }
                if !state.may_commit() {
                    // The request answered 503 already: nothing may change.
                    let _ = rollback(conn);
                    return Err(self.not_applied().into());
                }
                if let Err(e) = commit(conn) {
                    return Err(match lost_or(conn, DbError::from(e)) {
                        DbError::Lost(e) => DbError::CommitUnknown(e),
                        other => other,
                    }
                    .into());
                }
                self.bus.committed(Event::published(events));
                after_commit.into_iter().for_each(|f| f());
                Ok(value)
            }
            Err(e) => match rollback(conn) {
                Ok(()) => Err(e),
                // The connection died under the transaction: it did not commit.
                Err(rollback_error) => Err(lost_or(conn, DbError::from(rollback_error)).into()),
            },
        }
    }
}

/// (SQLite's writes go through the group writer, which begins its own.)
fn begin(conn: &mut DbConn) -> diesel::QueryResult<()> {
    <DbConn as Connection>::TransactionManager::begin_transaction(conn)
}

fn commit(conn: &mut DbConn) -> diesel::QueryResult<()> {
    <DbConn as Connection>::TransactionManager::commit_transaction(conn)
}

fn rollback(conn: &mut DbConn) -> diesel::QueryResult<()> {
    <DbConn as Connection>::TransactionManager::rollback_transaction(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_limits_are_added_unless_the_url_sets_them() {
        let url = with_libpq_limits("postgres://u@db:5432/baton", Duration::from_millis(1500));
        assert_eq!(
            url,
            "postgres://u@db:5432/baton?connect_timeout=2&keepalives=1&keepalives_idle=2\
             &keepalives_interval=2&keepalives_count=3&tcp_user_timeout=1500"
        );
        let url = with_libpq_limits(
            "postgres://u@db/baton?sslmode=require&connect_timeout=30",
            Duration::from_secs(5),
        );
        assert_eq!(
            url,
            "postgres://u@db/baton?sslmode=require&connect_timeout=30&keepalives=1\
             &keepalives_idle=5&keepalives_interval=5&keepalives_count=3&tcp_user_timeout=5000"
        );
    }

    #[test]
    fn a_call_given_up_on_before_its_commit_never_commits() {
        let state = CallState(AtomicU8::new(RUNNING));
        assert_eq!(state.abandon(), TimeoutOutcome::NotApplied);
        assert!(state.abandoned());
        assert!(!state.may_commit());

        let state = CallState(AtomicU8::new(RUNNING));
        assert!(state.may_commit());
        assert_eq!(state.abandon(), TimeoutOutcome::Unknown);
        assert!(state.abandoned());
    }

    #[test]
    fn timeout_messages_say_whether_anything_changed() {
        let not_applied = DbError::Timeout {
            limit: Duration::from_secs(5),
            outcome: TimeoutOutcome::NotApplied,
        };
        assert_eq!(
            not_applied.to_string(),
            "The database did not answer within 5s; nothing was changed. Try again."
        );
        let unknown = DbError::Timeout {
            limit: Duration::from_millis(1500),
            outcome: TimeoutOutcome::Unknown,
        };
        assert!(unknown
            .to_string()
            .contains("within 1s 500ms; it may have been saved"));
    }
}
