//! Lease changes driven by a tab's edits channel: pongs extend the leases of
//! its locks (never their activity) and of its places in waiting lines, a
//! closed tab leaves them only the grace period, and a tab that reconnects in
//! time gets them back.

use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::clock;
use crate::db::schema::{lock_waiters, locks};
use crate::db::DbConn;
use crate::models::{Lock, UserId, Waiter};

/// Most sessions renewed by one statement: SQLite binds each session (and
/// limits how many one statement takes); PostgreSQL binds the whole list as
/// one array, so a beat renews any number of tabs in one statement.
fn renew_chunk(conn: &DbConn) -> usize {
    match conn {
        DbConn::Sqlite(_) => 500,
        DbConn::Postgresql(_) => usize::MAX,
    }
}

/// Extends the leases of every live lock held by these (answering) tabs, and
/// of their live places in line, in a few statements however many tabs there
/// are.
pub fn renew_for_sessions(
    conn: &mut DbConn,
    sessions: &[String],
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    let until = clock::after(now, ttl);
    // One ordered lock over every session (PostgreSQL binds the list as one
    // array), not per chunk: chunks would take rows in several orders.
    Lock::lock_rows_of_sessions(conn, sessions)?;
    let chunk_size = renew_chunk(conn);
    let mut renewed = 0;
    // Types that declare their own lease (`lock.lease`) renew to it.
    let own_leases: Vec<(&str, Duration)> = crate::schema::in_force()
        .types()
        .iter()
        .filter_map(|ty| ty.lock.lease.map(|lease| (ty.name.as_str(), lease)))
        .collect();
    let own_types: Vec<&str> = own_leases.iter().map(|(name, _)| *name).collect();
    for chunk in sessions.chunks(chunk_size) {
        renewed += diesel::update(
            locks::table
                .filter(locks::session_id.eq_any(chunk))
                .filter(locks::lockable_type.ne_all(&own_types))
                .filter(locks::expires_at.gt(now))
                .filter(locks::expires_at.lt(until))
                .filter(locks::disconnected_at.is_null()),
        )
        .set(locks::expires_at.eq(until))
        .execute(conn)?;
        for (type_name, lease) in &own_leases {
            let until = clock::after(now, *lease);
            renewed += diesel::update(
                locks::table
                    .filter(locks::session_id.eq_any(chunk))
                    .filter(locks::lockable_type.eq(type_name))
                    .filter(locks::expires_at.gt(now))
                    .filter(locks::expires_at.lt(until))
                    .filter(locks::disconnected_at.is_null()),
            )
            .set(locks::expires_at.eq(until))
            .execute(conn)?;
        }
    }
    Waiter::lock_rows_of_sessions(conn, sessions)?;
    for chunk in sessions.chunks(chunk_size) {
        renewed += diesel::update(
            lock_waiters::table
                .filter(lock_waiters::session_id.eq_any(chunk))
                .filter(lock_waiters::expires_at.gt(now))
                .filter(lock_waiters::expires_at.lt(until))
                .filter(lock_waiters::disconnected_at.is_null()),
        )
        .set(lock_waiters::expires_at.eq(until))
        .execute(conn)?;
    }
    Ok(renewed)
}

/// The tab's channel closed or died: `expires_at = min(expires_at, now + grace)`,
/// for its locks and its places in line. The caller has row-locked the tab's
/// locks and waiters already ([`Lock::lock_rows_of_sessions`], [`Waiter::lock_rows_of_sessions`]):
/// the channel's leave does so before it counts the tab's other connections.
pub fn disconnect(
    conn: &mut DbConn,
    session_id: &str,
    now: NaiveDateTime,
    grace: Duration,
) -> QueryResult<()> {
    let cutoff = clock::after(now, grace);
    let of_session = locks::session_id.eq(session_id);
    diesel::update(
        locks::table
            .filter(of_session)
            .filter(locks::expires_at.gt(cutoff)),
    )
    .set(locks::expires_at.eq(cutoff))
    .execute(conn)?;
    diesel::update(locks::table.filter(locks::session_id.eq(session_id)))
        .set(locks::disconnected_at.eq(Some(now)))
        .execute(conn)?;
    diesel::update(
        lock_waiters::table
            .filter(lock_waiters::session_id.eq(session_id))
            .filter(lock_waiters::expires_at.gt(cutoff)),
    )
    .set(lock_waiters::expires_at.eq(cutoff))
    .execute(conn)?;
    diesel::update(lock_waiters::table.filter(lock_waiters::session_id.eq(session_id)))
        .set(lock_waiters::disconnected_at.eq(Some(now)))
        .execute(conn)?;
    Ok(())
}

/// The tab is back within the grace: its locks that are still in force, and
/// its places in line, get a full lease again.
pub fn reconnect(
    conn: &mut DbConn,
    session_id: &str,
    user_id: UserId,
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    let sessions = [session_id.to_owned()];
    Lock::lock_rows_of_sessions(conn, &sessions)?;
    let mut renewed = diesel::update(
        locks::table
            .filter(locks::session_id.eq(session_id))
            .filter(locks::user_id.eq(user_id))
            .filter(locks::expires_at.gt(now)),
    )
    .set((
        locks::expires_at.eq(clock::after(now, ttl)),
        locks::disconnected_at.eq(None::<NaiveDateTime>),
    ))
    .execute(conn)?;
    Waiter::lock_rows_of_sessions(conn, &sessions)?;
    renewed += diesel::update(
        lock_waiters::table
            .filter(lock_waiters::session_id.eq(session_id))
            .filter(lock_waiters::user_id.eq(user_id))
            .filter(lock_waiters::expires_at.gt(now)),
    )
    .set((
        lock_waiters::expires_at.eq(clock::after(now, ttl)),
        lock_waiters::disconnected_at.eq(None::<NaiveDateTime>),
    ))
    .execute(conn)?;
    Ok(renewed)
}
