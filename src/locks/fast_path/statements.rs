//! The lock fast path's statements (PostgreSQL): the common acquire and the
//! holder's release, each one statement that commits on its own. One
//! statement checks that the caller as this instance knows them
//! (`super::callers`) still holds and may edit, writes or deletes the lock,
//! and writes its event row (the audit entry and the frame in one).
//! When any condition fails it writes nothing and returns no row, and the caller takes the general path,
//! which says why (401, 403, 404, 409) or handles the rest (renew, takeover,
//! an overdue lock).
//!
//! The event row carries the lock and holder rows as they were written, not
//! a wire shape: every instance's listener renders the frame with
//! `crate::locks::render`, as the general path does.

use std::time::Duration;

use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamp};

use super::callers::KnownCaller;
use super::sql;
use crate::db::Prepared;
use crate::models::{HeldLock, Lock, LockId, RecordRow, UserRef};

/// A lock to take on a free record. Its times are the database's clock.
pub struct FreshLock<'a> {
    /// The statement for the record's kind (`sql::fast_acquire_of`).
    pub sql: &'static str,
    pub lockable_type: &'a str,
    pub lockable_id: i64,
    pub session_id: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    /// The lease.
    pub ttl: Duration,
}

/// A duration as the statements bind it: whole microseconds (saturating).
pub(crate) fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
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
    caller: &KnownCaller,
    fresh: &FreshLock,
) -> QueryResult<Option<HeldLock>> {
    Prepared::new(fresh.sql, |q| {
        q.bind::<BigInt, _>(fresh.lockable_id)
            .bind::<BigInt, _>(caller.user.id)
            .bind::<BigInt, _>(caller.epoch)
            .bind::<BigInt, _>(micros(fresh.ttl))
            .bind::<Text, _>(fresh.lockable_type)
            .bind::<Nullable<Text>, _>(fresh.session_id)
            .bind::<Nullable<Text>, _>(fresh.user_agent)
            .bind::<Array<BigInt>, _>(&caller.editing_cases)
            .bind::<Bool, _>(caller.admin)
            .bind::<Timestamp, _>(caller.token_expires_at)
    })
    .get_result::<ChangedRow>(pg)
    .optional()
    .map(|row| row.map(HeldLock::from))
}

/// Releases lock `lock_id` if the caller's tab holds it and it is still in
/// force at the database's clock (lease not run out, active within
/// `idle_timeout`).
pub fn release(
    pg: &mut PgConnection,
    caller: &KnownCaller,
    lock_id: LockId,
    session_id: Option<&str>,
    idle_timeout: Duration,
) -> QueryResult<Option<HeldLock>> {
    Prepared::new(sql::FAST_RELEASE, |q| {
        q.bind::<BigInt, _>(lock_id)
            .bind::<BigInt, _>(caller.user.id)
            .bind::<BigInt, _>(caller.epoch)
            .bind::<Nullable<Text>, _>(session_id)
            .bind::<BigInt, _>(micros(idle_timeout))
            .bind::<Timestamp, _>(caller.token_expires_at)
    })
    .get_result::<ChangedRow>(pg)
    .optional()
    .map(|row| row.map(HeldLock::from))
}

/// A save of a stored record's fields, as the fast save binds it.
pub struct FastSave<'a> {
    pub record_type: &'a str,
    pub id: i64,
    pub session_id: Option<&'a str>,
    pub lock_token: Option<LockId>,
    pub if_match: Option<i64>,
    /// The changed fields, validated: a JSON object merged into the stored one.
    pub fields: &'a str,
    /// The lease and idle limit a save renews and checks.
    pub ttl: Duration,
    pub idle_timeout: Duration,
}

/// Saves the record in one call if nothing stands in the way
/// (`sql::FAST_SAVE`); no row means "take the general path".
pub fn save(
    pg: &mut PgConnection,
    caller: &KnownCaller,
    save: &FastSave,
) -> QueryResult<Option<RecordRow>> {
    Prepared::new(sql::FAST_SAVE.call(), |q| {
        q.bind::<Text, _>(save.record_type)
            .bind::<BigInt, _>(save.id)
            .bind::<BigInt, _>(caller.user.id)
            .bind::<BigInt, _>(caller.epoch)
            .bind::<Nullable<Text>, _>(save.session_id)
            .bind::<Nullable<BigInt>, _>(save.lock_token)
            .bind::<Nullable<BigInt>, _>(save.if_match)
            .bind::<Text, _>(save.fields)
            .bind::<BigInt, _>(micros(save.ttl))
            .bind::<BigInt, _>(micros(save.idle_timeout))
            .bind::<Timestamp, _>(caller.token_expires_at)
            .bind::<Bool, _>(caller.admin)
            .bind::<Array<BigInt>, _>(&caller.editing_cases)
    })
    .get_result::<RecordRow>(pg)
    .optional()
}

/// A `POST /guard` question, as the fast guard binds it.
pub struct FastGuard<'a> {
    /// The API key's hash.
    pub key_hash: &'a str,
    pub record_type: &'a str,
    /// A record of an external type, named by `param`; else one baton
    /// stores, by `id`.
    pub external: bool,
    pub id: Option<i64>,
    pub param: Option<&'a str>,
    pub case_slug: &'a str,
    pub user_external_id: &'a str,
    pub session_id: Option<&'a str>,
    pub lock_token: Option<LockId>,
    /// The lease and idle limit a write renews and checks.
    pub ttl: Duration,
    pub idle_timeout: Duration,
    /// The case roles that may write (a site admin always may).
    pub editor_roles: &'a [&'a str],
}

#[derive(QueryableByName)]
struct Allowed {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    allowed: bool,
}

/// Answers a `POST /guard` in one call when the write may happen
/// (`sql::FAST_GUARD`); `None` means "take the general path".
pub fn guard(pg: &mut PgConnection, guard: &FastGuard) -> QueryResult<Option<()>> {
    Prepared::new(sql::FAST_GUARD.call(), |q| {
        q.bind::<Text, _>(guard.key_hash)
            .bind::<Text, _>(guard.record_type)
            .bind::<diesel::sql_types::Bool, _>(guard.external)
            .bind::<Nullable<BigInt>, _>(guard.id)
            .bind::<Nullable<Text>, _>(guard.param)
            .bind::<Text, _>(guard.case_slug)
            .bind::<Text, _>(guard.user_external_id)
            .bind::<Nullable<Text>, _>(guard.session_id)
            .bind::<Nullable<BigInt>, _>(guard.lock_token)
            .bind::<BigInt, _>(micros(guard.ttl))
            .bind::<BigInt, _>(micros(guard.idle_timeout))
            .bind::<Array<Text>, _>(guard.editor_roles)
    })
    .get_result::<Allowed>(pg)
    .map(|row| row.allowed.then_some(()))
}

/// Makes the fast save's and the fast guard's functions, once per start,
/// each under the name of its text's hash (`crate::db::pg_function`).
pub fn install_fast_save(pg: &mut PgConnection) -> QueryResult<()> {
    crate::db::pg_function::make(pg, &[&sql::FAST_SAVE, &sql::FAST_GUARD])
}
