//! Lock JSON is rendered here and nowhere else: locks, ended locks, waiters,
//! audit rows, and the message that says who holds a record; and the frames
//! of what the fast path wrote.

use super::target::table_of;
use super::target::Lockable;
use crate::db::{Editor, Frame};
use crate::error::AppError;
use crate::models::{
    HeldLock, LockAction, LockEvent, QueuedWaiter, StoredRecord, UserRef, WaiterEnd,
};
use crate::models::{LockNotice, SavedRecord};
use crate::views::locks::LockDepth;
use crate::views::{
    Change, EndedLockView, EndedWaiterView, LockEventView, LockView, RecordView, ServerFrame,
    UserView, WaiterView, Watchable,
};

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
        reason,
        overridden_by: overridden_by.map(UserView::public),
    })
}

pub fn waiter_view(queued: &QueuedWaiter) -> WaiterView {
    WaiterView::new(queued, table_of(&queued.waiter.lockable_type))
}

pub fn waiter_views(queued: &[QueuedWaiter]) -> Vec<WaiterView> {
    queued.iter().map(waiter_view).collect()
}

/// A waiter that left its line, as broadcast in its `destroy`.
pub fn ended_waiter(queued: &QueuedWaiter, reason: WaiterEnd) -> Watchable {
    Watchable::EndedWaiter(EndedWaiterView {
        waiter: waiter_view(queued),
        reason,
    })
}

/// The frame of a lock written by the fast path: the same `create` or
/// `destroy` the general path emits for an acquire or a holder's release.
pub fn notice_frame(notice: LockNotice) -> Frame {
    let LockNotice {
        action,
        lock,
        holder,
        editor,
        ..
    } = notice;
    // The fast path acquires and releases only for the holder itself.
    let editor = Editor {
        user_id: lock.user_id.get(),
        session_id: editor,
    };
    let held = HeldLock { lock, holder };
    let (change, watchable) = match action {
        LockAction::Acquired => (Change::Create, lock_view(&held).into()),
        reason => (Change::Destroy, ended_lock(&held, reason, None)),
    };
    ServerFrame::change(change, watchable, Some(&editor)).for_case(held.lock.case_id)
}

/// The frame of a record saved by the fast save: the same `update` the
/// guard emits for a save. `None` for a type the schema does not declare.
pub fn saved_record_frame(saved: SavedRecord) -> Option<Frame> {
    let SavedRecord {
        record,
        editor,
        editor_user,
        ..
    } = saved;
    let record = StoredRecord::shallow(record)?;
    let case_id = record.case_id;
    let editor = editor_user.map(|user_id| Editor {
        user_id,
        session_id: editor,
    });
    Some(
        ServerFrame::change(Change::Update, record.view().into(), editor.as_ref())
            .for_case(case_id),
    )
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

/// "Ticket 12 is being edited by Bob since 10:42 UTC".
pub fn held_message(held: &HeldLock) -> String {
    lock_message(&lock_view(held))
}

/// [`held_message`] of a rendered lock.
pub fn lock_message(lock: &LockView) -> String {
    let what = match lock.depth {
        LockDepth::Infinity => "and everything in it are locked",
        LockDepth::Zero => "is being edited",
    };
    format!(
        "{} {} {what} by {} since {} UTC",
        lock.lockable.type_name,
        lock.lockable.param,
        lock.user.name,
        lock.created_at.format("%H:%M")
    )
}

/// The 423 for a write refused by `held` (a lock on the record, or a deep
/// lock around it on `lockable`).
pub fn locked(held: &HeldLock, lockable: RecordView) -> AppError {
    AppError::Locked {
        message: format!("{}; your changes were not saved.", held_message(held)),
        lock: Box::new(lock_view(held)),
        lockable: Box::new(lockable),
    }
}
