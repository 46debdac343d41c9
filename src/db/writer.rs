//! SQLite's single writer, with group commit.
//!
//! SQLite lets one transaction write at a time. Rather than have every
//! request take turns at BEGIN … COMMIT (one WAL append and two thread
//! hand-offs each), one thread owns the write connection and runs whatever
//! requests are waiting at that moment in one transaction: each request in
//! its own savepoint, so that each still commits whole or not at all, and
//! one COMMIT for the group. Every answer waits for that COMMIT, refusals
//! too: a request may have been refused because of an earlier one in the
//! same group, which nobody else can see before the COMMIT. If the group
//! fails, every request in it is answered with that error (nothing of the
//! group was kept), and the writer starts over on a new connection.
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

use crate::config::SqliteSynchronous;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::Connection;
use tokio::sync::oneshot;

use super::call::CallState;
use super::{connect_bounded, now, DbConn, DbError, Editor, Event, EventBus, TimeoutOutcome, Tx};

/// Most requests in one transaction: enough to absorb any burst the HTTP
/// workers can produce, few enough that the group's latency stays short.
const MOST_PER_GROUP: usize = 128;

/// How often the checkpointer copies the WAL back into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// A request that has run in its savepoint, waiting for its group's
/// outcome.
struct Ran {
    /// Answers the request, given the group's outcome: its value (or its
    /// own refusal) if the group committed, the group's error if not.
    answer: Box<dyn FnOnce(Result<(), DbError>)>,
    /// Whether its changes stay in the group (its savepoint was released).
    kept: bool,
    /// Its rows of the event stream; what they publish goes out after the
    /// COMMIT, if kept.
    events: Vec<Event>,
    after_commit: Vec<Box<dyn FnOnce()>>,
}

impl Ran {
    /// A request that keeps nothing and answers `error` once the group is
    /// over (or the group's own error).
    fn refused(answer: Box<dyn FnOnce(Result<(), DbError>)>, error: DbError) -> Ran {
        Ran {
            answer: Box::new(move |group| answer(Err(group.err().unwrap_or(error)))),
            kept: false,
            events: Vec::new(),
            after_commit: Vec::new(),
        }
    }
}

/// One request's write, its types erased so that requests of every kind
/// share the queue.
trait Job: Send {
    fn state(&self) -> Arc<CallState>;

    /// Runs the request's closure in a transaction on `conn`.
    fn run(self: Box<Self>, conn: &mut DbConn, now: chrono::NaiveDateTime) -> Ran;

    /// Answers without running: the group could not start, or the request
    /// gave up while it waited.
    fn fail(self: Box<Self>, error: DbError);
}

struct Request<T, E, F> {
    state: Arc<CallState>,
    editor: Option<Editor>,
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

