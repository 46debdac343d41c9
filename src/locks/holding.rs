//! The rules of a holding: whose a lock is, when it is over, how it ends
//! (audited, broadcast, its line handed off, kept or dropped), who may
//! override it, and the activity a write renews. Used by the engine, the
//! guard, deep locks and the reaper alike.

use chrono::NaiveDateTime;

use super::counting::count_after_commit;
use super::line;
use super::policy::LockPolicy;
use super::render::{ended_lock, held_message, lock_view};
use super::rules;
use crate::auth::access::{rank_of_user_id, rank_on};
use crate::auth::Actor;
use crate::clock;
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::models::{HeldLock, Lock, LockAction, LockEvent, Role, UserRef};
use crate::schema::{LockRules, TakeoverRule};
use crate::views::Change;

/// Whether the actor is the holder ([`rules::held_by`]): a request without
/// a session id acts for the user as a whole.
pub fn is_held_by(lock: &Lock, actor: &Actor) -> bool {
    rules::held_by(lock, actor.user.id, actor.session_id.as_deref(), false)
}

/// Why a lock is over although its row still exists, if it is: `None`
/// while it is [`rules::in_force`].
pub fn overdue(lock: &Lock, now: NaiveDateTime, policy: &LockPolicy) -> Option<LockAction> {
    if rules::in_force(lock, now, policy) {
        None
    } else if lock.last_activity_at <= clock::before(now, policy.idle_timeout) {
        Some(LockAction::Idle)
    } else if lock.expires_at <= now && lock.disconnected_at.is_some() {
        Some(LockAction::Disconnected)
    } else {
        Some(LockAction::Expired)
    }
}

/// What becomes of a record's waiting line when its lock ends.
#[derive(Clone, Copy)]
pub enum Line<'a> {
    /// The oldest live waiter gets the record in the same transaction: every
    /// end but a takeover.
    HandOff(&'a LockPolicy),
    /// The line stays as it is: a takeover gives the record to the taker.
    Keep,
    /// The record is being deleted: its line goes with it.
    Drop,
}

/// Ends a lock: deletes it, writes the audit row, queues its `destroy`, then
/// does with the record's waiting line what `then` says (a hand-off's
/// frames follow the `destroy`). Returns `false` (and does nothing else)
/// when another transaction ended it first, so each lock is released,
/// audited and broadcast once.
pub fn end(
    tx: &mut Tx,
    held: &HeldLock,
    reason: LockAction,
    actor: Option<&UserRef>,
    then: Line,
) -> AppResult<bool> {
    let lock = &held.lock;
    let Some(has_waiters) = Lock::delete(tx.conn, lock.id)? else {
        return Ok(false);
    };
    tx.audit(LockEvent::entry(lock, actor.map(|a| a.id), reason, tx.now));
    count_after_commit(tx, reason);
    let overridden_by = actor.filter(|_| reason == LockAction::Overridden);
    tx.emit(
        lock.case_id,
        Change::Destroy,
        ended_lock(held, reason, overridden_by),
    );
    match then {
        Line::HandOff(policy) if has_waiters => {
            line::hand_off(tx, lock, reason, policy)?;
        }
        Line::HandOff(_) | Line::Keep => {}
        Line::Drop => line::drop_line(tx, &lock.lockable_type, lock.lockable_id)?,
    }
    Ok(true)
}

/// Ends the lock if its lease or activity ran out, handing the record to
/// its line; otherwise returns it.
pub fn live_or_end(
    tx: &mut Tx,
    held: HeldLock,
    policy: &LockPolicy,
) -> AppResult<Option<HeldLock>> {
    live_or_end_then(tx, held, policy, Line::HandOff(policy))
}

/// [`live_or_end`], with what becomes of the line when the lock ends: kept
/// for a takeover about to happen, dropped with a record about to go.
pub fn live_or_end_then(
    tx: &mut Tx,
    held: HeldLock,
    policy: &LockPolicy,
    then: Line,
) -> AppResult<Option<HeldLock>> {
    match overdue(&held.lock, tx.now, policy) {
        Some(reason) => {
            end(tx, &held, reason, None, then)?;
            Ok(None)
        }
        None => Ok(Some(held)),
    }
}

/// Refuses (403 `outranked`) unless the actor's rank on the lock's case is at
/// least the holder's. Callers have already checked the actor is an editor.
pub fn ensure_outranks(tx: &mut Tx, actor: &Actor, held: &HeldLock) -> AppResult<()> {
    let case_id = held.lock.case_id;
    let mine = rank_on(tx.conn, &actor.user, case_id)?;
    match LockRules::of(&held.lock.lockable_type).takeover {
        TakeoverRule::Editor => {}
        TakeoverRule::Manager if mine.is_some_and(|r| r.allows(Role::Manager)) => {}
        rule => {
            metrics::counter!("baton_takeovers_refused_total").increment(1);
            let who = match rule {
                TakeoverRule::None => "nobody",
                _ => "only a manager",
            };
            return Err(AppError::Outranked {
                message: format!(
                    "{}; {who} may take over or break a {} lock (its type's lock.takeover).",
                    held_message(held),
                    held.lock.lockable_type
                ),
                lock: Box::new(lock_view(held)),
            });
        }
    }
    let theirs = rank_of_user_id(tx.conn, held.lock.user_id, case_id)?;
    if mine >= theirs {
        return Ok(());
    }
    metrics::counter!("baton_takeovers_refused_total").increment(1);
    Err(AppError::Outranked {
        message: format!(
            "{}, who outranks you on this case ({}); only someone of the same role or higher can override it.",
            held_message(held),
            theirs.map(|r| r.to_string()).unwrap_or_default()
        ),
        lock: Box::new(lock_view(held)),
    })
}

/// Renews the holder's lease and activity after a guarded write, without a
/// broadcast of its own (the write's broadcast says enough).
pub fn touch(tx: &mut Tx, lock: &Lock, policy: &LockPolicy) -> AppResult<()> {
    Lock::renew(
        tx.conn,
        lock.id,
        clock::after(tx.now, policy.lease_of(&lock.lockable_type)),
        Some(tx.now),
    )?;
    Ok(())
}
