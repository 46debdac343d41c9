//! SQLite's single writer, with group commit.
//!
//! SQLite lets one transaction write at a time. Rather than have every
//! request take turns at BEGIN … COMMIT (one WAL append and two thread
//! hand-offs each), one thread owns the write connection and runs whatever
//! requests are waiting at that moment in one transaction: each request in
//! its own savepoint, so that each still commits whole or not at all, and
//! one COMMIT for the group. A request's answer (and its broadcasts) wait
//! for that COMMIT; a request that failed is answered at once, its
//! savepoint rolled back.
//!
//! Requests are run in the order they arrived, and their broadcasts are
//! handed to the bus in that order after the commit: the commit order the
//! in-process bus relies on.
//!
//! The writer never checkpoints the WAL itself (SQLite would, in the COMMIT
//! that crosses 1,000 pages, and every request of that group would wait for
//! it): a second thread, on its own connection, runs a passive checkpoint
//! several times a second, which copies pages back without blocking the
//! writer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::Connection;
use tokio::sync::oneshot;

use super::{now, CallState, DbConn, DbError, EventBus, Outgoing, TimeoutOutcome, Tx};

/// Most requests in one transaction: enough to absorb any burst the HTTP
/// workers can produce, few enough that the group's latency stays short.
const MOST_PER_GROUP: usize = 128;

/// How often the checkpointer copies the WAL back into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// What a group's successful request still has to do once the group's
/// outcome is known: answer with its value (or the commit's error), and
/// its broadcasts and after-commit hooks.
struct Pending {
    answer: Box<dyn FnOnce(Result<(), DbError>)>,
    outgoing: Vec<Outgoing>,
    after_commit: Vec<Box<dyn FnOnce()>>,
}

/// One request's write, its types erased so that requests of every kind
/// share the queue.
trait Job: Send {
    fn state(&self) -> Arc<CallState>;

    /// Runs the request's closure in `tx`. `Some` when it succeeded (its
    /// changes are to be kept); `None` when it failed and has been
    /// answered.
    fn run(self: Box<Self>, conn: &mut DbConn, now: chrono::NaiveDateTime) -> Option<Pending>;

    /// Answers without running: the group could not start, or the request
    /// gave up while it waited.
    fn fail(self: Box<Self>, error: DbError);
}

struct Request<T, E, F> {
    state: Arc<CallState>,
    editor_session_id: Option<String>,
    f: F,
    reply: oneshot::Sender<Result<T, E>>,
}

impl<T, E, F> Job for Request<T, E, F>
where
    F: FnOnce(&mut Tx) -> Result<T, E> + Send,
    T: Send + 'static,
    E: From<DbError> + Send + 'static,
{
    fn state(&self) -> Arc<CallState> {
        Arc::clone(&self.state)
    }

    fn run(self: Box<Self>, conn: &mut DbConn, now: chrono::NaiveDateTime) -> Option<Pending> {
        let Request {
            editor_session_id,
            f,
            reply,
            ..
        } = *self;
        let mut tx = Tx::new(conn, now, editor_session_id);
        match f(&mut tx) {
            Ok(value) => Some(Pending {
                answer: Box::new(move |outcome| {
                    let _ = reply.send(outcome.map(|()| value).map_err(E::from));
                }),
                outgoing: tx.outgoing,
                after_commit: tx.after_commit,
            }),
            Err(e) => {
                let _ = reply.send(Err(e));
                None
            }
        }
    }

    fn fail(self: Box<Self>, error: DbError) {
        let _ = self.reply.send(Err(error.into()));
    }
}

/// The queue to the writer thread. Dropping the last handle (with the last
/// [`super::Database`]) ends the thread.
#[derive(Clone)]
pub(super) struct GroupWriter {
    queue: mpsc::Sender<Box<dyn Job>>,
}

impl GroupWriter {
    /// Starts the writer thread on `conn`, and the checkpointer on
    /// `checkpoints` (see the module docs).
    pub(super) fn start(
        mut conn: DbConn,
        checkpoints: DbConn,
        bus: Arc<dyn EventBus>,
        timeout: Duration,
    ) -> Result<GroupWriter, DbError> {
        conn.batch_execute("PRAGMA wal_autocheckpoint = 0;")?;
        let (queue, requests) = mpsc::channel();
        // Dropped when the writer ends, which ends the checkpointer.
        let (writer_alive, writer_gone) = mpsc::channel::<()>();
        let thread = Thread { conn, bus, timeout };
        std::thread::Builder::new()
            .name("baton-sqlite-writer".into())
            .spawn(move || {
                thread.serve(requests);
                drop(writer_alive);
            })
            .map_err(|e| DbError::Thread("writer", e.to_string()))?;
        std::thread::Builder::new()
            .name("baton-sqlite-checkpointer".into())
            .spawn(move || checkpoint_until(checkpoints, writer_gone))
            .map_err(|e| DbError::Thread("checkpointer", e.to_string()))?;
        Ok(GroupWriter { queue })
    }

    /// Queues `f`; the receiver has its outcome once its group has
    /// committed (or at once, if it failed).
    pub(super) fn submit<T, E, F>(
        &self,
        state: Arc<CallState>,
        editor_session_id: Option<String>,
        f: F,
    ) -> oneshot::Receiver<Result<T, E>>
    where
        F: FnOnce(&mut Tx) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let (reply, outcome) = oneshot::channel();
        let request = Request {
            state,
            editor_session_id,
            f,
            reply,
        };
        // The thread lives as long as any handle; if it died (a panic
        // outside a request), the dropped reply tells the caller.
        let _ = self.queue.send(Box::new(request));
        outcome
    }
}

