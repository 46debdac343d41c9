//! Several records at once: a lock set (all or nothing) and a claim (the
//! first free of many). Both run in the caller's write transaction, made of
//! ordinary acquires, so each lock is an ordinary lock afterwards.

use std::collections::HashSet;

use super::general::{self, Acquired};
use crate::auth::Actor;
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::holding::{is_held_by, overdue};
use crate::locks::policy::LockPolicy;
use crate::locks::render::{lock_message, lock_view};
use crate::locks::rules::AcquireMode;
use crate::locks::target::{kind_named, LockTarget};
use crate::models::{HeldLock, Lock};
use crate::views::LockView;

/// `POST /locks/batch`: locks every one of `targets` (records this tab holds
/// are renewed), in the order given, or none: 409 `lock_held` naming every
/// lock in the way, and the transaction rolls back whatever was taken. The
/// caller has row-locked the records in one fixed order (type, then id), so
/// two sets asked in opposite orders queue instead of deadlocking.
pub fn acquire_all(
    tx: &mut Tx,
    actor: &Actor,
    targets: &[LockTarget],
    policy: &LockPolicy,
) -> AppResult<Vec<HeldLock>> {
    let mut taken: Vec<HeldLock> = Vec::with_capacity(targets.len());
    let mut in_the_way = InTheWay::default();
    for target in targets {
        let same = |h: &&HeldLock| {
            h.lock.lockable_type == target.identity.type_name
                && h.lock.lockable_id == target.identity.id
        };
        if let Some(again) = taken.iter().find(same).cloned() {
            taken.push(again); // named twice: the same lock at both places
            continue;
        }
        match general::acquire(tx, actor, target, AcquireMode::default(), policy) {
            Ok(Acquired::Created(held) | Acquired::Renewed(held)) => taken.push(held),
            // Not asked for (`wait` is off); never a panic in a request.
            Ok(Acquired::Waiting(_)) => {
                return Err(AppError::Conflict(
                    "The set joined a line it never asks for; ask again.".into(),
                ))
            }
            Err(AppError::LockHeld { locks, .. }) => in_the_way.add(locks),
            Err(e) => return Err(e),
        }
    }
    let Some(first) = in_the_way.locks.first().cloned() else {
        return Ok(taken);
    };
    let others = match in_the_way.locks.len() {
        1 => String::new(),
        n => format!(" ({} more locks are in the way)", n - 1),
    };
    Err(AppError::LockHeld {
        message: format!(
            "{}{others}; none of the {} records was locked. Ask them, or lock the set again once they are free.",
            in_the_way.first_message,
            targets.len()
        ),
        lock: Box::new(first),
        locks: in_the_way.locks,
    })
}

/// `POST /locks/claim`: this tab's lock on the first of `candidates` it
/// already holds (renewed), else a new lock on the first one nobody holds.
/// A candidate another transaction is taking right now is passed over, not
/// waited for (PostgreSQL's `SKIP LOCKED` on its row; SQLite's writer is
/// single). 409 `none_free` when every candidate is held.
pub fn claim(
    tx: &mut Tx,
    actor: &Actor,
    candidates: &[LockTarget],
    policy: &LockPolicy,
) -> AppResult<Acquired> {
    let held = locks_on(tx, candidates)?;
    let lock_on = |target: &LockTarget| {
        held.iter().find(|h| {
            h.lock.lockable_type == target.identity.type_name
                && h.lock.lockable_id == target.identity.id
        })
    };
    let now = tx.now;
    let live = |h: &&HeldLock| overdue(&h.lock, now, policy).is_none();
    // A retried claim gets the same record.
    if let Some(mine) = candidates.iter().find_map(|target| {
        lock_on(target)
            .filter(live)
            .filter(|h| is_held_by(&h.lock, actor))
            .map(|_| target)
    }) {
        return general::acquire(tx, actor, mine, AcquireMode::default(), policy);
    }
    let mut in_the_way = InTheWay::default();
    for target in candidates {
        if let Some(theirs) = lock_on(target).filter(live) {
            in_the_way.add(vec![lock_view(theirs)]);
            continue;
        }
        let Some(kind) = kind_named(target.identity.type_name) else {
            continue;
        };
        if !kind.lock_row_unless_busy(tx.conn, target.identity.id)? {
            continue; // being written or claimed right now, or just deleted
        }
        match general::acquire(tx, actor, target, AcquireMode::default(), policy) {
            Ok(acquired) => return Ok(acquired),
            Err(AppError::LockHeld { locks, .. }) => in_the_way.add(locks),
            Err(e) => return Err(e),
        }
    }
    let message = match in_the_way.locks.len() {
        0 => format!(
            "All {} candidates are being taken right now; claim again.",
            candidates.len()
        ),
        _ => format!(
            "None of the {} candidates is free: {}{}. Claim again later, or wait for one of them (POST /locks with wait).",
            candidates.len(),
            in_the_way.first_message,
            match in_the_way.locks.len() {
                1 => String::new(),
                n => format!(", and {} more", n - 1),
            }
        ),
    };
    Err(AppError::NoneFree {
        message,
        locks: in_the_way.locks,
    })
}

/// The locks on any of `targets`, one query per type.
fn locks_on(tx: &mut Tx, targets: &[LockTarget]) -> AppResult<Vec<HeldLock>> {
    let mut types: Vec<&str> = targets.iter().map(|t| t.identity.type_name).collect();
    types.sort_unstable();
    types.dedup();
    let mut held = Vec::new();
    for type_name in types {
        let ids: Vec<i64> = targets
            .iter()
            .filter(|t| t.identity.type_name == type_name)
            .map(|t| t.identity.id)
            .collect();
        held.extend(Lock::on_any(tx.conn, type_name, &ids)?);
    }
    Ok(held)
}

/// The locks that refused a set or a claim, each once, in the order met.
#[derive(Default)]
struct InTheWay {
    locks: Vec<LockView>,
    seen: HashSet<String>,
    first_message: String,
}

impl InTheWay {
    fn add(&mut self, locks: Vec<LockView>) {
        for lock in locks {
            if self.seen.insert(lock.token.clone()) {
                if self.locks.is_empty() {
                    self.first_message = lock_message(&lock);
                }
                self.locks.push(lock);
            }
        }
    }
}
