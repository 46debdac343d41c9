//! Subtree locks (WebDAV's depth infinity, RFC 4918 §6.1): a deep lock on a
//! page covers its cards, on a case everything in it, including records
//! created later. Conflicts go both ways: nothing inside may be locked by
//! someone else while a deep lock holds, and a deep lock is refused while
//! someone else holds anything inside. Which records hold which is the
//! registry's (`TargetKind::locks_inside`, `LockTarget::containers`).

use super::holding::{end, ensure_outranks, is_held_by, live_or_end, Line};
use super::line;
use super::policy::LockPolicy;
use super::render::{held_message, lock_view, lock_views, locked};
use super::target::{find_named, kind_named, LockTarget, Lockable, TargetKind};
use crate::auth::Actor;
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::models::{CaseId, HeldLock, Lock, LockAction, TargetId, Waiter, WaiterEnd};

/// The deep locks in force on `containers` (innermost first) of a record
/// in `case_id`: whoever holds them. Overdue ones are ended here.
pub fn covering_locks(
    tx: &mut Tx,
    case_id: CaseId,
    containers: &[TargetId],
    policy: &LockPolicy,
) -> AppResult<Vec<HeldLock>> {
    let mut live = Vec::new();
    for held in Lock::deep_on(tx.conn, case_id, containers)? {
        live.extend(live_or_end(tx, held, policy)?);
    }
    Ok(live)
}

/// The deep lock of someone else that covers a record in `case_id` sitting
/// in `containers`, if any.
pub fn covering(
    tx: &mut Tx,
    actor: &Actor,
    case_id: CaseId,
    containers: &[TargetId],
    policy: &LockPolicy,
) -> AppResult<Option<HeldLock>> {
    Ok(covering_locks(tx, case_id, containers, policy)?
        .into_iter()
        .find(|held| !is_held_by(&held.lock, actor)))
}

/// 409 `lock_held` naming the deep lock when `target` sits inside someone
/// else's: no lock on it, of any depth, and no place in its line.
pub fn refuse_inside(
    tx: &mut Tx,
    actor: &Actor,
    target: &LockTarget,
    policy: &LockPolicy,
) -> AppResult<()> {
    let Some(deep) = covering(tx, actor, target.case_id, &target.containers(), policy)? else {
        return Ok(());
    };
    Err(AppError::LockHeld {
        message: format!(
            "{} is inside {} {}, which {} has locked with everything in it since {} UTC; ask them, or take over the {} lock.",
            target.identity.label(),
            deep.lock.lockable_type,
            deep.lock.lockable_id,
            deep.holder.name,
            deep.lock.created_at.format("%H:%M"),
            deep.lock.lockable_type.to_lowercase()
        ),
        lock: Box::new(lock_view(&deep)),
        locks: vec![lock_view(&deep)],
    })
}

/// 423 `locked` (with the deep lock and its record) for a write to, or a
/// creation in, a record in `containers` covered by someone else's deep lock.
pub fn refuse_write_inside(
    tx: &mut Tx,
    actor: &Actor,
    case_id: CaseId,
    containers: &[TargetId],
    policy: &LockPolicy,
) -> AppResult<()> {
    let Some(deep) = covering(tx, actor, case_id, containers, policy)? else {
        return Ok(());
    };
    Err(locked_by_deep(tx, &deep)?)
}

/// The 423 for a write inside `deep`: its `lockable` is the deep-locked record.
pub fn locked_by_deep(tx: &mut Tx, deep: &HeldLock) -> AppResult<AppError> {
    match find_named(tx.conn, &deep.lock.lockable_type, deep.lock.lockable_id)? {
        Some(record) => Ok(locked(deep, record.view)),
        // The deep-locked record is being deleted in another transaction.
        None => Err(AppError::Conflict(format!(
            "{} {} is being deleted; reload and try again.",
            deep.lock.lockable_type, deep.lock.lockable_id
        ))),
    }
}

