//! Lease changes driven by a tab's edits channel: pongs (and the tab's own
//! pings) extend the leases of its locks (never their activity) and of its places in waiting lines, a
//! closed tab leaves them only the grace period, and a tab that reconnects in
//! time gets them back.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::clock;
use crate::db::schema::{lock_waiters, locks, memberships, users};
use crate::db::DbConn;
use crate::locks::rules::HOLDER_ROLE;
use crate::models::presence::users_and_sessions;
use crate::models::{CaseId, Lock, LockId, Role, Tab, UserId, Waiter, WaiterId};

/// Most tabs read by one statement: SQLite binds each session id (and
/// limits how many one statement takes); PostgreSQL binds the whole list as
/// one array.
fn chunk_size(conn: &DbConn) -> usize {
    match conn {
        DbConn::Sqlite(_) => 400,
        DbConn::Postgresql(_) => usize::MAX,
    }
}

/// Extends the leases of every live lock held by these (answering) tabs,
/// and of their live places in line, in a few statements however many tabs
/// there are. Only exactly these tabs' (another user who sends one of
/// their session ids renews nothing of theirs), and only while the holder
/// is an editor or above of the lock's case.
pub fn renew_for_tabs(
    conn: &mut DbConn,
    tabs: &[Tab],
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    if tabs.is_empty() {
        return Ok(0);
    }
    let held = Held::by_tabs(conn, tabs, now)?;
    Ok(renew_locks(conn, &held.locks, now, ttl)? + renew_places(conn, &held.places, now, ttl)?)
}

/// What answering tabs hold: live locks (with their type, whose lease
/// they renew to) and live places in line.
#[derive(Default)]
struct Held {
    locks: Vec<(LockId, String)>,
    places: Vec<WaiterId>,
}

impl Held {
    /// Read a chunk of tabs at a time; kept only where the row's user and
    /// tab are one of `tabs` (the query matches users and tabs apart), and
    /// a lock only while its holder may hold it (`rules::may_hold`).
    fn by_tabs(conn: &mut DbConn, tabs: &[Tab], now: NaiveDateTime) -> QueryResult<Held> {
        let answering: HashSet<(UserId, &str)> = tabs
            .iter()
            .map(|t| (t.user_id, t.session_id.as_str()))
            .collect();
        let is_answering = |user: UserId, session: Option<&str>| {
            session.is_some_and(|s| answering.contains(&(user, s)))
        };
        let editors = Role::at_least(HOLDER_ROLE);
        let mut held = Held::default();
        for chunk in tabs.chunks(chunk_size(conn)) {
            let (users, sessions) = users_and_sessions(chunk);
            let rows: Vec<(LockId, UserId, Option<String>, String)> = locks::table
                .inner_join(users::table)
                .left_join(
                    memberships::table.on(memberships::case_id
                        .eq(locks::case_id)
                        .and(memberships::user_id.eq(locks::user_id))),
                )
                .filter(locks::session_id.eq_any(&sessions))
                .filter(locks::user_id.eq_any(&users))
                .filter(locks::expires_at.gt(now))
                .filter(locks::disconnected_at.is_null())
                .filter(users::admin.or(memberships::role.nullable().eq_any(&editors)))
                .select((
                    locks::id,
                    locks::user_id,
                    locks::session_id,
                    locks::lockable_type,
                ))
                .load(conn)?;
            held.locks.extend(
                rows.into_iter()
                    .filter(|(_, user, session, _)| is_answering(*user, session.as_deref()))
                    .map(|(id, _, _, type_name)| (id, type_name)),
            );
            let places: Vec<(WaiterId, UserId, String)> = lock_waiters::table
                .filter(lock_waiters::session_id.eq_any(&sessions))
                .filter(lock_waiters::user_id.eq_any(&users))
                .filter(lock_waiters::expires_at.gt(now))
                .filter(lock_waiters::disconnected_at.is_null())
                .select((
                    lock_waiters::id,
                    lock_waiters::user_id,
                    lock_waiters::session_id,
                ))
                .load(conn)?;
            held.places.extend(
                places
                    .into_iter()
                    .filter(|(_, user, session)| is_answering(*user, Some(session)))
                    .map(|(id, _, _)| id),
            );
        }
        Ok(held)
    }
}

