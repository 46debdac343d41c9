//! The guard (verify_lock_on): every update and delete of a lockable goes
//! through [`guarded_write`], inside the write's transaction.

use super::holding::{end, live_or_end, live_or_end_then, touch, Line};
use super::naming::TargetName;
use super::policy::LockPolicy;
use super::render::{lock_view, locked};
use super::rules;
use super::subtree;
use super::target::{find_named, LockTarget, Lockable};
use crate::auth::Actor;
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::models::{HeldLock, Lock, LockAction, LockId, User};
use crate::views::{Change, Identity, Watchable};

/// What a write asks to be true before it happens.
#[derive(Clone, Copy, Debug, Default)]
pub struct Preconditions {
    /// `If-Match: "<version>"`.
    pub if_match: Option<i64>,
    /// `Lock-Token: <lock id>`.
    pub lock_token: Option<LockId>,
}

/// What a host asks: may user `user_external_id`, from tab `session_id`
/// (holding `lock_token`, if it says), write `named` of case `case_slug`?
#[derive(Clone, Debug)]
pub struct HostWrite {
    pub named: TargetName,
    pub case_slug: String,
    pub user_external_id: String,
    pub session_id: Option<String>,
    pub lock_token: Option<LockId>,
}

/// What a guarded write did to its record.
pub enum Written<L> {
    Updated(L),
    Destroyed,
}

/// Who writes, with which preconditions, under which lock lifetimes.
pub struct WriteContext<'a> {
    pub actor: &'a Actor,
    pub preconditions: Preconditions,
    pub policy: &'a LockPolicy,
    /// A write without a tab is another tab's to a lock taken with one
    /// (`POST /guard`: a host names the tab, or it is not the holder's).
    /// baton's own routes act for the user as a whole without a tab.
    pub tab_required: bool,
}

impl WriteContext<'_> {
    /// Whether the writer holds `lock`.
    fn holds(&self, lock: &Lock) -> bool {
        let actor = self.actor;
        rules::held_by(
            lock,
            actor.user.id,
            actor.session_id.as_deref(),
            self.tab_required,
        )
    }
}

/// Runs `write` on `record` if the guard allows it:
///
/// 1. someone else holds the record's lock, or a deep lock on what it sits
///    in (its page, its case) → 423 `locked`;
/// 2. `Lock-Token` names a lock that no longer holds it → 412 `lock_lost`
///    (even if nobody holds it now: a stale tab never writes over newer work);
/// 3. `If-Match` names another version → 412 `stale_version`;
/// 4. otherwise writes, renews the holder's lock and broadcasts the change.
///
/// `record` must have been read in this transaction with `find_for_update`.
pub fn guarded_write<L, F>(
    tx: &mut Tx,
    ctx: &WriteContext,
    record: L,
    write: F,
) -> AppResult<Written<L>>
where
    L: Lockable,
    F: FnOnce(&mut Tx, L) -> AppResult<Written<L>>,
{
    let Cover { own, deep } = check(tx, ctx, &LockTarget::of(&record))?;
    let (case_id, id) = (record.case_id(), record.lockable_id());
    let (type_name, table) = (record.type_name(), record.table());
    let written = write(tx, record)?;
    match &written {
        Written::Updated(updated) => {
            // The holder's activity: on its lock of the record, else on its
            // deep lock around it.
            if let Some(lock) = own.as_ref().or(deep.as_ref()) {
                touch(tx, lock, ctx.policy)?;
            }
            tx.emit(case_id, Change::Update, updated.view().into());
        }
        Written::Destroyed => {
            if let Some(lock) = own {
                let holder = ctx.actor.user.to_ref();
                let held = HeldLock {
                    lock,
                    holder: holder.clone(),
                };
                end(tx, &held, LockAction::Released, Some(&holder), Line::Drop)?;
            } else {
                super::line::drop_line(tx, type_name, id)?;
            }
            let gone = Identity::new(type_name, table, id);
            tx.emit(case_id, Change::Destroy, Watchable::Gone(gone));
        }
    }
    Ok(written)
}