struct Thread {
    conn: DbConn,
    bus: Arc<dyn EventBus>,
    timeout: Duration,
}

impl Thread {
    fn serve(mut self, requests: mpsc::Receiver<Box<dyn Job>>) {
        while let Ok(first) = requests.recv() {
            let mut group = vec![first];
            while group.len() < MOST_PER_GROUP {
                match requests.try_recv() {
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            metrics::histogram!("baton_sqlite_write_group_size").record(group.len() as f64);
            self.run_group(group);
        }
    }

    fn not_applied(&self) -> DbError {
        DbError::Timeout {
            limit: self.timeout,
            outcome: TimeoutOutcome::NotApplied,
        }
    }

    /// One transaction for `group`; see the module docs.
    fn run_group(&mut self, group: Vec<Box<dyn Job>>) {
        let DbConn::Sqlite(sqlite) = &mut self.conn else {
            unreachable!("the group writer is SQLite's");
        };
        // Take the write lock up front: a deferred transaction that reads
        // and then writes can fail with SQLITE_BUSY without waiting (another
        // process, a command-line tool, may hold the file).
        if let Err(e) = AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE") {
            for job in group {
                job.fail(same_error(&e));
            }
            return;
        }
        let mut committing: Vec<Pending> = Vec::with_capacity(group.len());
        let mut broken = None;
        for job in group {
            if broken.is_some() {
                job.fail(self.not_applied());
                continue;
            }
            match self.run_one(job) {
                Ok(Some(pending)) => committing.push(pending),
                Ok(None) => {}
                Err(e) => broken = Some(e),
            }
        }
        if let Some(e) = broken {
            // A savepoint could not be rolled back or released: the
            // transaction is in an unknown state, so none of it is kept.
            let _ = rollback(&mut self.conn);
            for pending in committing {
                (pending.answer)(Err(same_error(&e)));
            }
            return;
        }
        // SQLite's COMMIT either happens or leaves the transaction to roll
        // back: a failed one changed nothing.
        if let Err(e) = commit(&mut self.conn) {
            let _ = rollback(&mut self.conn);
            for pending in committing {
                (pending.answer)(Err(same_error(&e)));
            }
            return;
        }
        for pending in committing {
            self.bus.committed(pending.outgoing);
            pending.after_commit.into_iter().for_each(|f| f());
            (pending.answer)(Ok(()));
        }
    }

    /// One request in its own savepoint. `Err` only when the savepoint
    /// itself failed, which ends the group.
    fn run_one(&mut self, job: Box<dyn Job>) -> diesel::QueryResult<Option<Pending>> {
        let state = job.state();
        if state.abandoned() {
            job.fail(self.not_applied());
            return Ok(None);
        }
        let now = now(&mut self.conn)?;
        // Nested in the group's transaction, this is a savepoint.
        <DbConn as Connection>::TransactionManager::begin_transaction(&mut self.conn)?;
        // A panicking request drops its reply (its caller is told the
        // worker was cancelled) and its savepoint is rolled back.
        let ran = catch_unwind(AssertUnwindSafe(|| job.run(&mut self.conn, now)));
        let pending = match ran {
            Ok(Some(pending)) => match self.bus.stage(&mut self.conn, &pending.outgoing) {
                Err(e) => {
                    (pending.answer)(Err(DbError::from(e)));
                    None
                }
                // The request answered 503 already: nothing may change.
                Ok(()) if !state.may_commit() => {
                    (pending.answer)(Err(self.not_applied()));
                    None
                }
                Ok(()) => Some(pending),
            },
            Ok(None) | Err(_) => None,
        };
        match pending {
            Some(pending) => {
                match <DbConn as Connection>::TransactionManager::commit_transaction(&mut self.conn)
                {
                    Ok(()) => Ok(Some(pending)),
                    Err(e) => {
                        (pending.answer)(Err(same_error(&e)));
                        Err(e)
                    }
                }
            }
            None => {
                <DbConn as Connection>::TransactionManager::rollback_transaction(&mut self.conn)?;
                Ok(None)
            }
        }
    }
}

/// Checkpoints the WAL every [`CHECKPOINT_EVERY`] until the writer is gone.
/// Passive: it copies what no reader still needs and never waits for the
/// writer, so a busy moment only leaves more for the next round.
fn checkpoint_until(mut conn: DbConn, writer_gone: mpsc::Receiver<()>) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = writer_gone.recv_timeout(CHECKPOINT_EVERY) {
        if let Err(e) = conn.batch_execute("PRAGMA wal_checkpoint(PASSIVE);") {
            tracing::warn!(error = %e, "SQLite checkpoint failed; trying again");
        }
    }
}

/// `e` once more, for each request of a group that failed with it.
fn same_error(e: &diesel::result::Error) -> DbError {
    DbError::Query(diesel::result::Error::DatabaseError(
        diesel::result::DatabaseErrorKind::Unknown,
        Box::new(e.to_string()),
    ))
}

fn commit(conn: &mut DbConn) -> diesel::QueryResult<()> {
    <DbConn as Connection>::TransactionManager::commit_transaction(conn)
}

fn rollback(conn: &mut DbConn) -> diesel::QueryResult<()> {
    <DbConn as Connection>::TransactionManager::rollback_transaction(conn)
}