/// One ordered row lock over them all (the row-lock order of
/// `crate::locks`), then one UPDATE per lease in force.
fn renew_locks(
    conn: &mut DbConn,
    held: &[(LockId, String)],
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    if held.is_empty() {
        return Ok(0);
    }
    let ids: Vec<LockId> = held.iter().map(|(id, _)| *id).collect();
    Lock::lock_rows(conn, &ids)?;
    let mut by_lease: BTreeMap<Duration, Vec<LockId>> = BTreeMap::new();
    for (id, type_name) in held {
        let lease = crate::schema::LockRules::of(type_name).lease_or(ttl);
        by_lease.entry(lease).or_default().push(*id);
    }
    let mut renewed = 0;
    for (lease, ids) in by_lease {
        let until = clock::after(now, lease);
        for chunk in ids.chunks(chunk_size(conn)) {
            renewed += diesel::update(
                locks::table
                    .filter(locks::id.eq_any(chunk))
                    .filter(locks::expires_at.gt(now))
                    .filter(locks::expires_at.lt(until))
                    .filter(locks::disconnected_at.is_null()),
            )
            .set(locks::expires_at.eq(until))
            .execute(conn)?;
        }
    }
    Ok(renewed)
}

/// Places in line: ordered row locks, then one UPDATE to the server's lease.
fn renew_places(
    conn: &mut DbConn,
    places: &[WaiterId],
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    if places.is_empty() {
        return Ok(0);
    }
    Waiter::lock_rows(conn, places)?;
    let until = clock::after(now, ttl);
    let mut renewed = 0;
    for chunk in places.chunks(chunk_size(conn)) {
        renewed += diesel::update(
            lock_waiters::table
                .filter(lock_waiters::id.eq_any(chunk))
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
/// locks and waiters already ([`Lock::lock_rows_of_tabs`], [`Waiter::lock_rows_of_tabs`]):
/// the channel's leave does so before it counts the tab's other connections.
pub fn disconnect(
    conn: &mut DbConn,
    tab: &Tab,
    now: NaiveDateTime,
    grace: Duration,
) -> QueryResult<()> {
    let cutoff = clock::after(now, grace);
    let (user, session) = (tab.user_id, tab.session_id.as_str());
    let of_tab = locks::session_id.eq(session).and(locks::user_id.eq(user));
    diesel::update(
        locks::table
            .filter(of_tab)
            .filter(locks::expires_at.gt(cutoff)),
    )
    .set(locks::expires_at.eq(cutoff))
    .execute(conn)?;
    diesel::update(locks::table.filter(of_tab))
        .set(locks::disconnected_at.eq(Some(now)))
        .execute(conn)?;
    let in_line = lock_waiters::session_id
        .eq(session)
        .and(lock_waiters::user_id.eq(user));
    diesel::update(
        lock_waiters::table
            .filter(in_line)
            .filter(lock_waiters::expires_at.gt(cutoff)),
    )
    .set(lock_waiters::expires_at.eq(cutoff))
    .execute(conn)?;
    diesel::update(lock_waiters::table.filter(in_line))
        .set(lock_waiters::disconnected_at.eq(Some(now)))
        .execute(conn)?;
    Ok(())
}

/// The tab is back within the grace: its locks that are still in force,
/// and its places in line, get a full lease again — only those in cases
/// where its user may still hold them (a site admin, or an editor or above
/// of the case): a tab rejoining renews nothing its user may no longer hold.
pub fn reconnect(
    conn: &mut DbConn,
    tab: &Tab,
    now: NaiveDateTime,
    ttl: Duration,
) -> QueryResult<usize> {
    let (session_id, user_id) = (tab.session_id.as_str(), tab.user_id);
    let tabs = std::slice::from_ref(tab);
    let admin: bool = users::table
        .find(user_id)
        .select(users::admin)
        .get_result(conn)
        .optional()?
        .unwrap_or(false);
    let editing: Vec<CaseId> = if admin {
        Vec::new()
    } else {
        memberships::table
            .filter(memberships::user_id.eq(user_id))
            .filter(memberships::role.eq_any(Role::at_least(HOLDER_ROLE)))
            .select(memberships::case_id)
            .load(conn)?
    };
    let may_hold_anywhere = admin.into_sql::<diesel::sql_types::Bool>();
    Lock::lock_rows_of_tabs(conn, tabs)?;
    let mut renewed = diesel::update(
        locks::table
            .filter(locks::session_id.eq(session_id))
            .filter(locks::user_id.eq(user_id))
            .filter(locks::expires_at.gt(now))
            .filter(locks::case_id.eq_any(&editing).or(may_hold_anywhere)),
    )
    .set((
        locks::expires_at.eq(clock::after(now, ttl)),
        locks::disconnected_at.eq(None::<NaiveDateTime>),
    ))
    .execute(conn)?;
    Waiter::lock_rows_of_tabs(conn, tabs)?;
    renewed += diesel::update(
        lock_waiters::table
            .filter(lock_waiters::session_id.eq(session_id))
            .filter(lock_waiters::user_id.eq(user_id))
            .filter(lock_waiters::expires_at.gt(now))
            .filter(lock_waiters::case_id.eq_any(&editing).or(may_hold_anywhere)),
    )
    .set((
        lock_waiters::expires_at.eq(clock::after(now, ttl)),
        lock_waiters::disconnected_at.eq(None::<NaiveDateTime>),
    ))
    .execute(conn)?;
    Ok(renewed)
}
