//! Lock JSON is rendered here and nowhere else: locks, ended locks, audit
//! rows, and the message that says who holds a record.

use super::lockable::table_of;
use crate::models::{HeldLock, LockAction, LockEvent, UserRef};
use crate::views::{EndedLockView, LockEventView, LockView, UserView, Watchable};

pub fn lock_view(held: &HeldLock) -> LockView {
    LockView::new(held, table_of(&held.lock.lockable_type))
}

pub fn lock_views(held: &[HeldLock]) -> Vec<LockView> {
    held.iter().map(lock_view).collect()
}

/// A lock that has ended, as broadcast in its `destroy`: the lock plus why,
/// and who overrode it.
pub fn ended_lock(
    held: &HeldLock,
    reason: LockAction,
    overridden_by: Option<&UserRef>,
) -> Watchable {
    Watchable::EndedLock(EndedLockView {
        lock: lock_view(held),
        reason: reason.into(),
        overridden_by: overridden_by.map(UserView::public),
    })
}

/// One audit row, with the users it names (looked up by the caller).
pub fn lock_event_view(
    event: &LockEvent,
    actor: Option<&UserRef>,
    holder: &UserRef,
) -> LockEventView {
    LockEventView::new(
        event,
        table_of(&event.lockable_type),
        actor.map(UserView::public),
        UserView::public(holder),
    )
}

/// "Card 12 is being edited by Bob since 10:42 UTC".
pub fn held_message(held: &HeldLock) -> String {
    format!(
        "{} {} is being edited by {} since {} UTC",
        held.lock.lockable_type,
        held.lock.lockable_id,
        held.holder.name,
        held.lock.created_at.format("%H:%M")
    )
}
