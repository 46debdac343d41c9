//! The waiting line: tabs that asked for a held record with `wait: true`,
//! served first come, first served. When a lock ends for any reason but a
//! takeover, [`hand_off`] gives the record to the oldest live waiter in the
//! same transaction, so it is never free in between for someone who did not
//! wait. Every function runs inside the caller's write transaction.
//!
//! Row-lock order (PostgreSQL, see `crate::locks`): a joining tab locks the
//! holder's `locks` row (setting `has_waiters`) before it inserts its waiter;
//! an ending lock's `locks` row is deleted before its line is read `FOR
//! UPDATE`. So a join and a hand-off of the same holding are serialized on
//! the lock's row: either the join commits first and the hand-off sees it,
//! or the join finds the lock gone and asks again.

use chrono::NaiveDateTime;

use super::policy::LockPolicy;
use super::render::{ended_waiter, lock_view, waiter_view};
use super::rules;
use super::target::{kind_named, LockTarget};
use crate::auth::access::{rank_of_user_id, rank_on};
use crate::auth::Actor;
use crate::clock;
use crate::db::{DbConn, Tx};
use crate::error::{AppError, AppResult};
use crate::models::lock::NewLock;
use crate::models::waiter::{NewWaiter, QueuedWaiter, WaiterEnd};
use crate::models::{
    CaseId, HeldLock, Lock, LockAction, LockEvent, Tab, UserId, UserRef, Waiter, WaiterId,
};
use crate::views::Change;

/// A tab's place in a line, as `POST /locks` with `wait` answers it.
pub enum Joined {
    /// The tab joined now (202).
    New(QueuedWaiter),
    /// It was in the line already; its lease was renewed (200).
    Again(QueuedWaiter),
}

/// The tab that would wait: 422 without `X-Session-ID`, since a place in
/// line lives as long as its tab.
pub fn waiting_tab(actor: &Actor) -> AppResult<&str> {
    actor.session_id.as_deref().ok_or_else(|| {
        AppError::invalid(
            "Send X-Session-ID to wait for a lock: the waiting line is kept per browser tab.",
        )
    })
}

/// Puts the actor's tab in the line for `target`, which `held` holds. `None`
/// when that lock ended meanwhile: the caller asks for the record again.
pub fn join(
    tx: &mut Tx,
    actor: &Actor,
    target: &LockTarget,
    held: &HeldLock,
    policy: &LockPolicy,
) -> AppResult<Option<Joined>> {
    let session_id = waiting_tab(actor)?;
    // Locks the holder's row until commit: a release of it waits for this
    // join and then hands the record over to this line.
    if Lock::mark_waited_on(tx.conn, held.lock.id)?.is_none() {
        return Ok(None);
    }
    let (type_name, id) = (target.identity.type_name, target.identity.id);
    let expires_at = clock::after(tx.now, policy.ttl);
    if let Some(mine) = Waiter::of_tab_on(tx.conn, type_name, id, actor.user.id, session_id)? {
        let renewed = if mine.is_live(tx.now) {
            Waiter::renew(tx.conn, mine.id, expires_at)?
        } else {
            None
        };
        if let Some(renewed) = renewed {
            let queued = queued(tx.conn, renewed, actor.user.to_ref(), tx.now)?;
            tx.emit(
                queued.waiter.case_id,
                Change::Update,
                waiter_view(&queued).into(),
            );
            return Ok(Some(Joined::Again(queued)));
        }
        // Its lease ran out before the reaper came by (or the tab left the
        // line meanwhile): that place ends; join anew.
        leave(tx, &mine, &actor.user.to_ref(), overdue_reason(&mine))?;
    }
    let new = NewWaiter {
        lockable_type: type_name,
        lockable_id: id,
        case_id: target.case_id,
        user_id: actor.user.id,
        session_id,
        user_agent: actor.user_agent.as_deref(),
        created_at: tx.now,
        expires_at,
        lockable_param: target.external_param(),
    };
    let Some(waiter) = Waiter::insert(tx.conn, &new)? else {
        // The same tab joined in a concurrent request; it has its place.
        return Err(AppError::Conflict(format!(
            "This tab is joining the line for {} already; try again.",
            target.identity.label()
        )));
    };
    tx.audit(LockEvent::entry(
        &held.lock,
        Some(actor.user.id),
        LockAction::Queued,
        tx.now,
    ));
    tx.after_commit(|| super::counting::count_event(LockAction::Queued));
    let queued = queued(tx.conn, waiter, actor.user.to_ref(), tx.now)?;
    tx.emit(
        queued.waiter.case_id,
        Change::Create,
        waiter_view(&queued).into(),
    );
    Ok(Some(Joined::New(queued)))
}

