//! What a reader of a case may see of its locks: one lock, the case's
//! locks in force, a record's lock status and line, the audit trail, and
//! the snapshot a case's page and a joining tab start from. Read-only: a
//! lock past its lease counts as ended here and is ended by the reaper.

use crate::auth::access::authorize;
use crate::auth::Actor;
use crate::db::DbConn;
use crate::error::{AppError, AppResult};
use crate::locks::holding::overdue;
use crate::locks::line::{line_of, waiters_of_case};
use crate::locks::naming::{case_by_slug, TargetName};
use crate::locks::policy::LockPolicy;
use crate::locks::render::lock_event_view;
use crate::models::{
    Case, CaseId, HeldLock, Lock, LockEvent, LockEventId, LockId, QueuedWaiter, Role, User, UserId,
};
use crate::views::LockEventView;

use super::general::{self, LockStatus};

/// One lock still in force, for readers of its case.
pub fn show(
    conn: &mut DbConn,
    actor: &Actor,
    id: LockId,
    policy: &LockPolicy,
) -> AppResult<HeldLock> {
    let gone = || AppError::not_found(format!("Lock {id} does not exist (any more)."));
    let held = Lock::find(conn, id)?.ok_or_else(gone)?;
    let case = case_of(conn, held.lock.case_id)?;
    authorize(conn, &actor.user, &case, Role::Reader)?;
    if overdue(&held.lock, crate::db::now(conn)?, policy).is_some() {
        return Err(gone());
    }
    Ok(held)
}

/// The locks in force in the case `slug` names, for its readers.
pub fn case_locks(
    conn: &mut DbConn,
    actor: &Actor,
    slug: &str,
    policy: &LockPolicy,
) -> AppResult<Vec<HeldLock>> {
    let case = case_by_slug(conn, slug)?;
    authorize(conn, &actor.user, &case, Role::Reader)?;
    active_locks(conn, case.id, policy)
}

/// A record's lock as the actor sees it, and its line, for readers of its
/// case; an external record never locked is unlocked, with nobody waiting.
pub fn status(
    conn: &mut DbConn,
    actor: &Actor,
    named: &TargetName,
    policy: &LockPolicy,
) -> AppResult<(LockStatus, Vec<QueuedWaiter>)> {
    let (case, target) = named.look_up(conn)?;
    authorize(conn, &actor.user, &case, Role::Reader)?;
    let Some(target) = target else {
        return Ok((LockStatus::Unlocked, Vec::new()));
    };
    let status = general::status(conn, actor, &target, policy)?;
    let now = crate::db::now(conn)?;
    let waiters = line_of(conn, target.identity.type_name, target.identity.id, now)?;
    Ok((status, waiters))
}

/// The case's audit trail for its managers, newest first.
pub fn lock_events(
    conn: &mut DbConn,
    actor: &Actor,
    slug: &str,
    limit: i64,
    before: Option<LockEventId>,
) -> AppResult<Vec<LockEventView>> {
    let case = case_by_slug(conn, slug)?;
    authorize(conn, &actor.user, &case, Role::Manager)?;
    let events = LockEvent::of_case(conn, case.id, limit, before)?;
    let mut ids: Vec<UserId> = events
        .iter()
        .flat_map(|e| [Some(e.holder_id), e.actor_id])
        .flatten()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let users = User::refs(conn, &ids)?;
    let user = |id: UserId| users.iter().find(|u| u.id == id);
    Ok(events
        .iter()
        .filter_map(|e| {
            let holder = user(e.holder_id)?;
            Some(lock_event_view(e, e.actor_id.and_then(user), holder))
        })
        .collect())
}

/// A case's locks in force and its waiting lines, as a case's page and a
/// joining tab start from them (the caller has checked the reader).
pub fn lock_snapshot(
    conn: &mut DbConn,
    case_id: CaseId,
    policy: &LockPolicy,
) -> AppResult<(Vec<HeldLock>, Vec<QueuedWaiter>)> {
    let now = crate::db::now(conn)?;
    Ok((
        active_locks(conn, case_id, policy)?,
        waiters_of_case(conn, case_id, now)?,
    ))
}

/// The locks of a case that are still in force, oldest first.
fn active_locks(
    conn: &mut DbConn,
    case_id: CaseId,
    policy: &LockPolicy,
) -> AppResult<Vec<HeldLock>> {
    let now = crate::db::now(conn)?;
    Ok(Lock::of_case(conn, case_id)?
        .into_iter()
        .filter(|held| overdue(&held.lock, now, policy).is_none())
        .collect())
}

/// The case a lock or record belongs to, or 404.
pub fn case_of(conn: &mut DbConn, case_id: CaseId) -> AppResult<Case> {
    Case::find(conn, case_id)?
        .ok_or_else(|| AppError::not_found(format!("Case {case_id} does not exist.")))
}
