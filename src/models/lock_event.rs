//! The audit trail: one row per acquire, release, override, expiry, idle
//! release, disconnect and kick.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::{CaseId, Lock, LockEventId, LockId, UserId};
use crate::db::schema::{events, external_records};
use crate::db::{AuditEntry, DbConn};

/// What happened to a lock, in the audit trail and on the wire. Every
/// action but `acquired`, `queued` and `handed_off` ends a lock, and is then
/// also the `reason` of its `destroy` frame. `queued`: a tab joined the line
/// for the lock's record (the actor is the waiting user); `handed_off`: the
/// first row of a lock the line gave to its next waiter.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LockAction {
    Acquired,
    Released,
    Overridden,
    Expired,
    Idle,
    Disconnected,
    Kicked,
    Queued,
    HandedOff,
}

impl LockAction {
    pub const ALL: [LockAction; 9] = [
        LockAction::Acquired,
        LockAction::Released,
        LockAction::Overridden,
        LockAction::Expired,
        LockAction::Idle,
        LockAction::Disconnected,
        LockAction::Kicked,
        LockAction::Queued,
        LockAction::HandedOff,
    ];

    pub fn parse(s: &str) -> Option<LockAction> {
        LockAction::ALL.into_iter().find(|a| a.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LockAction::Acquired => "acquired",
            LockAction::Released => "released",
            LockAction::Overridden => "overridden",
            LockAction::Expired => "expired",
            LockAction::Idle => "idle",
            LockAction::Disconnected => "disconnected",
            LockAction::Kicked => "kicked",
            LockAction::Queued => "queued",
            LockAction::HandedOff => "handed_off",
        }
    }
}

/// One audit row: a row of the event stream with an `action`.
#[derive(Queryable, Clone, Debug)]
pub struct LockEvent {
    pub id: LockEventId,
    pub lock_id: LockId,
    pub lockable_type: String,
    pub lockable_id: i64,
    pub case_id: CaseId,
    pub actor_id: Option<UserId>,
    pub holder_id: UserId,
    pub action: String,
    pub at: NaiveDateTime,
    /// What a host calls the record, for an external type.
    pub lockable_param: Option<String>,
}

impl super::WireType for LockEvent {
    const TYPE: &'static str = "LockEvent";
    /// Its name in the API (`/cases/{slug}/lock_events`); stored in `events`.
    const TABLE: &'static str = "lock_events";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

impl LockEvent {
    /// The stored action. The column holds [`LockAction::as_str`]'s
    /// spellings (the SQL in `locks::fast_path::sql` writes the same literals); an
    /// unknown value (a row written by a newer version) reads as `released`,
    /// the most neutral ending.
    pub fn action(&self) -> LockAction {
        LockAction::parse(&self.action).unwrap_or(LockAction::Released)
    }

    /// The audit entry of `action` on `lock` at `at`, for the transaction to
    /// write with its frame (`crate::db::Tx::audit`). `actor` is `None` when
    /// baton itself acted (expiry, idle release, a closed tab).
    pub fn entry(
        lock: &Lock,
        actor: Option<UserId>,
        action: LockAction,
        at: NaiveDateTime,
    ) -> AuditEntry {
        AuditEntry {
            lock_id: lock.id.get(),
            lockable_type: lock.lockable_type.clone(),
            lockable_id: lock.lockable_id,
            case_id: lock.case_id.get(),
            actor_id: actor.map(UserId::get),
            holder_id: lock.user_id.get(),
            action: action.as_str(),
            at,
        }
    }

    /// A case's audit trail, newest first: its rows of the event stream
    /// that have an `action` (and so every audit column, a CHECK says).
    pub fn of_case(
        conn: &mut DbConn,
        case_id: CaseId,
        limit: i64,
        before_id: Option<LockEventId>,
    ) -> QueryResult<Vec<LockEvent>> {
        let mut query = events::table
            .left_join(
                external_records::table.on(external_records::id
                    .nullable()
                    .eq(events::lockable_id)
                    .and(
                        external_records::record_type
                            .nullable()
                            .eq(events::lockable_type),
                    )),
            )
            .filter(events::case_id.eq(case_id))
            .filter(events::action.is_not_null())
            .select((
                events::id,
                events::lock_id.assume_not_null(),
                events::lockable_type.assume_not_null(),
                events::lockable_id.assume_not_null(),
                events::case_id.assume_not_null(),
                events::actor_id,
                events::holder_id.assume_not_null(),
                events::action.assume_not_null(),
                events::at,
                external_records::param.nullable(),
            ))
            .order(events::id.desc())
            .limit(limit)
            .into_boxed();
        if let Some(before) = before_id {
            query = query.filter(events::id.lt(before));
        }
        query.load(conn)
    }
}

impl LockEvent {
    /// Deletes audit rows older than `before`, among the `batch` oldest
    /// audit rows: it reads at most `batch` rows (by the primary key), so a
    /// trail of millions costs each call the same. Ids grow with time, so
    /// when none of the oldest `batch` rows is older than `before`, none
    /// after them is either. A row still carrying a frame that listeners
    /// may not have read yet (younger than `delivered_before`) stays.
    /// Returns how many rows it deleted.
    pub fn delete_oldest_before(
        conn: &mut DbConn,
        before: NaiveDateTime,
        delivered_before: NaiveDateTime,
        batch: i64,
    ) -> QueryResult<usize> {
        let oldest: Vec<i64> = events::table
            .select(events::id)
            .filter(events::action.is_not_null())
            .order(events::id.asc())
            .limit(batch)
            .load(conn)?;
        if oldest.is_empty() {
            return Ok(0);
        }
        diesel::delete(
            events::table
                .filter(events::id.eq_any(&oldest))
                .filter(events::at.lt(before))
                .filter(
                    events::payload
                        .is_null()
                        .or(events::at.lt(delivered_before)),
                ),
        )
        .execute(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::LockAction;

    #[test]
    fn an_action_is_spelled_alike_in_storage_and_on_the_wire() {
        for action in LockAction::ALL {
            let wire = serde_json::to_value(action).unwrap();
            assert_eq!(wire, action.as_str(), "{action:?}");
            assert_eq!(LockAction::parse(action.as_str()), Some(action));
            assert_eq!(serde_json::from_value::<LockAction>(wire).unwrap(), action);
        }
    }
}
