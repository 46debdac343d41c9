//! The database layer: one connection type over SQLite and PostgreSQL, the
//! pool, migrations, and the two ways in — `read` and `write`. `write` is the
//! single place where a transaction commits and its events are published.

//!
//! Its files, by concern: `connection.rs` (the connection type, opening it,
//! the database's clock), `migrations.rs` (applying them, their status),
//! `pool.rs`, `call.rs` (a call's
//! progress and the request's time budget), `error.rs`, `transaction.rs`
//! (`Tx`), `outbox.rs` (the event stream and the bus), `writer.rs`
//! (SQLite's single writer), `prepared.rs`, `pg_function.rs` (the functions
//! made at start, named by their text's hash), `retry.rs` and the diesel
//! `schema.rs`. This file is the `Database` handle: the ways in.

mod call;
mod connection;
mod error;
mod migrations;
pub mod outbox;
pub mod pg_function;
mod pool;
pub mod prepared;
mod retry;
pub mod schema;
mod transaction;
mod writer;

use std::future::Future;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::connection::TransactionManager;

use crate::config::SqliteSynchronous;
use diesel::Connection;

pub use call::with_request_budget;
use call::{budget_left, record_wait, CallState, RUNNING};
pub use connection::{
    connect, connect_bounded, now, sqlite_path, with_libpq_limits, Backend, DbConn,
};
pub use error::{cannot_hold_nul, DbError, TimeoutOutcome};
pub use migrations::{migrate, status as migration_status, MigrationStatus};
pub use outbox::{AuditEntry, Event, EventBus, Frame, KickReason, Outgoing, Tabs};
use pool::lost_or;
pub use pool::{ConnectionManager, Pool, PooledConn};
pub use prepared::Prepared;
pub use retry::TransientConflict;
pub use transaction::{Editor, Tx};

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
        Database::open_with(url, pool_size, timeout, bus, SqliteSynchronous::default())
    }

    /// [`Database::open`], with SQLite's commits as durable as
    /// `synchronous` says (`BATON_SQLITE_SYNCHRONOUS`).
    pub fn open_with(
        url: &str,
        pool_size: u32,
        timeout: Duration,
        bus: Arc<dyn EventBus>,
        synchronous: SqliteSynchronous,
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
            Backend::Sqlite => Some(writer::GroupWriter::start(
                url,
                Arc::clone(&bus),
                timeout,
                synchronous,
            )?),
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
    pub async fn write<T, E, F>(&self, editor: Option<Editor>, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut Tx) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        if let Some(writer) = &self.sqlite_writer {
            let state = Arc::new(CallState(AtomicU8::new(RUNNING)));
            let outcome = writer.submit(Arc::clone(&state), editor, f);
            return self.wait_for(&state, outcome).await;
        }
        let db = self.clone();
        self.bounded(move |state| db.write_on(state, editor, f))
            .await
    }

    fn write_on<T, E, F>(&self, state: &CallState, editor: Option<Editor>, f: F) -> Result<T, E>
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
        let outcome = self.in_transaction(state, &mut conn, editor, f);
        conn.lost |= state.abandoned();
        outcome
    }

    /// The transaction begun on `conn`: runs `f`, then commits (unless the
    /// request has given up: then it rolls back) or rolls back.
    fn in_transaction<T, E, F>(
        &self,
        state: &CallState,
        conn: &mut PooledConn,
        editor: Option<Editor>,
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
        let mut tx = Tx::new(conn, now, editor);
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
