//! The general path: acquire, take over, refresh, release and break locks.
//! Every function runs inside the caller's write transaction and queues its
//! broadcasts on it.

use crate::auth::access::{rank_on, Rank};
use crate::auth::Actor;
use crate::clock;
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::counting::count_after_commit;
use crate::locks::holding::{
    end, ensure_outranks, is_held_by, live_or_end, live_or_end_then, overdue, Line,
};
use crate::locks::line::{self, Joined};
use crate::locks::policy::LockPolicy;
use crate::locks::render::{held_message, lock_view};
use crate::locks::rules::{self, AcquireMode};
use crate::locks::subtree;
use crate::locks::target::{kind_named, LockTarget};
use crate::models::lock::NewLock;
use crate::models::{HeldLock, Lock, LockAction, LockEvent, LockId, Role, Tab, Waiter, WaiterEnd};
use crate::views::Change;

/// How many times an acquire retries when the lock changed hands under it.
const ACQUIRE_ATTEMPTS: usize = 4;

pub enum Acquired {
    /// A new holding (201).
    Created(HeldLock),
    /// The caller already held it; the lease was renewed (200).
    Renewed(HeldLock),
    /// Someone else holds it and the caller asked to wait: its tab's place
    /// in the line (202 when new, 200 when it was there already).
    Waiting(Joined),
}

/// `POST /locks`: takes the lock on `target`, or renews the caller's own,
/// or — with `takeover` — revokes the holder's and grants a new one, or —
/// with `wait` — puts the caller's tab in the record's line, all in the
/// caller's transaction.
pub fn acquire(
    tx: &mut Tx,
    actor: &Actor,
    target: &LockTarget,
    mode: AcquireMode,
    policy: &LockPolicy,
) -> AppResult<Acquired> {
    refuse_what_cannot_be(actor, target, mode)?;
    subtree::refuse_inside(tx, actor, target, policy)?;
    let mut took_over =
        mode.deep && subtree::clear_for_deep(tx, actor, target, mode.takeover, policy)?;
    for _ in 0..ACQUIRE_ATTEMPTS {
        let new = new_lock(tx.now, actor, target, mode, policy);
        if let Some(lock) = Lock::insert_if_free(tx.conn, &new)? {
            return granted(tx, actor, target, lock, mode, took_over).map(Acquired::Created);
        }
        // Taken: by whom? (It may have been released since; then go again.)
        let Some(held) = Lock::on(tx.conn, target.identity.type_name, target.identity.id)? else {
            continue;
        };
        // "Edit anyway" skips the line even when the lock it meets is
        // overdue: serving the first waiter here would only have the
        // takeover override them next.
        let then = if mode.takeover {
            Line::Keep
        } else {
            Line::HandOff(policy)
        };
        let Some(held) = live_or_end_then(tx, held, policy, then)? else {
            took_over |= mode.takeover;
            continue;
        };
        if is_held_by(&held.lock, actor) {
            return renewed(tx, target, held, mode, policy).map(Acquired::Renewed);
        }
        if mode.takeover {
            override_lock(tx, actor, &held, Line::Keep)?;
            took_over = true;
            continue;
        }
        if mode.wait {
            match line::join(tx, actor, target, &held, policy)? {
                Some(joined) => return Ok(Acquired::Waiting(joined)),
                None => continue,
            }
        }
        return Err(AppError::LockHeld {
            message: format!(
                "{}; ask them, wait for it (wait), or edit anyway (takeover).",
                held_message(&held)
            ),
            lock: Box::new(lock_view(&held)),
            locks: vec![lock_view(&held)],
        });
    }
    Err(AppError::Conflict(format!(
        "{} changed hands several times while you asked for it; try again.",
        target.identity.label()
    )))
}

/// 422 for what `mode` cannot ask of `target`: a wait without a tab, a
/// deep wait, a wait on a type without lines, a deep lock on a record that
/// holds no others; 403 for a record a rule refuses as it is
/// (`rules::refusal`).
fn refuse_what_cannot_be(actor: &Actor, target: &LockTarget, mode: AcquireMode) -> AppResult<()> {
    if mode.wait {
        line::waiting_tab(actor)?;
        if mode.deep {
            return Err(AppError::invalid(
                "wait is for depth \"0\" locks only: a deep lock cannot wait in line.",
            ));
        }
        let waits = kind_named(target.identity.type_name).is_none_or(|kind| kind.allows_waiting());
        if !waits {
            return Err(AppError::invalid(format!(
                "{} records have no waiting line (their type's lock.wait is false): lock it when it is free, or ask its holder.",
                target.identity.type_name
            )));
        }
    }
    if mode.deep {
        subtree::holding_kind(target)?;
    }
    if let Some(why) =
        kind_named(target.identity.type_name).and_then(|kind| rules::refusal(kind, target))
    {
        return Err(AppError::forbidden(why));
    }
    Ok(())
}