/// The guard as a question (`POST /guard`), for a write that happens in a
/// host's own database: steps 1 and 2 of [`guarded_write`] on `target`, and
/// the holder's activity renewed as for a write. A 412 carries the
/// record's live lock (or none) as `current`: baton has no copy of the
/// record to show.
pub fn guard(tx: &mut Tx, ctx: &WriteContext, target: &LockTarget) -> AppResult<()> {
    match check(tx, ctx, target) {
        Ok(Cover { own, deep }) => {
            if let Some(lock) = own.as_ref().or(deep.as_ref()) {
                touch(tx, lock, ctx.policy)?;
            }
            Ok(())
        }
        Err(AppError::LockLost { message, .. }) => {
            let current = lock_in_force(tx, ctx, target.identity.type_name, target.identity.id)?;
            Err(AppError::LockGone {
                message,
                current: current.map(|held| Box::new(lock_view(&held))),
            })
        }
        Err(e) => Err(e),
    }
}

/// The caller's locks that cover a record it writes.
struct Cover {
    /// Its lock on the record itself.
    own: Option<Lock>,
    /// Its deep lock on what the record sits in.
    deep: Option<Lock>,
}

/// Steps 1–3; returns the caller's locks that cover the record. Steps 1
/// and 2 are also written in SQL, in the same order, by
/// [`guard_steps_sql!`], for the fast path: a change here is a change
/// there (`tests/fast_path.rs` runs both on one script).
fn check(tx: &mut Tx, ctx: &WriteContext, record: &LockTarget) -> AppResult<Cover> {
    let lock = lock_in_force(tx, ctx, record.identity.type_name, record.identity.id)?;
    if let Some(held) = &lock {
        if !ctx.holds(&held.lock) {
            return Err(locked(held, record.view.clone()));
        }
    }
    let covering = subtree::covering_locks(tx, record.case_id, &record.containers, ctx.policy)?;
    if let Some(theirs) = covering.iter().find(|h| !ctx.holds(&h.lock)) {
        return Err(subtree::locked_by_deep(tx, theirs)?);
    }
    let cover = Cover {
        own: lock.map(|held| held.lock),
        deep: covering.into_iter().next().map(|held| held.lock),
    };
    if let Some(token) = ctx.preconditions.lock_token {
        let names = |lock: &Option<Lock>| lock.as_ref().is_some_and(|l| l.id == token);
        if !names(&cover.own) && !names(&cover.deep) {
            return Err(AppError::LockLost {
                message: format!(
                    "Your lock {token} on {} is gone (overridden, expired or released); \
                     reload it and lock it again before saving.",
                    record.identity.label()
                ),
                current: Box::new(record.view.clone()),
            });
        }
    }
    if let (Some(expected), Some(version)) = (ctx.preconditions.if_match, record.version) {
        if expected != version {
            return Err(AppError::StaleVersion {
                message: format!(
                    "{} has changed since you loaded it (you had version {expected}, it is now at {version}); \
                     merge with `current` and save again.",
                    record.identity.label(),
                ),
                current: Box::new(record.view.clone()),
            });
        }
    }
    Ok(cover)
}

/// PL/pgSQL (the fast save and the fast guard): reads the lock on record
/// `$id` of type `p_type` into `held`, `FOR SHARE`, as [`lock_in_force`]
/// does; a lock row another transaction is writing is left to the general
/// path (`$decline`), which waits in a transaction it can roll back, and so
/// is an overdue lock (its end and hand-off are the general path's).
macro_rules! read_held_lock {
    ($id:literal, $decline:literal) => {
        concat!(
            "SELECT * INTO held FROM locks l WHERE l.lockable_type = p_type AND l.lockable_id = ",
            $id,
            " FOR SHARE SKIP LOCKED; \
             IF NOT FOUND THEN \
               PERFORM 1 FROM locks l WHERE l.lockable_type = p_type AND l.lockable_id = ",
            $id,
            "; IF FOUND THEN ",
            $decline,
            "; END IF; \
             END IF; "
        )
    };
}

