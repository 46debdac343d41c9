//! The PostgreSQL event bus, for one or several instances on one database.
//!
//! A broadcast is a row of `events` (the event stream, whose rows with an
//! `action` are also the audit trail), written by the same transaction as
//! the change it announces: it exists if and only if the change committed. After the commit the writer wakes its own listener and sends
//! one `NOTIFY` (outside the transaction) to wake the others. `NOTIFY`
//! inside the write transaction would serialize every commit of the
//! database behind one lock, WAL flush included.
//!
//! Each instance reads the stream on one dedicated connection and hands the
//! rows to its hub strictly in id order. Two conflicting writes are ordered
//! by their row locks, and the second takes its event ids (just before its
//! commit) after the first committed; so every tab on every instance sees
//! conflicting changes in commit order. A missing id is a transaction that
//! has its id but has not committed yet: the reader waits for it. If the gap
//! outlasts a second read, the reader takes a fresh transaction id as a
//! barrier; it skips the missing ids once a snapshot's `xmin` has passed the
//! barrier (every transaction that could hold them has ended, so they rolled
//! back). This relies on every transaction having written something (and so
//! holding a transaction id) before it takes an event id, which every write
//! path does: it publishes what it wrote.
//!
//! Its files: `payload.rs` (what a row carries, and delivering it to the
//! hub), `stage.rs` (a transaction's rows, one statement), `prune.rs`
//! (dropping what every listener has read), `cursor.rs` (reading the rows
//! in id order, waiting at gaps), `listener.rs` (reading them whenever
//! woken) and `connection.rs` (the listener's own connection). This file is the bus a transaction publishes to.

mod connection;
mod cursor;
mod listener;
mod payload;
mod prune;
mod stage;

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use tokio::sync::Notify;

use crate::db::{DbConn, Event, EventBus, Outgoing};

pub use connection::check_listener_url;
pub use listener::listen;
pub(crate) use payload::deliver;
pub use payload::OutboxPayload;
pub use prune::{outbox_end, prune_outbox};

const CHANNEL: &str = "baton_events";
/// The listener connection's `application_name`.
pub const LISTENER_NAME: &str = "baton event listener";
/// How long rows that only carry a frame are kept (audit rows stay): a
/// listener that reconnects within half of this resumes where it stopped,
/// and misses nothing.
pub const OUTBOX_RETENTION: Duration = Duration::from_secs(60);

/// What a commit wakes: this instance's listener, and (through one `NOTIFY`
/// that the listener's connection sends) every other instance's.
#[derive(Default)]
pub struct Wakeups {
    local: Notify,
    remote: Notify,
}

pub struct PgBus {
    /// `None` for a command-line tool, which runs no listener: it sends its
    /// `NOTIFY` inside the transaction instead.
    wakeups: Option<Arc<Wakeups>>,
}

impl PgBus {
    /// The bus of a server; hand [`PgBus::wakeups`] to [`listen`].
    pub fn new() -> PgBus {
        PgBus {
            wakeups: Some(Arc::default()),
        }
    }

    /// The bus of a one-off command that publishes to running servers.
    pub fn for_command() -> PgBus {
        PgBus { wakeups: None }
    }

    pub fn wakeups(&self) -> Arc<Wakeups> {
        self.wakeups.clone().unwrap_or_default()
    }
}

impl Default for PgBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus for PgBus {
    /// Every event of the transaction is one row, its audit entry and its
    /// frame together: one statement for all, ids in the order given.
    fn stage(&self, conn: &mut DbConn, staged: &[Event]) -> QueryResult<()> {
        let DbConn::Postgresql(pg) = conn else {
            return Ok(());
        };
        if staged.is_empty() {
            return Ok(());
        }
        stage::write_rows(pg, staged)?;
        if self.wakeups.is_none() {
            diesel::sql_query(format!("NOTIFY {CHANNEL}")).execute(pg)?;
        }
        Ok(())
    }

    fn committed(&self, outgoing: Vec<Outgoing>) {
        if !outgoing.is_empty() {
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(wakeups) = &self.wakeups {
            wakeups.local.notify_one();
            wakeups.remote.notify_one();
        }
    }
}
