//! Every PostgreSQL statement that writes a lock together with its audit
//! row, built from the fragments below so that each rule is written once in
//! SQL: the audit row's columns, the live-token check, the holder check, the
//! in-force check and the fast path's outbox row. Their Rust counterparts
//! (which SQLite and the general path use) are named beside each fragment;
//! the PostgreSQL suite runs every lock test with the fast path on and off
//! and compares what the two paths wrote (`tests/fast_path.rs`).
//!
//! SQLite has no data-modifying CTEs; its paths write the same rows with
//! diesel's DSL, one statement at a time.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// The `lock_events` columns, in the order every insert below gives them.
macro_rules! audit_columns {
    () => {
        "lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at"
    };
}

/// The caller, if its token (`$3`) is still live and names user `$2` at
/// `$4`. Rust: `User::find_by_token`.
macro_rules! live_caller {
    () => {
        "SELECT u.id, u.name, u.color, u.admin FROM auth_tokens t JOIN users u ON u.id = t.user_id \
         WHERE t.id = $3 AND u.id = $2 AND t.revoked_at IS NULL AND t.expires_at > $4 \
           AND u.deactivated_at IS NULL"
    };
}

/// The lock `l` belongs to the calling tab `$5` (or the user as a whole,
/// when either side has no tab). Rust: `locks::engine::is_held_by`.
macro_rules! held_by_tab {
    () => {
        "($5::text IS NULL OR l.session_id IS NULL OR l.session_id = $5)"
    };
}

/// The lock `l` is still in force at `$4`: its lease has not run out and it
/// was active after `$6`. Rust: `locks::engine::overdue`.
macro_rules! in_force {
    () => {
        "l.expires_at > $4 AND l.last_activity_at > $6"
    };
}

/// The fast path's outbox row, from the CTEs `changed` (the lock row) and
/// `caller`: an `OutboxPayload::Lock` (`crate::realtime::pg_bus`), whose
/// round trip a test checks against what this writes.
macro_rules! outbox_lock_row {
    ($action:literal, $editor:literal) => {
        concat!(
            "INSERT INTO event_outbox (payload, created_at) \
             SELECT json_build_object( \
               'k', 'lock', 'action', '",
            $action,
            "', 'editor', ",
            $editor,
            ", 'at', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
               'lock', row_to_json(changed), \
               'holder', json_build_object('id', caller.id, 'name', caller.name, 'color', caller.color) \
             )::text, $4 \
             FROM changed, caller"
        )
    };
}

/// Inserts lock `$1…$9` unless its record is locked, and its `acquired`
/// audit row by actor `$10`.
pub const INSERT_IF_FREE_AUDITED: &str = concat!(
    "WITH taken AS ( \
       INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, \
                          user_agent, created_at, expires_at, last_activity_at) \
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
       ON CONFLICT DO NOTHING RETURNING *), \
     audited AS ( \
       INSERT INTO lock_events (",
    audit_columns!(),
    ") SELECT id, lockable_type, lockable_id, case_id, $10, user_id, 'acquired', created_at \
       FROM taken) \
     SELECT * FROM taken"
);

/// Deletes lock `$1` and writes its audit row (`$2…$8`), or nothing when
/// another transaction ended it first.
pub const END_LOCK: &str = concat!(
    "WITH gone AS (DELETE FROM locks WHERE id = $1 RETURNING id) \
     INSERT INTO lock_events (",
    audit_columns!(),
    ") SELECT id, $2, $3, $4, $5, $6, $7, $8 FROM gone"
);

/// The fast path's release: lock `$1`, if the live caller (`$2`, `$3` at
/// `$4`) holds it from tab `$5` and it is in force (active after `$6`).
pub const FAST_RELEASE: &str = concat!(
    "WITH caller AS (",
    live_caller!(),
    "), changed AS ( \
       DELETE FROM locks l USING caller \
       WHERE l.id = $1 AND l.user_id = caller.id AND ",
    held_by_tab!(),
    " AND ",
    in_force!(),
    " RETURNING l.*), \
     audited AS ( \
       INSERT INTO lock_events (",
    audit_columns!(),
    ") SELECT id, lockable_type, lockable_id, case_id, user_id, user_id, 'released', $4 \
       FROM changed), \
     published AS (",
    outbox_lock_row!("released", "$5::text"),
    ") SELECT changed.*, caller.name, caller.color FROM changed, caller"
);

/// The fast path's acquire on a record of `table` (whose case is in
/// `case_column`): record `$1` of type `$5`, by the live caller (`$2`, `$3`
/// at `$4`) from tab `$6` with agent `$7`, until `$8`, if the caller is a
/// site admin or has a role in `$9` on the record's case. The record's row
/// is locked first, as on the general path. Built once per table.
pub fn fast_acquire(table: &'static str, case_column: &'static str) -> &'static str {
    static BUILT: LazyLock<Mutex<HashMap<&'static str, &'static str>>> =
        LazyLock::new(Default::default);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built.entry(table).or_insert_with(|| {
        let sql = format!(
            "WITH record AS ( \
               SELECT {case_column} AS case_id FROM {table} WHERE id = $1 FOR NO KEY UPDATE), \
             caller AS ({caller}), \
             changed AS ( \
               INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, \
                                  user_agent, created_at, expires_at, last_activity_at) \
               SELECT $5, $1, record.case_id, caller.id, $6, $7, $4, $8, $4 FROM record, caller \
               WHERE caller.admin OR EXISTS ( \
                 SELECT 1 FROM memberships m \
                 WHERE m.case_id = record.case_id AND m.user_id = caller.id AND m.role = ANY($9)) \
               ON CONFLICT DO NOTHING RETURNING *), \
             audited AS ( \
               INSERT INTO lock_events ({columns}) \
               SELECT id, lockable_type, lockable_id, case_id, user_id, user_id, 'acquired', created_at \
               FROM changed), \
             published AS ({outbox}) \
             SELECT changed.*, caller.name, caller.color FROM changed, caller",
            caller = live_caller!(),
            columns = audit_columns!(),
            outbox = outbox_lock_row!("acquired", "$6::text"),
        );
        // One string per lockable table, for the life of the process.
        Box::leak(sql.into_boxed_str())
    })
}
