//! Every PostgreSQL statement of the lock fast path: the acquire, the
//! release, and the functions of the fast save and the fast guard. They are
//! built from fragments, so that each rule is written once in SQL: the
//! rules of a lock (held by, in force, may hold, a deep lock in the case)
//! beside their Rust in `crate::locks::rules`, and here the lock columns,
//! the live caller, reading the record's lock, renewing it, and the event
//! row (the audit entry and its frame in one). Fragments take their
//! placeholders as arguments, so each statement numbers its binds its own
//! way. The Rust each mirrors (which SQLite and the general path use) is
//! named beside it; `tests/fast_path.rs` runs one script with the fast path
//! on and off and compares statuses, frames and audit rows.
//!
//! SQLite has no data-modifying CTEs; its paths write the same rows with
//! diesel's DSL, one statement at a time.

use crate::db::pg_function::PgFunction;
use crate::locks::guard::guard_steps_sql;
use crate::locks::rules::{held_by_sql, in_force_sql, may_hold_sql};
use crate::locks::target::TargetKind;

/// The `locks` columns an insert gives, in this order.
macro_rules! lock_columns {
    () => {
        "lockable_type, lockable_id, case_id, user_id, session_id, user_agent, \
         created_at, expires_at, last_activity_at, deep"
    };
}

/// The caller this instance read under auth epoch `$epoch`
/// (`super::callers`) may still be taken as read: the epoch has not moved
/// since (nothing that could end or narrow anyone's access committed), and
/// the token `$expires` has not run out at `$now`. Read by [`READ_CALLER`].
macro_rules! epoch_unmoved {
    ($epoch:literal, $expires:literal, $now:expr) => {
        concat!(
            "EXISTS (SELECT 1 FROM auth_epoch WHERE epoch = ",
            $epoch,
            ") AND ",
            $expires,
            " > ",
            $now
        )
    };
}

/// The caller, as the fast statements' event rows name them: user `$user`
/// with the name and colour they have now, while [`epoch_unmoved!`]. (A
/// rename does not move the epoch, so the name is read here, by the user's
/// key, not kept with the caller.)
macro_rules! known_caller {
    ($user:literal, $epoch:literal, $expires:literal) => {
        concat!(
            "SELECT u.id, u.name, u.color FROM users u WHERE u.id = ",
            $user,
            " AND ",
            $crate::locks::fast_path::sql::epoch_unmoved!($epoch, $expires, $crate::db_now!())
        )
    };
}

/// The caller whose token `$2` is live and names user `$1`, with the cases
/// where their role is one of `$3`, and the auth epoch, in one snapshot:
/// what `super::callers` keeps. Rust: `User::find_by_token`.
pub const READ_CALLER: &str = concat!(
    "SELECT u.id, u.name, u.color, u.admin, t.expires_at, \
       COALESCE((SELECT epoch FROM auth_epoch), 0) AS epoch, \
       ARRAY(SELECT m.case_id FROM memberships m \
             WHERE m.user_id = u.id AND m.role = ANY ($3)) AS editing_cases \
     FROM auth_tokens t JOIN users u ON u.id = t.user_id \
     WHERE t.id = $2 AND u.id = $1 AND t.revoked_at IS NULL AND t.expires_at > ",
    crate::db_now!(),
    " AND u.deactivated_at IS NULL"
);

/// PL/pgSQL: the holder's write renews the lock in `held` (lease and
/// activity), as a write does on the general path. Rust:
/// `locks::holding::touch`.
macro_rules! renew_held {
    () => {
        "UPDATE locks SET expires_at = v_now + p_ttl_micros * interval '1 microsecond', \
                last_activity_at = v_now WHERE id = held.id; "
    };
}

/// The fast path's event row for every lock in CTE `changed`, by the caller
/// in CTE `caller`: the audit entry of `$action` at `$at` (`$actor` a
/// column of `changed` or a placeholder) and, in the same row, its frame,
/// an `OutboxPayload::Lock` (`crate::realtime::pg_bus`) whose round trip a
/// test checks against what this writes. Rust: `crate::db::Tx::audit` with
/// the frame that follows it.
macro_rules! event_row {
    ($action:literal, $actor:literal, $at:expr, $editor:literal) => {
        concat!(
            "INSERT INTO events (lock_id, lockable_type, lockable_id, case_id, actor_id, \
               holder_id, action, at, payload) \
             SELECT changed.id, changed.lockable_type, changed.lockable_id, changed.case_id, ",
            $actor,
            ", changed.user_id, '",
            $action,
            "', ",
            $at,
            ", json_build_object( \
               'k', 'lock', 'action', '",
            $action,
            "', 'editor', ",
            $editor,
            ", 'at', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
               'lock', row_to_json(changed), \
               'holder', json_build_object('id', caller.id, 'name', caller.name, 'color', caller.color) \
             )::text FROM changed, caller"
        )
    };
}