/// The guard's steps 1 and 2 ([`check`]) in PL/pgSQL, in the same order,
/// for record `$id` of type `p_type` in case `$case`, written by user
/// `$user` from tab `p_session` (`$tab_required` as in
/// [`WriteContext::tab_required`]) with `Lock-Token` `p_lock_token`, at
/// `v_now` with an idle timeout of `p_idle_micros`:
///
/// 1. the record's lock ([`read_held_lock!`]) and no deep lock in its case
///    (what a deep lock covers is the general path's to decide);
/// 2. a lock is held by the writer (`rules::held_by`) and in force
///    (`rules::in_force`), and `Lock-Token`, if sent, names it; without a
///    lock, no `Lock-Token` may be sent.
///
/// Anything else runs `$decline`, and the general path decides and says
/// why. Leaves the lock in `held` (or NULL) for the caller to renew.
/// `FAST_SAVE` and `FAST_GUARD` (`fast_path::sql`) are built on it.
macro_rules! guard_steps_sql {
    ($id:literal, $case:literal, $user:literal, $tab_required:literal, $decline:literal) => {
        concat!(
            $crate::locks::guard::read_held_lock!($id, $decline),
            "IF ",
            $crate::locks::rules::deep_in_case_sql!($case),
            " THEN ",
            $decline,
            "; END IF; \
             IF held.id IS NOT NULL THEN \
               PERFORM 1 FROM locks l WHERE l.id = held.id AND ",
            $crate::locks::rules::held_by_sql!($user, "p_session", $tab_required),
            " AND ",
            $crate::locks::rules::in_force_sql!(
                "v_now",
                "(v_now - p_idle_micros * interval '1 microsecond')"
            ),
            " AND (p_lock_token IS NULL OR p_lock_token = l.id); \
               IF NOT FOUND THEN ",
            $decline,
            "; END IF; \
             ELSIF p_lock_token IS NOT NULL THEN ",
            $decline,
            "; END IF; "
        )
    };
}

pub(crate) use {guard_steps_sql, read_held_lock};

/// The lock on the record that is in force, read `FOR SHARE`. A lock past
/// its lease is ended here, and its line may hand the record to the next
/// waiter at once: then that new lock is the one in force.
fn lock_in_force(
    tx: &mut Tx,
    ctx: &WriteContext,
    lockable_type: &str,
    id: i64,
) -> AppResult<Option<HeldLock>> {
    // One hand-off at most: the new holding has a full lease.
    for _ in 0..2 {
        let Some(lock) = Lock::on_for_share(tx.conn, lockable_type, id)? else {
            return Ok(None);
        };
        let Some(holder) = User::refs(tx.conn, &[lock.user_id])?.pop() else {
            return Ok(None);
        };
        let has_waiters = lock.has_waiters;
        match live_or_end(tx, HeldLock { lock, holder }, ctx.policy)? {
            Some(held) => return Ok(Some(held)),
            None if has_waiters => continue,
            None => return Ok(None),
        }
    }
    Ok(None)
}

/// Before deleting a record whose children go with it (a page's cards, a
/// case's everything): 423 if someone else holds a lock on a child; the
/// caller's own child locks, and overdue ones, are ended.
pub fn clear_child_locks(tx: &mut Tx, ctx: &WriteContext, locks: Vec<HeldLock>) -> AppResult<()> {
    let mut mine = Vec::new();
    for held in locks {
        // An overdue child lock ends with its line: the record is going.
        let Some(held) = live_or_end_then(tx, held, ctx.policy, Line::Drop)? else {
            continue;
        };
        if !ctx.holds(&held.lock) {
            let child = find_named(tx.conn, &held.lock.lockable_type, held.lock.lockable_id)?;
            // A lock on a record that is gone already blocks nothing.
            if let Some(child) = child {
                return Err(locked(&held, child.view));
            }
        }
        mine.push(held);
    }
    let me = ctx.actor.user.to_ref();
    for held in mine {
        end(tx, &held, LockAction::Released, Some(&me), Line::Drop)?;
    }
    Ok(())
}
