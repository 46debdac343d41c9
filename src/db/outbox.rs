//! What a write transaction will publish once it has committed, and the bus
//! that carries it. Frames are serialized by whoever emits them (the wire
//! shapes live in `crate::views`); this layer only queues and hands them over.
//!
//! The audit trail and the broadcasts are one stream, the `events` table:
//! a lock change is one row, its audit entry and (where the bus travels
//! through the database) the frame that announces it. A transaction's rows
//! are written together just before its COMMIT, so their ids follow commit
//! order (see `crate::realtime::pg_bus`).

use bytestring::ByteString;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::schema::events;
use super::DbConn;

/// A message ready for the wire, serialized once for every subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The case whose tabs receive it.
    pub case_id: i64,
    /// Shared bytes: handing a frame to a thousand tabs copies no text.
    pub text: ByteString,
}

impl Frame {
    /// The frame parsed back, for tests and tools.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text).unwrap_or(serde_json::Value::Null)
    }
}

/// Everything a transaction can publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// A frame for the tabs of one case.
    Frame(Frame),
    /// Open tabs that must go, wherever they are connected: each is told
    /// why (a `kicked` frame) and closed.
    Close { tabs: Tabs, reason: KickReason },
}

/// Which open tabs a close is for. A tab is a user and a session id
/// together, opened with one token on one case.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Tabs {
    /// The tabs with this session id: of one user, or of anyone (an admin's
    /// kick that names no user).
    Session { session: String, user: Option<i64> },
    /// A user's tabs on one case.
    OnCase { user: i64, case: i64 },
    /// A user's tabs, but those opened with the token `except`.
    OfUser {
        user: i64,
        except_token: Option<i64>,
    },
    /// The tabs opened with this token.
    Token { token: i64 },
    /// A user's tabs on every case but these (where they are still a
    /// member): a site admin made an ordinary user.
    OutsideCases { user: i64, keep: Vec<i64> },
}

/// Why a tab was closed, as its `kicked` frame says.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KickReason {
    /// A site admin closed it.
    Kicked,
    /// Its user is no longer a member of the case.
    AccessRemoved,
    /// Its token ended: a logout, a password change, the user removed, or
    /// its expiry passed.
    SignedOut,
}

/// What happened to a lock, for the audit trail: an `action` as
/// `crate::models::LockAction::as_str` spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    pub lock_id: i64,
    pub lockable_type: String,
    pub lockable_id: i64,
    pub case_id: i64,
    /// `None` when baton itself acted (expiry, idle release, a closed tab).
    pub actor_id: Option<i64>,
    pub holder_id: i64,
    pub action: &'static str,
    pub at: NaiveDateTime,
}

/// One event of a transaction, one row of the stream: an audit entry, what
/// is published after commit, or both (a lock change and its frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub audit: Option<AuditEntry>,
    pub outgoing: Option<Outgoing>,
}

impl Event {
    /// What is published of `events` after commit, in order.
    pub fn published(events: Vec<Event>) -> Vec<Outgoing> {
        events.into_iter().filter_map(|e| e.outgoing).collect()
    }
}

/// Writes the audit entries of `events`: what a bus that does not travel
/// through the database stages. One row per statement: a transaction has
/// one or two, and a one-row insert is a statement diesel keeps prepared (a
/// multi-row one is prepared anew each time).
pub fn write_audit(conn: &mut DbConn, events: &[Event]) -> QueryResult<()> {
    for a in events.iter().filter_map(|e| e.audit.as_ref()) {
        let row = (
            events::at.eq(a.at),
            events::lock_id.eq(Some(a.lock_id)),
            events::lockable_type.eq(Some(&a.lockable_type)),
            events::lockable_id.eq(Some(a.lockable_id)),
            events::case_id.eq(Some(a.case_id)),
            events::actor_id.eq(a.actor_id),
            events::holder_id.eq(Some(a.holder_id)),
            events::action.eq(Some(a.action)),
        );
        crate::on_backend!(conn, |c| diesel::insert_into(events::table)
            .values(row)
            .execute(c))?;
    }
    Ok(())
}

/// Carries what a transaction publishes to every subscriber. `stage` writes
/// the transaction's rows of the event stream: the audit entries only, for
/// a bus that delivers in the process; each row with its frame, for a bus
/// that travels with the transaction itself (PostgreSQL's listeners read
/// the rows).
pub trait EventBus: Send + Sync + 'static {
    /// Inside the writing transaction, just before COMMIT.
    fn stage(&self, conn: &mut DbConn, events: &[Event]) -> diesel::QueryResult<()> {
        write_audit(conn, events)
    }

    /// Right after COMMIT. Called in commit order only where writes are
    /// serial (SQLite's single writer): a bus for concurrent writers must
    /// order deliveries itself, as the PostgreSQL outbox does.
    fn committed(&self, outgoing: Vec<Outgoing>);

    /// A statement that committed on its own wrote event rows itself (the
    /// lock fast path): deliver them.
    fn wake(&self) {}
}