/// Gives the record of `ended` (whose row this transaction has just deleted)
/// to the oldest live waiter that may still edit the case: a new lock with a
/// full lease, for the waiter's tab. Waiters found gone on the way leave.
/// `ended_by` is why the old lock ended (for the metrics).
pub fn hand_off(
    tx: &mut Tx,
    ended: &Lock,
    ended_by: LockAction,
    policy: &LockPolicy,
) -> AppResult<Option<HeldLock>> {
    // Read whole and row-locked: nobody joins meanwhile (a join locks the
    // holder's row, deleted in this transaction), so what is left of it after
    // the one served is the line that continues.
    let mut line =
        Waiter::line_for_update(tx.conn, &ended.lockable_type, ended.lockable_id)?.into_iter();
    while let Some((waiter, user)) = line.next() {
        if !waiter.is_live(tx.now) {
            leave(tx, &waiter, &user, overdue_reason(&waiter))?;
            continue;
        }
        // Handed only to someone who may still hold it, of a record the
        // rules still let anyone hold.
        if !rules::may_hold(rank_of_user_id(tx.conn, user.id, waiter.case_id)?)
            || refused_as_it_is(tx, &waiter)?
        {
            leave(tx, &waiter, &user, WaiterEnd::Kicked)?;
            continue;
        }
        let line_continues = line.len() > 0;
        return grant(tx, waiter, user, line_continues, ended_by, policy).map(Some);
    }
    Ok(None)
}

/// A rule refuses a lock on the waiter's record as it is now
/// (`rules::refusal`); read only for types some rule judges that way.
fn refused_as_it_is(tx: &mut Tx, waiter: &Waiter) -> AppResult<bool> {
    let Some(kind) = kind_named(&waiter.lockable_type).filter(|kind| rules::judges_records(kind))
    else {
        return Ok(false);
    };
    let Some(target) = kind.find(tx.conn, waiter.lockable_id)? else {
        return Ok(false);
    };
    Ok(rules::refusal(kind, &target).is_some())
}

/// The hand-off itself: the waiter leaves (`granted`) and its tab gets a new
/// lock, audited `handed_off`, marked waited on when `line_continues`.
/// Broadcast after the old lock's `destroy`.
fn grant(
    tx: &mut Tx,
    waiter: Waiter,
    user: UserRef,
    line_continues: bool,
    ended_by: LockAction,
    policy: &LockPolicy,
) -> AppResult<HeldLock> {
    leave(tx, &waiter, &user, WaiterEnd::Granted)?;
    let new = NewLock {
        lockable_type: &waiter.lockable_type,
        lockable_id: waiter.lockable_id,
        case_id: waiter.case_id,
        user_id: waiter.user_id,
        session_id: Some(&waiter.session_id),
        user_agent: waiter.user_agent.as_deref(),
        created_at: tx.now,
        expires_at: clock::after(tx.now, policy.lease_of(&waiter.lockable_type)),
        last_activity_at: tx.now,
        deep: false,
        lockable_param: waiter.lockable_param.as_deref(),
    };
    // The old holding's row is gone in this transaction, and a concurrent
    // insert of the same record waits for it: the record cannot be taken.
    let mut lock = Lock::insert_if_free(tx.conn, &new)?.ok_or_else(|| {
        AppError::Conflict(format!(
            "{} {} was taken during its hand-off; try again.",
            waiter.lockable_type,
            waiter
                .lockable_param
                .clone()
                .unwrap_or(waiter.lockable_id.to_string())
        ))
    })?;
    if let Some(closed) = waiter.disconnected_at {
        // The waiting tab closed and may come back within its grace: the
        // lock lives as long as the waiter would have.
        lock = Lock::disconnected(tx.conn, lock.id, closed, waiter.expires_at)?.unwrap_or(lock);
    }
    if line_continues {
        lock = Lock::mark_waited_on(tx.conn, lock.id)?.unwrap_or(lock);
    }
    tx.audit(LockEvent::entry(
        &lock,
        Some(waiter.user_id),
        LockAction::HandedOff,
        tx.now,
    ));
    let waited = (tx.now - waiter.created_at)
        .to_std()
        .unwrap_or_default()
        .as_secs_f64();
    tx.after_commit(move || {
        super::counting::count_event(LockAction::HandedOff);
        metrics::counter!("baton_handoffs_total", "reason" => ended_by.as_str()).increment(1);
        metrics::histogram!("baton_wait_seconds").record(waited);
    });
    let held = HeldLock { lock, holder: user };
    tx.emit(held.lock.case_id, Change::Create, lock_view(&held).into());
    Ok(held)
}