/// The row of a new lock of the actor's on `target`, from now for the
/// lease of its type.
fn new_lock<'a>(
    now: chrono::NaiveDateTime,
    actor: &'a Actor,
    target: &'a LockTarget,
    mode: AcquireMode,
    policy: &LockPolicy,
) -> NewLock<'a> {
    NewLock {
        lockable_type: target.identity.type_name,
        lockable_id: target.identity.id,
        case_id: target.case_id,
        user_id: actor.user.id,
        session_id: actor.session_id.as_deref(),
        user_agent: actor.user_agent.as_deref(),
        created_at: now,
        expires_at: clock::after(now, policy.lease_of(target.identity.type_name)),
        last_activity_at: now,
        deep: mode.deep,
        lockable_param: target.external_param(),
    }
}

/// A new lock was granted: audited, counted and broadcast; a deep one ends
/// the lines inside it; after a takeover, the line waits for this holding.
fn granted(
    tx: &mut Tx,
    actor: &Actor,
    target: &LockTarget,
    lock: Lock,
    mode: AcquireMode,
    took_over: bool,
) -> AppResult<HeldLock> {
    let at = lock.created_at;
    tx.audit(LockEvent::entry(
        &lock,
        Some(actor.user.id),
        LockAction::Acquired,
        at,
    ));
    count_after_commit(tx, LockAction::Acquired);
    let held = HeldLock {
        lock,
        holder: actor.user.to_ref(),
    };
    tx.emit(target.case_id, Change::Create, lock_view(&held).into());
    if mode.deep {
        subtree::end_lines_inside(tx, target)?;
    }
    if took_over {
        // "Edit anyway" skipped the line; whoever still waits is served
        // when this new holding ends.
        line::leave_for_takeover(tx, actor, target)?;
        line::keep_waiting_for(tx, &held.lock)?;
    }
    Ok(held)
}

/// The actor held it already: renewed, and made deep if asked (ending the
/// lines inside).
fn renewed(
    tx: &mut Tx,
    target: &LockTarget,
    held: HeldLock,
    mode: AcquireMode,
    policy: &LockPolicy,
) -> AppResult<HeldLock> {
    let held = if mode.deep && !held.lock.deep {
        let deepened = deepen(tx, held)?;
        subtree::end_lines_inside(tx, target)?;
        deepened
    } else {
        held
    };
    renew(tx, held, policy, true)
}

/// Makes the holder's lock deep (everything inside was cleared for it).
fn deepen(tx: &mut Tx, held: HeldLock) -> AppResult<HeldLock> {
    let HeldLock { lock, holder } = held;
    let lock = Lock::deepen(tx.conn, lock.id)?.unwrap_or(lock);
    Ok(HeldLock { lock, holder })
}

/// Extends the lease (and the activity when `activity`) and broadcasts the
/// lock's new times.
fn renew(tx: &mut Tx, held: HeldLock, policy: &LockPolicy, activity: bool) -> AppResult<HeldLock> {
    let HeldLock { lock, holder } = held;
    let renewed = Lock::renew(
        tx.conn,
        lock.id,
        clock::after(tx.now, policy.lease_of(&lock.lockable_type)),
        activity.then_some(tx.now),
    )?
    .unwrap_or(lock);
    let held = HeldLock {
        lock: renewed,
        holder,
    };
    tx.emit(held.lock.case_id, Change::Update, lock_view(&held).into());
    Ok(held)
}

/// Loads a lock that is still in force, with the actor's rank on its case;
/// 404 when it has ended, 403 (naming only the lock asked for) when the
/// actor is not a member of its case — asked before anything is written or
/// locked.
fn find_live(
    tx: &mut Tx,
    actor: &Actor,
    id: LockId,
    policy: &LockPolicy,
) -> AppResult<(HeldLock, Rank)> {
    let gone = || {
        AppError::not_found(format!(
            "Lock {id} no longer exists (released, overridden or expired); take a new lock."
        ))
    };
    let held = Lock::find(tx.conn, id)?.ok_or_else(gone)?;
    let Some(rank) = rank_on(tx.conn, &actor.user, held.lock.case_id)? else {
        return Err(AppError::forbidden(format!(
            "Lock {id} is in a case you are not a member of."
        )));
    };
    let held = live_or_end(tx, held, policy)?.ok_or_else(gone)?;
    Ok((held, rank))
}