    fn run(self: Box<Self>, conn: &mut DbConn, now: chrono::NaiveDateTime) -> Ran {
        let Request {
            editor, f, reply, ..
        } = *self;
        let mut tx = Tx::new(conn, now, editor);
        match f(&mut tx) {
            Ok(value) => Ran {
                answer: Box::new(move |group| {
                    let _ = reply.send(group.map(|()| value).map_err(E::from));
                }),
                kept: true,
                events: tx.events,
                after_commit: tx.after_commit,
            },
            Err(refusal) => Ran {
                answer: Box::new(move |group| {
                    let _ = reply.send(Err(match group {
                        Ok(()) => refusal,
                        Err(e) => E::from(e),
                    }));
                }),
                kept: false,
                events: Vec::new(),
                after_commit: Vec::new(),
            },
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
    /// Starts the writer thread and the checkpointer (see the module
    /// docs), each on its own connection to `url`.
    pub(super) fn start(
        url: &str,
        bus: Arc<dyn EventBus>,
        timeout: Duration,
        synchronous: SqliteSynchronous,
    ) -> Result<GroupWriter, DbError> {
        let conn = writer_connection(url, timeout, synchronous)?;
        let checkpoints = connect_bounded(url, timeout)?;
        let (queue, requests) = mpsc::channel();
        // Dropped when the writer ends, which ends the checkpointer.
        let (writer_alive, writer_gone) = mpsc::channel::<()>();
        let thread = Thread {
            conn,
            url: url.to_owned(),
            bus,
            timeout,
            synchronous,
        };
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
        editor: Option<Editor>,
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
            editor,
            f,
            reply,
        };
        // The thread lives as long as any handle; were it gone, the
        // dropped reply would tell the caller.
        let _ = self.queue.send(Box::new(request));
        outcome
    }
}

struct Thread {
    conn: DbConn,
    /// To start over on a new connection after a failed group.
    url: String,
    bus: Arc<dyn EventBus>,
    timeout: Duration,
    synchronous: SqliteSynchronous,
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
            // A panic here (not in a request: those are caught) drops the
            // group's answers (their callers are told the worker was
            // cancelled); the writer goes on with the next group.
            if catch_unwind(AssertUnwindSafe(|| self.run_group(group))).is_err() {
                tracing::error!("the SQLite writer panicked; its group was not saved");
                self.start_over();
            }
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
            self.start_over();
            return;
        }
        let mut ran: Vec<Ran> = Vec::with_capacity(group.len());
        let mut failure = None;
        for job in group {
            if failure.is_some() {
                job.fail(self.not_applied());
                continue;
            }
            let (one, outcome) = self.run_one(job);
            ran.extend(one);
            failure = outcome.err();
        }
        // SQLite's COMMIT either happens or leaves the transaction to roll
        // back: a failed one changed nothing.
        let outcome = match failure {
            Some(e) => Err(e),
            None => commit(&mut self.conn),
        };
        if let Err(e) = outcome {
            self.start_over();
            for one in ran {
                (one.answer)(Err(same_error(&e)));
            }
            return;
        }
        for one in ran {
            if one.kept {
                self.bus.committed(Event::published(one.events));
                one.after_commit.into_iter().for_each(|f| f());
            }
            (one.answer)(Ok(()));
        }
    }

    /// One request in its own savepoint. An error is the savepoint's own
    /// (or the clock's): it ends the group.
    fn run_one(&mut self, job: Box<dyn Job>) -> (Option<Ran>, diesel::QueryResult<()>) {
        let state = job.state();
        if state.abandoned() {
            job.fail(self.not_applied());
            return (None, Ok(()));
        }
        // Nested in the group's transaction, this is a savepoint.
        let began = now(&mut self.conn).and_then(|now| {
            <DbConn as Connection>::TransactionManager::begin_transaction(&mut self.conn)
                .map(|()| now)
        });
        let now = match began {
            Ok(now) => now,
            Err(e) => {
                job.fail(same_error(&e));
                return (None, Err(e));
            }
        };
        // A panicking request drops its reply (its caller is told the
        // worker was cancelled), and its savepoint is rolled back.
        let mut one = catch_unwind(AssertUnwindSafe(|| job.run(&mut self.conn, now))).ok();
        if let Some(kept) = one.take_if(|one| one.kept) {
            one = Some(match self.bus.stage(&mut self.conn, &kept.events) {
                Err(e) => Ran::refused(kept.answer, DbError::from(e)),
                // The request answered 503 already: nothing may change.
                Ok(()) if !state.may_commit() => Ran::refused(kept.answer, self.not_applied()),
                Ok(()) => kept,
            });
        }
        let end = match &one {
            Some(one) if one.kept => commit(&mut self.conn),
            _ => rollback(&mut self.conn),
        };
        (one, end)
    }

    /// After a failed group: a new connection, so that no transaction or
    /// savepoint of the old one is left open (closing it rolls them back).
    fn start_over(&mut self) {
        match writer_connection(&self.url, self.timeout, self.synchronous) {
            Ok(conn) => self.conn = conn,
            Err(e) => {
                tracing::error!(error = %e, "cannot reopen the SQLite writer's connection");
                let _ = rollback(&mut self.conn);
            }
        }
    }
}

/// The writer's connection: it leaves checkpoints to the checkpointer, and
/// its commits are as durable as `BATON_SQLITE_SYNCHRONOUS` asks (every
/// write goes through it).
fn writer_connection(
    url: &str,
    timeout: Duration,
    synchronous: SqliteSynchronous,
) -> Result<DbConn, DbError> {
    let mut conn = connect_bounded(url, timeout)?;
    conn.batch_execute(&format!(
        "PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = {};",
        synchronous.pragma()
    ))?;
    Ok(conn)
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