/// Marks a new holding waited on when its record's line is not empty (after
/// a takeover), so that its release, too, hands the record over.
pub fn keep_waiting_for(tx: &mut Tx, lock: &Lock) -> AppResult<()> {
    if !Waiter::ids_in_line(tx.conn, &lock.lockable_type, lock.lockable_id)?.is_empty() {
        Lock::mark_waited_on(tx.conn, lock.id)?;
    }
    Ok(())
}

/// Takes a waiter out of its line and broadcasts its `destroy`; does nothing
/// when another transaction took it out first.
pub fn leave(tx: &mut Tx, waiter: &Waiter, user: &UserRef, reason: WaiterEnd) -> AppResult<bool> {
    if !Waiter::delete(tx.conn, waiter.id)? {
        return Ok(false);
    }
    let gone = QueuedWaiter {
        waiter: waiter.clone(),
        user: user.clone(),
        position: 0,
    };
    tx.emit(waiter.case_id, Change::Destroy, ended_waiter(&gone, reason));
    Ok(true)
}

/// Why a waiter past its lease is gone.
fn overdue_reason(waiter: &Waiter) -> WaiterEnd {
    if waiter.disconnected_at.is_some() {
        WaiterEnd::Disconnected
    } else {
        WaiterEnd::Expired
    }
}

/// Empties a record's line (the record was deleted): each waiter `left`.
pub fn drop_line(tx: &mut Tx, lockable_type: &str, lockable_id: i64) -> AppResult<()> {
    for (waiter, user) in Waiter::line_for_update(tx.conn, lockable_type, lockable_id)? {
        leave(tx, &waiter, &user, WaiterEnd::Left)?;
    }
    Ok(())
}