/// `POST /locks/:id/refresh`: the holder renews lease and activity, while
/// an editor or above of the lock's case.
pub fn refresh(tx: &mut Tx, actor: &Actor, id: LockId, policy: &LockPolicy) -> AppResult<HeldLock> {
    let (held, rank) = find_live(tx, actor, id, policy)?;
    if !is_held_by(&held.lock, actor) {
        return Err(AppError::forbidden(format!(
            "Only the tab holding lock {id} can refresh it ({}).",
            held_message(&held)
        )));
    }
    if !rules::may_hold(Some(rank)) {
        return Err(AppError::forbidden(format!(
            "Lock {id} can no longer be renewed: you are a {rank} of its case now, and only an editor or above holds locks."
        )));
    }
    renew(tx, held, policy, true)
}

/// `DELETE /locks/:id`: the holder releases; someone else of equal or higher
/// rank breaks it (recorded as `overridden`, the holder is told).
pub fn release(tx: &mut Tx, actor: &Actor, id: LockId, policy: &LockPolicy) -> AppResult<()> {
    let (held, rank) = find_live(tx, actor, id, policy)?;
    if is_held_by(&held.lock, actor) {
        let me = actor.user.to_ref();
        end(
            tx,
            &held,
            LockAction::Released,
            Some(&me),
            Line::HandOff(policy),
        )?;
        return Ok(());
    }
    if !rank.allows(Role::Editor) {
        return Err(AppError::forbidden(format!(
            "{}; only an editor or above of the case can break a lock.",
            held_message(&held)
        )));
    }
    // A break hands the record to the line; a takeover would not.
    override_lock(tx, actor, &held, Line::HandOff(policy))
}

/// Ends someone else's lock on the actor's authority ("Edit anyway" or a
/// break): 403 `outranked` unless the actor's rank is at least the holder's.
fn override_lock(tx: &mut Tx, actor: &Actor, held: &HeldLock, then: Line) -> AppResult<()> {
    ensure_outranks(tx, actor, held)?;
    end(
        tx,
        held,
        LockAction::Overridden,
        Some(&actor.user.to_ref()),
        then,
    )?;
    Ok(())
}

/// `DELETE /locks?session=mine`: releases every lock of the caller's tab
/// (the caller's, with its session id) and takes it out of every line.
pub fn release_tab(tx: &mut Tx, actor: &Actor, tab: &Tab, policy: &LockPolicy) -> AppResult<usize> {
    let me = actor.user.to_ref();
    // Rows in the row-lock order of `crate::locks`: the tab's locks, then
    // every place in line this touches. Then the tab leaves its lines, so
    // that a lock released below is not handed back to this same tab.
    Lock::lock_rows_of_tabs(tx.conn, std::slice::from_ref(tab))?;
    let places = Waiter::of_tab(tx.conn, tab)?;
    let held = Lock::of_tab(tx.conn, tab)?;
    line::lock_places_for_leaving(tx, &places, &held)?;
    for (waiter, user) in &places {
        line::leave(tx, waiter, user, WaiterEnd::Left)?;
    }
    // Read again: a grant to this tab may have committed meanwhile.
    let mut released = 0;
    for held in Lock::of_tab(tx.conn, tab)? {
        if end(
            tx,
            &held,
            LockAction::Released,
            Some(&me),
            Line::HandOff(policy),
        )? {
            released += 1;
        }
    }
    Ok(released)
}

/// What `GET /locks/status` answers.
pub enum LockStatus {
    Owned(HeldLock),
    Locked(HeldLock),
    Unlocked,
}

/// The state of a record's lock as the actor sees it: its own lock, else a
/// deep lock that covers it. Read-only: a lock past its lease counts as
/// unlocked here and is ended by the reaper.
pub(super) fn status(
    conn: &mut crate::db::DbConn,
    actor: &Actor,
    target: &LockTarget,
    policy: &LockPolicy,
) -> AppResult<LockStatus> {
    let now = crate::db::now(conn)?;
    let own = Lock::on(conn, target.identity.type_name, target.identity.id)?;
    let covering = Lock::deep_on(conn, target.case_id, &target.containers())?;
    let in_force = own
        .into_iter()
        .chain(covering)
        .find(|held| overdue(&held.lock, now, policy).is_none());
    Ok(match in_force {
        Some(held) if is_held_by(&held.lock, actor) => LockStatus::Owned(held),
        Some(held) => LockStatus::Locked(held),
        None => LockStatus::Unlocked,
    })
}
