//! The audit trail: one row per acquire, release, override, expiry, idle
//! release, disconnect and kick.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamp};

use super::{CaseId, Lock, LockEventId, LockId, UserId};
use crate::db::schema::lock_events;
use crate::db::{DbConn, Prepared};

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

/// What [`LockEvent::end_lock`] reads back from PostgreSQL.
#[derive(QueryableByName)]
struct EndedRow {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    has_waiters: bool,
}

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = lock_events)]
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
}

impl super::Record for LockEvent {
    const TYPE: &'static str = "LockEvent";
    const TABLE: &'static str = "lock_events";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

impl LockEvent {
    /// The stored action. The column holds [`LockAction::as_str`]'s
    /// spellings (the SQL in `lock_sql` writes the same literals); an
    /// unknown value (a row written by a newer version) reads as `released`,
    /// the most neutral ending.
    pub fn action(&self) -> LockAction {
        LockAction::parse(&self.action).unwrap_or(LockAction::Released)
    }

    /// Writes one audit row. `actor` is `None` when baton itself acted
    /// (expiry, idle release, a closed tab).
    pub fn record(
        conn: &mut DbConn,
        lock: &Lock,
        actor: Option<UserId>,
        action: LockAction,
        at: NaiveDateTime,
    ) -> QueryResult<()> {
        diesel::insert_into(lock_events::table)
            .values((
                lock_events::lock_id.eq(lock.id),
                lock_events::lockable_type.eq(&lock.lockable_type),
                lock_events::lockable_id.eq(lock.lockable_id),
                lock_events::case_id.eq(lock.case_id),
                lock_events::actor_id.eq(actor),
                lock_events::holder_id.eq(lock.user_id),
                lock_events::action.eq(action.as_str()),
                lock_events::at.eq(at),
            ))
            .execute(conn)
            .map(|_| ())
    }

    /// Ends a holding of a lock: deletes its row and writes its audit row.
    /// Returns whether anyone joined its line (as the row says when deleted,
    /// not as `lock` was read), or `None` when another transaction ended it
    /// first. One statement on PostgreSQL (a data-modifying CTE); two on
    /// SQLite, which has none (its writes are in-process and serial).
    pub fn end_lock(
        conn: &mut DbConn,
        lock: &Lock,
        actor: Option<UserId>,
        action: LockAction,
        at: NaiveDateTime,
    ) -> QueryResult<Option<bool>> {
        crate::on_backend!(conn,
            postgres: |pg| Prepared::new(super::lock_sql::END_LOCK, |q| q
            .bind::<BigInt, _>(lock.id)
            .bind::<Text, _>(&lock.lockable_type)
            .bind::<BigInt, _>(lock.lockable_id)
            .bind::<BigInt, _>(lock.case_id)
            .bind::<Nullable<BigInt>, _>(actor)
            .bind::<BigInt, _>(lock.user_id)
            .bind::<Text, _>(action.as_str())
            .bind::<Timestamp, _>(at))
            .get_result::<EndedRow>(pg)
            .optional()
            .map(|row| row.map(|r| r.has_waiters)),
            sqlite: |_c| {
                let Some(has_waiters) = Lock::delete(conn, lock.id)? else {
                    return Ok(None);
                };
                LockEvent::record(conn, lock, actor, action, at)?;
                Ok(Some(has_waiters))
            },
        )
    }

    /// A case's audit trail, newest first.
    pub fn of_case(
        conn: &mut DbConn,
        case_id: CaseId,
        limit: i64,
        before_id: Option<LockEventId>,
    ) -> QueryResult<Vec<LockEvent>> {
        let mut query = lock_events::table
            .filter(lock_events::case_id.eq(case_id))
            .select(LockEvent::as_select())
            .order(lock_events::id.desc())
            .limit(limit)
            .into_boxed();
        if let Some(before) = before_id {
            query = query.filter(lock_events::id.lt(before));
        }
        query.load(conn)
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