/// Before a tab (or a user) leaves its lines and ends its locks in one
/// transaction: row-locks, in id order, every place in line that this will
/// touch — its own `places`, and the lines of the records it holds, which
/// its releases hand over (PostgreSQL; the caller has row-locked `held`, so
/// nobody joins those lines meanwhile). Two tabs that wait for each other's
/// records and close at once then queue on the same rows in one order,
/// instead of deadlocking.
pub fn lock_places_for_leaving(
    tx: &mut Tx,
    places: &[(Waiter, UserRef)],
    held: &[HeldLock],
) -> AppResult<()> {
    let mut ids: Vec<WaiterId> = places.iter().map(|(waiter, _)| waiter.id).collect();
    for holding in held {
        let lock = &holding.lock;
        ids.extend(Waiter::ids_in_line(
            tx.conn,
            &lock.lockable_type,
            lock.lockable_id,
        )?);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(Waiter::lock_rows(tx.conn, &ids)?)
}

/// The actor's tab leaves the line for `target` if it is in it (a takeover:
/// "Edit anyway" skips the line).
pub fn leave_for_takeover(tx: &mut Tx, actor: &Actor, target: &LockTarget) -> AppResult<()> {
    let Some(session_id) = actor.session_id.as_deref() else {
        return Ok(());
    };
    let (type_name, id) = (target.identity.type_name, target.identity.id);
    if let Some(mine) = Waiter::of_tab_on(tx.conn, type_name, id, actor.user.id, session_id)? {
        leave(tx, &mine, &actor.user.to_ref(), WaiterEnd::Left)?;
    }
    Ok(())
}

/// 404: the waiter has left its line.
fn gone_waiter(id: WaiterId) -> AppError {
    AppError::not_found(format!(
        "Waiter {id} is no longer in line (granted, left or expired); see whether your tab \
         holds the lock, or ask for it again."
    ))
}

/// Loads a waiter that still waits, or 404; 403 (naming only the waiter
/// asked for) when the actor is not a member of its case, before anything
/// is written or locked.
fn find_live(tx: &mut Tx, actor: &Actor, id: WaiterId) -> AppResult<(Waiter, UserRef)> {
    let (waiter, user) = Waiter::find(tx.conn, id)?.ok_or_else(|| gone_waiter(id))?;
    if rank_on(tx.conn, &actor.user, waiter.case_id)?.is_none() {
        return Err(AppError::forbidden(format!(
            "Waiter {id} waits in a case you are not a member of."
        )));
    }
    if !waiter.is_live(tx.now) {
        leave(tx, &waiter, &user, overdue_reason(&waiter))?;
        return Err(gone_waiter(id));
    }
    Ok((waiter, user))
}

/// Whether the actor's tab is this waiter's (a request without a session id
/// acts for the user as a whole, as with locks).
fn is_waiting_tab(waiter: &Waiter, actor: &Actor) -> bool {
    waiter.user_id == actor.user.id
        && actor
            .session_id
            .as_deref()
            .is_none_or(|mine| mine == waiter.session_id)
}

/// `POST /waiters/:id/refresh`: its tab renews its place's lease.
pub fn refresh(
    tx: &mut Tx,
    actor: &Actor,
    id: WaiterId,
    policy: &LockPolicy,
) -> AppResult<QueuedWaiter> {
    let (waiter, user) = find_live(tx, actor, id)?;
    if !is_waiting_tab(&waiter, actor) {
        return Err(AppError::forbidden(format!(
            "Only the tab waiting as waiter {id} can refresh it."
        )));
    }
    // Gone meanwhile (granted or left in a transaction that committed while
    // this one waited for the row): 404, and no frame for a gone waiter.
    let renewed = Waiter::renew(tx.conn, waiter.id, clock::after(tx.now, policy.ttl))?
        .ok_or_else(|| gone_waiter(id))?;
    let queued = queued(tx.conn, renewed, user, tx.now)?;
    tx.emit(
        queued.waiter.case_id,
        Change::Update,
        waiter_view(&queued).into(),
    );
    Ok(queued)
}

/// `DELETE /waiters/:id`: its tab (or its user) leaves the line.
pub fn leave_line(tx: &mut Tx, actor: &Actor, id: WaiterId) -> AppResult<()> {
    let (waiter, user) = find_live(tx, actor, id)?;
    if waiter.user_id != actor.user.id {
        // A member sees the line anyway: naming who waits tells them nothing new.
        return Err(AppError::forbidden(format!(
            "Waiter {id} is {}'s place in line; only they can leave it.",
            user.name
        )));
    }
    // Granted (or left) by a transaction that committed while this one
    // waited for the row: the tab did not leave, and is told so.
    if !leave(tx, &waiter, &user, WaiterEnd::Left)? {
        return Err(gone_waiter(id));
    }
    Ok(())
}

/// Every waiter of a tab leaves, for `reason` (`left` when the tab said so,
/// `kicked` when an admin closed it).
pub fn leave_tab(tx: &mut Tx, tab: &Tab, reason: WaiterEnd) -> AppResult<usize> {
    let mut left = 0;
    for (waiter, user) in Waiter::of_tab(tx.conn, tab)? {
        if leave(tx, &waiter, &user, reason)? {
            left += 1;
        }
    }
    Ok(left)
}

/// Every waiter of a removed user leaves (`kicked`).
pub fn remove_user(tx: &mut Tx, user_id: UserId) -> AppResult<()> {
    for (waiter, user) in Waiter::of_user(tx.conn, user_id)? {
        leave(tx, &waiter, &user, WaiterEnd::Kicked)?;
    }
    Ok(())
}

/// Ends the waiters whose lease ran out (up to `limit`); returns how many.
pub fn reap(tx: &mut Tx, limit: i64) -> AppResult<usize> {
    let mut ended = 0;
    for (waiter, user) in Waiter::due(tx.conn, tx.now, limit)? {
        if leave(tx, &waiter, &user, overdue_reason(&waiter))? {
            ended += 1;
        }
    }
    Ok(ended)
}

/// The waiter with its place in its line.
fn queued(
    conn: &mut DbConn,
    waiter: Waiter,
    user: UserRef,
    now: NaiveDateTime,
) -> AppResult<QueuedWaiter> {
    let position = Waiter::ahead_of(conn, &waiter, now)? + 1;
    Ok(QueuedWaiter {
        waiter,
        user,
        position,
    })
}

/// The live waiters of one record's line, first first, with their places.
pub fn line_of(
    conn: &mut DbConn,
    lockable_type: &str,
    lockable_id: i64,
    now: NaiveDateTime,
) -> AppResult<Vec<QueuedWaiter>> {
    Ok(numbered(
        Waiter::line(conn, lockable_type, lockable_id)?,
        now,
    ))
}

/// The live waiters of a case, line by line, with their places.
pub fn waiters_of_case(
    conn: &mut DbConn,
    case_id: CaseId,
    now: NaiveDateTime,
) -> AppResult<Vec<QueuedWaiter>> {
    Ok(numbered(Waiter::of_case(conn, case_id)?, now))
}

/// Numbers the live waiters of lines given first first, line after line.
fn numbered(rows: Vec<(Waiter, UserRef)>, now: NaiveDateTime) -> Vec<QueuedWaiter> {
    let mut out: Vec<QueuedWaiter> = Vec::with_capacity(rows.len());
    for (waiter, user) in rows.into_iter().filter(|(w, _)| w.is_live(now)) {
        let same_line = out.last().is_some_and(|prev| {
            prev.waiter.lockable_type == waiter.lockable_type
                && prev.waiter.lockable_id == waiter.lockable_id
        });
        let position = if same_line {
            out.last().map_or(1, |prev| prev.position + 1)
        } else {
            1
        };
        out.push(QueuedWaiter {
            waiter,
            user,
            position,
        });
    }
    out
}
