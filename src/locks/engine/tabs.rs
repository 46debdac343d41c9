//! What ending a tab, a membership, a rank or an account does to locks and
//! lines, and a tab's lease while it comes and goes. These run inside the
//! transaction of the change that causes them (a membership changed, a
//! user removed, a tab joining or leaving a channel), so they take the
//! caller's `Tx`; they are the engine's, and nothing outside it ends a lock
//! by hand.

use std::time::Duration;

use crate::auth::Actor;
use crate::clock;
use crate::db::{KickReason, Outgoing, Tabs, Tx};
use crate::error::{AppError, AppResult};
use crate::locks::holding::{end, Line};
use crate::locks::line;
use crate::locks::policy::LockPolicy;
use crate::models::{CaseId, Lock, LockAction, Presence, Tab, UserId, UserRef, Waiter, WaiterEnd};

pub use crate::locks::lease::{disconnect, reconnect, renew_for_tabs};

/// Closes every tab with `session_id` (of `user` only, if given): its
/// locks end (`kicked`, by the admin) and are handed on, it leaves every
/// line, and it is told and closed on every instance. 404 when no open
/// tab, lock or place in line has that session id.
pub(super) fn kick(
    tx: &mut Tx,
    admin: &Actor,
    session_id: &str,
    user: Option<UserId>,
    presence_ttl: Duration,
    policy: &LockPolicy,
) -> AppResult<()> {
    // Every tab with this session id, or the one of this user.
    let tabs: Vec<Tab> = match user {
        Some(user_id) => vec![Tab {
            user_id,
            session_id: session_id.to_owned(),
        }],
        None => Presence::tabs_with_session(tx.conn, session_id)?,
    };
    // Rows in the row-lock order of `crate::locks`: its locks, then every
    // place in line this touches.
    Lock::lock_rows_of_tabs(tx.conn, &tabs)?;
    let (mut locks, mut places) = (Vec::new(), Vec::new());
    for tab in &tabs {
        locks.extend(Lock::of_tab(tx.conn, tab)?);
        places.extend(Waiter::of_tab(tx.conn, tab)?);
    }
    line::lock_places_for_leaving(tx, &places, &locks)?;
    let seen_since = clock::before(tx.now, presence_ttl);
    let by = admin.user.to_ref();
    let mut found = !locks.is_empty();
    for tab in &tabs {
        found |= Presence::live_of_tab(tx.conn, tab, None, seen_since)? > 0;
        // Out of its lines first, so that none of its locks goes back to it.
        found |= line::leave_tab(tx, tab, WaiterEnd::Kicked)? > 0;
    }
    if !found {
        return Err(AppError::not_found(format!(
            "No open tab, lock or place in line has session id {session_id}."
        )));
    }
    for tab in &tabs {
        // Read again: a grant to this tab may have committed meanwhile.
        for held in &Lock::of_tab(tx.conn, tab)? {
            end(
                tx,
                held,
                LockAction::Kicked,
                Some(&by),
                Line::HandOff(policy),
            )?;
        }
    }
    tx.publish(Outgoing::Close {
        tabs: Tabs::Session {
            session: session_id.to_owned(),
            user: user.map(UserId::get),
        },
        reason: KickReason::Kicked,
    });
    Ok(())
}

/// Ends a user's locks (`kicked`, handed to the next in line) and places in
/// line in the cases `in_case` picks: their role there ended or narrowed.
pub fn end_holdings_where(
    tx: &mut Tx,
    user_id: UserId,
    in_case: impl Fn(CaseId) -> bool,
    policy: &LockPolicy,
) -> AppResult<()> {
    // Orders this with every lock write of the case (as a deep acquire
    // does): an acquire that read the old role before this commits does
    // not insert a lock after it.
    Lock::order_with_deep_acquires(tx.conn, true)?;
    // The row-lock order of `end_all_holdings`.
    Lock::lock_rows_of_user(tx.conn, user_id)?;
    let places: Vec<_> = Waiter::of_user(tx.conn, user_id)?
        .into_iter()
        .filter(|(waiter, _)| in_case(waiter.case_id))
        .collect();
    let held_in_cases = |tx: &mut Tx| -> AppResult<Vec<_>> {
        Ok(Lock::of_user(tx.conn, user_id)?
            .into_iter()
            .filter(|held| in_case(held.lock.case_id))
            .collect())
    };
    let held = held_in_cases(tx)?;
    line::lock_places_for_leaving(tx, &places, &held)?;
    for (waiter, user) in &places {
        line::leave(tx, waiter, user, WaiterEnd::Kicked)?;
    }
    for held in held_in_cases(tx)? {
        end(tx, &held, LockAction::Kicked, None, Line::HandOff(policy))?;
    }
    Ok(())
}

/// A removed user: out of every line first (so that none of their locks
/// goes back to them), then every lock of theirs ends (`kicked`, by `by`
/// when an admin did it) and is handed to the next in line.
pub fn end_all_holdings(
    tx: &mut Tx,
    user_id: UserId,
    by: Option<&UserRef>,
    policy: &LockPolicy,
) -> AppResult<()> {
    // Rows in the row-lock order of `crate::locks`: their locks, then every
    // place in line this touches.
    Lock::lock_rows_of_user(tx.conn, user_id)?;
    let places = Waiter::of_user(tx.conn, user_id)?;
    let held = Lock::of_user(tx.conn, user_id)?;
    line::lock_places_for_leaving(tx, &places, &held)?;
    line::remove_user(tx, user_id)?;
    for held in Lock::of_user(tx.conn, user_id)? {
        end(tx, &held, LockAction::Kicked, by, Line::HandOff(policy))?;
    }
    Ok(())
}

/// `baton schema drop`: every lock on a record of `type_name` ends as any
/// lock ends (audited as `kicked`, broadcast as its `destroy`), its line
/// dropped with the records.
pub fn end_locks_of_type(tx: &mut Tx, type_name: &str) -> AppResult<()> {
    for held in Lock::of_type(tx.conn, type_name)? {
        end(tx, &held, LockAction::Kicked, None, Line::Drop)?;
    }
    Ok(())
}