/// `$micros` microseconds after (`"+"`) or before (`"-"`) the database's
/// clock, in SQL.
macro_rules! db_now_moved {
    ($sign:literal, $micros:literal) => {
        concat!(
            "(",
            $crate::db_now!(),
            " ",
            $sign,
            " ",
            $micros,
            " * interval '1 microsecond')"
        )
    };
}

/// The fast path's acquire on record `$1` of type `$5`, whose case
/// `$record` selects (as `case_id`, its row locked first, as on the general
/// path, and only for a caller who may edit that case: nobody else waits
/// on its row), by user `$2` while auth epoch `$3` and their token's
/// expiry `$10` hold ([`epoch_unmoved!`]), from tab `$6` with agent `$7`,
/// for a lease of `$4` microseconds, if the caller may edit the record's
/// case (a site admin, `$9`, or a case of `$8`). Its times are the database's clock
/// (`crate::db_now!`), as on the general path. It declines while any deep
/// lock is held on the case: the general path decides what a deep lock
/// covers (its insert orders it with deep acquires, see
/// `Lock::order_with_deep_acquires`).
macro_rules! fast_acquire {
    ($record:expr, $case_column:literal) => {
        concat!(
            "WITH record AS (",
            $record,
            " AND ",
            $crate::locks::rules::may_hold_sql!("$9", "$8", $case_column),
            " AND ",
            $crate::locks::fast_path::sql::epoch_unmoved!("$3", "$10", $crate::db_now!()),
            " FOR NO KEY UPDATE), caller AS (",
            $crate::locks::fast_path::sql::known_caller!("$2", "$3", "$10"),
            "), changed AS (INSERT INTO locks (",
            $crate::locks::fast_path::sql::lock_columns!(),
            ") SELECT $5, $1, record.case_id, caller.id, $6, $7, ",
            $crate::db_now!(),
            ", ",
            $crate::locks::fast_path::sql::db_now_moved!("+", "$4"),
            ", ",
            $crate::db_now!(),
            ", FALSE FROM record, caller WHERE NOT ",
            $crate::locks::rules::deep_in_case_sql!("record.case_id"),
            " ON CONFLICT DO NOTHING RETURNING *), published AS (",
            $crate::locks::fast_path::sql::event_row!(
                "acquired",
                "changed.user_id",
                "changed.created_at",
                "$6::text"
            ),
            ") SELECT changed.*, caller.name, caller.color FROM changed, caller"
        )
    };
}

/// The fast path's acquire on a case.
pub const FAST_ACQUIRE_CASE: &str =
    fast_acquire!("SELECT id AS case_id FROM cases WHERE id = $1", "id");

/// The fast path's acquire on a record of any declared type: one statement
/// for every type, since they share one table.
pub const FAST_ACQUIRE_RECORD: &str = fast_acquire!(
    "SELECT case_id FROM records WHERE record_type = $5 AND id = $1",
    "case_id"
);

/// The fast path's acquire for records of `kind`: none for an external
/// type (`rules::ACQUIRE_RULES` sends those to the general path).
pub fn fast_acquire_of(kind: &TargetKind) -> Option<&'static str> {
    match kind.record_type() {
        None => Some(FAST_ACQUIRE_CASE),
        Some(ty) if !ty.is_external() => Some(FAST_ACQUIRE_RECORD),
        Some(_) => None,
    }
}

pub(crate) use {db_now_moved, epoch_unmoved, event_row, known_caller, lock_columns};

