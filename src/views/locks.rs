//! Locks, ended locks, lock status and the audit trail. Built from rows by
//! `crate::locks::render`, which knows each lockable type's table.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Identity, RecordKey, UserView};
use crate::clock::utc;
use crate::models::{HeldLock, LockAction, LockEvent, QueuedWaiter, WaiterEnd};

/// A lock: who holds which record, from which tab, until when. Its `token`
/// (also its id) names this one holding: send it as `Lock-Token` when saving.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Lock)]
pub struct LockView {
    #[serde(flatten)]
    pub identity: Identity,
    #[schema(example = "12")]
    pub token: String,
    /// The locked record.
    pub lockable: RecordKey,
    /// `"0"`: the record alone; `"infinity"`: the record and everything
    /// inside it (a page's cards; everything in a case).
    pub depth: LockDepth,
    pub case_id: i64,
    /// The holder.
    pub user: UserView,
    /// The holding tab, when it sent `X-Session-ID`.
    pub session_id: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: DateTime<Utc>,
    /// The lease: the lock ends then unless renewed.
    pub expires_at: DateTime<Utc>,
    pub last_activity_at: DateTime<Utc>,
}

impl LockView {
    pub fn new(held: &HeldLock, lockable_table: &str) -> LockView {
        let lock = &held.lock;
        LockView {
            identity: Identity::of(lock),
            token: lock.id.to_string(),
            lockable: RecordKey {
                type_name: lock.lockable_type.clone(),
                table: lockable_table.to_owned(),
                param: param_of(lock.lockable_param.as_deref(), lock.lockable_id),
            },
            depth: if lock.deep {
                LockDepth::Infinity
            } else {
                LockDepth::Zero
            },
            case_id: lock.case_id.get(),
            user: UserView::public(&held.holder),
            session_id: lock.session_id.clone(),
            user_agent: lock.user_agent.clone(),
            created_at: utc(lock.created_at),
            expires_at: utc(lock.expires_at),
            last_activity_at: utc(lock.last_activity_at),
        }
    }
}

/// A record's param: what a host calls it (an external record), else its id.
fn param_of(external: Option<&str>, id: i64) -> String {
    external.map_or_else(|| id.to_string(), str::to_owned)
}

/// How much a lock covers, as WebDAV says it (RFC 4918 §10.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub enum LockDepth {
    /// The record alone.
    #[default]
    #[serde(rename = "0")]
    Zero,
    /// The record and everything inside it, including records created later.
    #[serde(rename = "infinity")]
    Infinity,
}

/// A lock that has ended, as its `destroy` frame carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = EndedLock)]
pub struct EndedLockView {
    #[serde(flatten)]
    pub lock: LockView,
    pub reason: LockAction,
    /// Who took it over or broke it (reason `overridden`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub overridden_by: Option<UserView>,
}

/// One row of a case's audit trail.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = LockEvent)]
pub struct LockEventView {
    #[serde(flatten)]
    pub identity: Identity,
    /// The lock (its token) this happened to.
    pub lock_id: i64,
    pub lockable: RecordKey,
    pub case_id: i64,
    pub action: LockAction,
    /// Who acted; `null` when baton did (expiry, idle release, a closed tab).
    pub actor: Option<UserView>,
    /// Who held the lock.
    pub holder: UserView,
    pub at: DateTime<Utc>,
}

impl LockEventView {
    pub fn new(
        event: &LockEvent,
        lockable_table: &str,
        actor: Option<UserView>,
        holder: UserView,
    ) -> LockEventView {
        LockEventView {
            identity: Identity::of(event),
            lock_id: event.lock_id.get(),
            lockable: RecordKey {
                type_name: event.lockable_type.clone(),
                table: lockable_table.to_owned(),
                param: param_of(event.lockable_param.as_deref(), event.lockable_id),
            },
            case_id: event.case_id.get(),
            action: event.action(),
            actor,
            holder,
            at: utc(event.at),
        }
    }
}

/// A tab's place in the line for a locked record (`position` 1 = next):
/// the record is handed to it when the lock ends, unless taken over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Waiter)]
pub struct WaiterView {
    #[serde(flatten)]
    pub identity: Identity,
    /// The record waited for.
    pub lockable: RecordKey,
    pub case_id: i64,
    /// Who waits.
    pub user: UserView,
    /// The waiting tab: the lock handed over carries it.
    pub session_id: String,
    /// 1 = next. As of this response or frame: a client that follows the
    /// channel counts the earlier waiters of the same record still in line.
    /// 0 in a `destroy` frame: the waiter is no longer in line.
    #[schema(minimum = 0)]
    pub position: i64,
    pub created_at: DateTime<Utc>,
    /// The waiter leaves the line then, unless its tab renews it.
    pub expires_at: DateTime<Utc>,
}

impl WaiterView {
    pub fn new(queued: &QueuedWaiter, lockable_table: &str) -> WaiterView {
        let waiter = &queued.waiter;
        WaiterView {
            identity: Identity::of(waiter),
            lockable: RecordKey {
                type_name: waiter.lockable_type.clone(),
                table: lockable_table.to_owned(),
                param: param_of(waiter.lockable_param.as_deref(), waiter.lockable_id),
            },
            case_id: waiter.case_id.get(),
            user: UserView::public(&queued.user),
            session_id: waiter.session_id.clone(),
            position: queued.position,
            created_at: utc(waiter.created_at),
            expires_at: utc(waiter.expires_at),
        }
    }
}

/// A waiter that left its line, as its `destroy` frame carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = EndedWaiter)]
pub struct EndedWaiterView {
    #[serde(flatten)]
    pub waiter: WaiterView,
    pub reason: WaiterEnd,
}

/// `owned`: the caller's tab holds it; `locked`: someone else does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LockState {
    Owned,
    Locked,
    Unlocked,
}

/// `GET /locks/status`: for clients that poll instead of listening.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = LockStatus)]
pub struct LockStatusView {
    pub state: LockState,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub lock: Option<LockView>,
    /// The record's waiting line, first first.
    pub waiters: Vec<WaiterView>,
}

/// A lock set: every lock asked for, in the order asked.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = LockSet)]
pub struct LockSetView {
    pub locks: Vec<LockView>,
}