/// The kind of `target`, if it holds records (a case, a record whose type has
/// children); else 422:
/// only such a record can be locked deeply. Checked before any conflict.
pub fn holding_kind(target: &LockTarget) -> AppResult<&'static TargetKind> {
    kind_named(target.identity.type_name)
        .filter(|kind| kind.holds_records())
        .ok_or_else(|| {
            AppError::invalid(format!(
                "depth \"infinity\" is for records that hold others ({}); {} holds none: lock it with depth \"0\".",
                holding_types(),
                target.identity.label()
            ))
        })
}

/// The types whose records may be locked deeply, for messages: each "a <Type>",
/// innermost first, the case last.
fn holding_types() -> String {
    let names: Vec<String> = super::target::registry()
        .iter()
        .rev()
        .filter(|kind| kind.holds_records())
        .map(|kind| format!("a {}", kind.type_name))
        .collect();
    names.join(", ")
}

/// Before a deep lock on `target` is granted: every lock of someone else on
/// it or inside it is in the way. Refused with 409 `lock_held` naming them
/// all; with `takeover`, ended (each `overridden`, their lines kept) when
/// the actor's rank is at least every holder's, else 403 `outranked`.
/// Returns whether it took any over.
pub fn clear_for_deep(
    tx: &mut Tx,
    actor: &Actor,
    target: &LockTarget,
    takeover: bool,
    policy: &LockPolicy,
) -> AppResult<bool> {
    let kind = holding_kind(target)?;
    let mut theirs = Vec::new();
    let mut ended = false;
    for held in kind.locks_inside(tx.conn, target.case_id, target.identity.id)? {
        match live_or_end(tx, held, policy)? {
            Some(held) if !is_held_by(&held.lock, actor) => theirs.push(held),
            Some(_) => {}
            None => ended = true,
        }
    }
    if ended {
        // An overdue lock ended above may have been handed to its line.
        theirs = kind
            .locks_inside(tx.conn, target.case_id, target.identity.id)?
            .into_iter()
            .filter(|held| !is_held_by(&held.lock, actor))
            .collect();
    }
    let Some(first) = theirs.first() else {
        return Ok(false);
    };
    if !takeover {
        return Err(AppError::LockHeld {
            message: format!(
                "{}{}; {} cannot be locked with everything in it until they let go. Ask them, or take over their locks (takeover).",
                held_message(first),
                match theirs.len() {
                    1 => String::new(),
                    n => format!(" (and {} more locks inside)", n - 1),
                },
                target.identity.label()
            ),
            lock: Box::new(lock_view(first)),
            locks: lock_views(&theirs),
        });
    }
    for held in &theirs {
        ensure_outranks(tx, actor, held)?;
    }
    let me = actor.user.to_ref();
    for held in &theirs {
        // The record goes to the deep lock, not to anyone in its line.
        end(tx, held, LockAction::Overridden, Some(&me), Line::Keep)?;
    }
    Ok(true)
}

/// 423 for creating a record in `parent` (a card on a page, a page in a
/// case) while someone else's deep lock covers `parent`.
pub fn refuse_creation_in<L: Lockable>(
    tx: &mut Tx,
    actor: &Actor,
    parent: &L,
    policy: &LockPolicy,
) -> AppResult<()> {
    let mut containers = vec![TargetId {
        type_name: parent.type_name(),
        id: parent.lockable_id(),
    }];
    containers.extend(parent.containers());
    refuse_write_inside(tx, actor, parent.case_id(), &containers, policy)
}

/// Once a deep lock on `target` holds, nobody else can be handed a record
/// inside it: the lines of the records inside end (each waiter `left`),
/// those of locks it took over included. Waiting is for one record at a
/// time; the line of `target` itself stays, served when the deep lock ends.
pub fn end_lines_inside(tx: &mut Tx, target: &LockTarget) -> AppResult<()> {
    let deep = target.id();
    for (waiter, user) in Waiter::of_case(tx.conn, target.case_id)? {
        let record = find_named(tx.conn, &waiter.lockable_type, waiter.lockable_id)?;
        if record.is_some_and(|record| record.containers().contains(&deep)) {
            line::leave(tx, &waiter, &user, WaiterEnd::Left)?;
        }
    }
    Ok(())
}
