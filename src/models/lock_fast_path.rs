//! The lock fast path's statements (PostgreSQL): the common acquire and the
//! holder's release, each one statement that commits on its own. One
//! statement checks the caller's token, user and role, writes or deletes the
//! lock, writes its audit row and its outbox row. When any condition fails it
//! writes nothing and returns no row, and the caller takes the general path,
//! which says why (401, 403, 404, 409) or handles the rest (renew, takeover,
//! an overdue lock).
//!
//! The outbox row carries the lock and holder rows as they were written, not
//! a wire shape: every instance's listener renders the frame with
//! `crate::locks::render`, as the general path does.

use chrono::NaiveDateTime;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};
use serde::Deserialize;

use super::{HeldLock, Lock, LockAction, LockId, UserId, UserRef};
use crate::db::Prepared;

/// A lock write announced by the fast path, as its outbox row carries it.
#[derive(Clone, Debug, Deserialize)]
pub struct LockNotice {
    /// `acquired` (a `create` frame) or the reason it ended (a `destroy`).
    pub action: LockAction,
    pub lock: Lock,
    pub holder: UserRef,
    /// The tab whose request it was.
    pub editor: Option<String>,
    /// When the statement ran (Unix microseconds), for the fan-out delay.
    pub at: i64,
}

/// Who is asking, from a verified token: the statement checks the token's
/// row and the user are still live.
#[derive(Clone, Copy, Debug)]
pub struct TokenHolder {
    pub user_id: UserId,
    pub token_id: i64,
}

/// A lock to take on a free record.
pub struct FreshLock<'a> {
    /// The record's table and the column naming its case (`id` for a case).
    pub table: &'static str,
    pub case_column: &'static str,
    pub lockable_type: &'a str,
    pub lockable_id: i64,
    pub session_id: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub now: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    /// The case roles that may take locks (a site admin always may).
    pub editor_roles: &'a [&'a str],
}

/// The token check both statements share: `$2` user, `$3` token, `$4` now.
/// The same rule as `User::find_by_token`; change them together.
const LIVE_CALLER: &str = "\
    SELECT u.id, u.name, u.color, u.admin FROM auth_tokens t JOIN users u ON u.id = t.user_id \
    WHERE t.id = $3 AND u.id = $2 AND t.revoked_at IS NULL AND t.expires_at > $4 \
      AND u.deactivated_at IS NULL";

/// The outbox row, from the CTEs `changed` (the lock row) and `caller`.
fn outbox_insert(action: &str, editor: &str) -> String {
    format!(
        "INSERT INTO event_outbox (payload, created_at) \
         SELECT json_build_object( \
           'k', 'lock', 'action', '{action}', 'editor', {editor}, \
           'at', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
           'lock', row_to_json(changed), \
           'holder', json_build_object('id', caller.id, 'name', caller.name, 'color', caller.color) \
         )::text, $4 \
         FROM changed, caller"
    )
}

#[derive(QueryableByName)]
struct ChangedRow {
    #[diesel(embed)]
    lock: Lock,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    color: String,
}

impl From<ChangedRow> for HeldLock {
    fn from(row: ChangedRow) -> HeldLock {
        HeldLock {
            holder: UserRef {
                id: row.lock.user_id,
                name: row.name,
                color: row.color,
            },
            lock: row.lock,
        }
    }
}

/// Takes the lock if the record exists, the caller may edit its case and
/// nobody holds it. The record's row is locked first, as on the general
/// path, so the acquire queues behind a guarded write of the same record.
pub fn acquire(
    pg: &mut PgConnection,
    caller: TokenHolder,
    fresh: &FreshLock,
) -> QueryResult<Option<HeldLock>> {
    let sql = format!(
        "WITH record AS ( \
           SELECT {case_column} AS case_id FROM {table} WHERE id = $1 FOR NO KEY UPDATE), \
         caller AS ({LIVE_CALLER}), \
         changed AS ( \
           INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, \
                              user_agent, created_at, expires_at, last_activity_at) \
           SELECT $5, $1, record.case_id, caller.id, $6, $7, $4, $8, $4 FROM record, caller \
           WHERE caller.admin OR EXISTS ( \
             SELECT 1 FROM memberships m \
             WHERE m.case_id = record.case_id AND m.user_id = caller.id AND m.role = ANY($9)) \
           ON CONFLICT DO NOTHING RETURNING *), \
         audited AS ( \
           INSERT INTO lock_events \
             (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at) \
           SELECT id, lockable_type, lockable_id, case_id, user_id, user_id, 'acquired', created_at \
           FROM changed), \
         published AS ({outbox}) \
         SELECT changed.*, caller.name, caller.color FROM changed, caller",
        case_column = fresh.case_column,
        table = fresh.table,
        outbox = outbox_insert("acquired", "$6::text"),
    );
    Prepared(
        diesel::sql_query(sql)
            .bind::<BigInt, _>(fresh.lockable_id)
            .bind::<BigInt, _>(caller.user_id)
            .bind::<BigInt, _>(caller.token_id)
            .bind::<Timestamp, _>(fresh.now)
            .bind::<Text, _>(fresh.lockable_type)
            .bind::<Nullable<Text>, _>(fresh.session_id)
            .bind::<Nullable<Text>, _>(fresh.user_agent)
            .bind::<Timestamp, _>(fresh.expires_at)
            .bind::<Array<Text>, _>(fresh.editor_roles),
    )
    .get_result::<ChangedRow>(pg)
    .optional()
    .map(|row| row.map(HeldLock::from))
}

/// Releases lock `lock_id` if the caller's tab holds it and it is still in
/// force (lease not run out, active since `idle_before`).
pub fn release(
    pg: &mut PgConnection,
    caller: TokenHolder,
    lock_id: LockId,
    session_id: Option<&str>,
    now: NaiveDateTime,
    idle_before: NaiveDateTime,
) -> QueryResult<Option<HeldLock>> {
    let sql = format!(
        "WITH caller AS ({LIVE_CALLER}), \
         changed AS ( \
           DELETE FROM locks l USING caller \
           WHERE l.id = $1 AND l.user_id = caller.id \
             AND ($5::text IS NULL OR l.session_id IS NULL OR l.session_id = $5) \
             AND l.expires_at > $4 AND l.last_activity_at > $6 \
           RETURNING l.*), \
         audited AS ( \
           INSERT INTO lock_events \
             (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at) \
           SELECT id, lockable_type, lockable_id, case_id, user_id, user_id, 'released', $4 \
           FROM changed), \
         published AS ({outbox}) \
         SELECT changed.*, caller.name, caller.color FROM changed, caller",
        outbox = outbox_insert("released", "$5::text"),
    );
    Prepared(
        diesel::sql_query(sql)
            .bind::<BigInt, _>(lock_id)
            .bind::<BigInt, _>(caller.user_id)
            .bind::<BigInt, _>(caller.token_id)
            .bind::<Timestamp, _>(now)
            .bind::<Nullable<Text>, _>(session_id)
            .bind::<Timestamp, _>(idle_before),
    )
    .get_result::<ChangedRow>(pg)
    .optional()
    .map(|row| row.map(HeldLock::from))
}