/// The fast save (PostgreSQL): one call that saves a stored record's
/// fields when nothing stands in the way, and returns the saved row;
/// otherwise it writes nothing and returns no row, and the general path
/// decides (401, 403, 404, 412, 423, an overdue lock). It is the guard's
/// steps in the guard's order (`guard_steps_sql!`, beside the Rust):
/// the record's row, row-locked only when the caller as this instance knows
/// them is still live ([`epoch_unmoved!`]) and may edit its case
/// ([`may_hold_sql!`]), so that nobody else takes or waits for its lock (one
/// another transaction holds is left to the general path, which waits in a
/// transaction it can roll back); then, each statement with a fresh
/// snapshot (a VOLATILE function), the guard's steps 1 and 2 (the record's
/// lock read FOR SHARE, no deep lock in the case, the lock held by the
/// caller's tab and in force, or no lock, and `Lock-Token`), then step 3,
/// `If-Match`. The lock's lease and activity are renewed
/// as a save renews them, and its event row carries the saved row for
/// every instance's listener to render. Made at start under a name that
/// carries a hash of this text (`crate::db::pg_function`), so that its
/// rules are these fragments and nothing else, and another release's
/// function, made under its own name, is left alone.
const FAST_SAVE_FUNCTION: &str = concat!(
    "CREATE OR REPLACE FUNCTION baton_fast_save( \
       p_type TEXT, p_id BIGINT, p_user BIGINT, p_epoch BIGINT, p_session TEXT, \
       p_lock_token BIGINT, p_if_match BIGINT, p_fields TEXT, p_ttl_micros BIGINT, \
       p_idle_micros BIGINT, p_expires TIMESTAMP, p_admin BOOLEAN, p_cases BIGINT[] \
     ) RETURNS SETOF records LANGUAGE plpgsql VOLATILE AS $fn$ \
     DECLARE \
       v_now TIMESTAMP := ",
    crate::db_now!(),
    "; rec records; held locks; \
     BEGIN \
       SELECT * INTO rec FROM records WHERE record_type = p_type AND id = p_id AND ",
    may_hold_sql!("p_admin", "p_cases", "case_id"),
    " AND ",
    epoch_unmoved!("p_epoch", "p_expires", "v_now"),
    " FOR NO KEY UPDATE SKIP LOCKED; \
       IF NOT FOUND THEN RETURN; END IF; ",
    guard_steps_sql!("p_id", "rec.case_id", "p_user", "FALSE", "RETURN"),
    "IF p_if_match IS NOT NULL AND p_if_match <> rec.version THEN RETURN; END IF; \
       UPDATE records SET fields = (fields::jsonb || p_fields::jsonb)::text, \
              version = version + 1, updated_at = v_now \
        WHERE record_type = p_type AND id = p_id RETURNING * INTO rec; \
       IF held.id IS NOT NULL THEN ",
    renew_held!(),
    "END IF; \
       INSERT INTO events (at, payload) VALUES (v_now, json_build_object( \
           'k', 'record', 'editor', p_session, 'editorUser', p_user, \
           'at', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
           'record', row_to_json(rec))::text); \
       RETURN NEXT rec; \
     END $fn$"
);

/// [`FAST_SAVE_FUNCTION`], under its hashed name, and its call.
pub static FAST_SAVE: PgFunction = PgFunction::new(
    "baton_fast_save",
    FAST_SAVE_FUNCTION,
    "SELECT * FROM baton_fast_save($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
);

/// The guard as one call (PostgreSQL, `POST /guard`): answers `true` when
/// the write may happen, and then renews the holder's lock as a save
/// renews it; `false` when anything stands in the way or is not plain (a
/// revoked key, an unknown case or user, no editor role, a busy row, a lock
/// someone else holds or that is overdue, a deep lock in the case, a lost
/// `Lock-Token`), and then it wrote nothing: the general path decides and
/// says why. The order is the guard's: the key, the user and their role,
/// the record's row (one another transaction holds is left to the general
/// path), then the guard's steps 1 and 2 (`guard_steps_sql!`; strictly:
/// without a tab, a tab's lock is another tab's). An external
/// record never locked has no row and no lock. Made at start, beside the
/// fast save.
const FAST_GUARD_FUNCTION: &str = concat!(
    "CREATE OR REPLACE FUNCTION baton_fast_guard( \
       p_key_hash TEXT, p_type TEXT, p_external BOOLEAN, p_id BIGINT, p_param TEXT, \
       p_case TEXT, p_user TEXT, p_session TEXT, p_lock_token BIGINT, p_ttl_micros BIGINT, \
       p_idle_micros BIGINT, p_editor_roles TEXT[] \
     ) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $fn$ \
     DECLARE \
       v_now TIMESTAMP := ",
    crate::db_now!(),
    "; v_key api_keys; v_case BIGINT; v_user users; v_id BIGINT; held locks; \
     BEGIN \
       SELECT * INTO v_key FROM api_keys WHERE key_hash = p_key_hash AND revoked_at IS NULL; \
       IF NOT FOUND THEN RETURN FALSE; END IF; \
       SELECT id INTO v_case FROM cases WHERE slug = p_case; \
       IF NOT FOUND THEN RETURN FALSE; END IF; \
       SELECT * INTO v_user FROM users WHERE external_id = p_user AND deactivated_at IS NULL; \
       IF NOT FOUND THEN RETURN FALSE; END IF; \
       IF NOT (v_user.admin OR EXISTS (SELECT 1 FROM memberships m \
           WHERE m.case_id = v_case AND m.user_id = v_user.id \
             AND m.role = ANY (p_editor_roles))) THEN RETURN FALSE; END IF; \
       IF p_external THEN \
         SELECT id INTO v_id FROM external_records \
          WHERE record_type = p_type AND case_id = v_case AND param = p_param \
          FOR NO KEY UPDATE SKIP LOCKED; \
         IF NOT FOUND THEN \
           PERFORM 1 FROM external_records \
            WHERE record_type = p_type AND case_id = v_case AND param = p_param; \
           IF FOUND OR p_lock_token IS NOT NULL THEN RETURN FALSE; END IF; \
         END IF; \
       ELSE \
         SELECT id INTO v_id FROM records \
          WHERE record_type = p_type AND id = p_id AND case_id = v_case \
          FOR NO KEY UPDATE SKIP LOCKED; \
         IF NOT FOUND THEN RETURN FALSE; END IF; \
       END IF; \
       ",
    guard_steps_sql!("v_id", "v_case", "v_user.id", "TRUE", "RETURN FALSE"),
    "IF held.id IS NOT NULL THEN ",
    renew_held!(),
    "END IF; \
       IF v_key.last_used_at IS NULL OR v_key.last_used_at < v_now - interval '60 seconds' THEN \
         UPDATE api_keys SET last_used_at = v_now WHERE id = v_key.id; \
       END IF; \
       RETURN TRUE; \
     END $fn$"
);

/// [`FAST_GUARD_FUNCTION`], under its hashed name, and its call.
pub static FAST_GUARD: PgFunction = PgFunction::new(
    "baton_fast_guard",
    FAST_GUARD_FUNCTION,
    "SELECT baton_fast_guard($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS allowed",
);

/// The fast path's release: lock `$1`, if user `$2` (while auth epoch `$3`
/// and their token's expiry `$6` hold) holds it from
/// tab `$4`, it is in force at the database's clock (active within
/// the last `$5` microseconds) and nobody joined its line (a hand-off is the
/// general path's). A tab joining the line sets `has_waiters` on the lock's
/// row in its own transaction, so this DELETE either waits for it and
/// re-checks the flag, or goes first.
pub const FAST_RELEASE: &str = concat!(
    "WITH caller AS (",
    known_caller!("$2", "$3", "$6"),
    "), changed AS ( \
       DELETE FROM locks l USING caller \
       WHERE l.id = $1 AND NOT l.has_waiters AND ",
    held_by_sql!("caller.id", "$4", "FALSE"),
    " AND ",
    in_force_sql!(crate::db_now!(), db_now_moved!("-", "$5")),
    " RETURNING l.*), published AS (",
    event_row!("released", "changed.user_id", crate::db_now!(), "$4::text"),
    ") SELECT changed.*, caller.name, caller.color FROM changed, caller"
);

#[cfg(test)]
mod tests {
    #[test]
    fn statements_name_what_they_bind() {
        assert!(super::FAST_ACQUIRE_RECORD
            .contains("SELECT case_id FROM records WHERE record_type = $5 AND id = $1"));
        assert!(super::FAST_ACQUIRE_CASE.contains("SELECT id AS case_id FROM cases WHERE id = $1"));
        assert!(super::FAST_RELEASE
            .contains("l.session_id IS NOT DISTINCT FROM $4 OR (NOT FALSE AND $4::text IS NULL)"));
        assert!(super::FAST_RELEASE.contains(
            "l.last_activity_at > ((now() AT TIME ZONE 'UTC') - $5 * interval '1 microsecond')"
        ));
        assert!(super::FAST_ACQUIRE_RECORD
            .contains("((now() AT TIME ZONE 'UTC') + $4 * interval '1 microsecond')"));
        assert!(super::FAST_RELEASE
            .contains("changed.case_id, changed.user_id, changed.user_id, 'released'"));
        assert!(super::FAST_RELEASE.contains(
            "SELECT u.id, u.name, u.color FROM users u WHERE u.id = $2 AND EXISTS \
             (SELECT 1 FROM auth_epoch WHERE epoch = $3) AND $6 > (now() AT TIME ZONE 'UTC')"
        ));
        assert!(super::FAST_ACQUIRE_RECORD.contains(
            "WHERE record_type = $5 AND id = $1 AND ($9 OR case_id = ANY ($8)) AND EXISTS"
        ));
    }
}
