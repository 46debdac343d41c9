//! The lock engine's entry points for a request: each chooses the fast path
//! (one statement, PostgreSQL) or the general path (`general`, in one
//! write transaction), and takes any table lock the general path needs, so
//! that handlers only parse, authorize, call and render.

pub mod general;
mod host;

use crate::auth::access::{rank_on, require};
use crate::auth::{Actor, Caller};
use crate::db::{Database, Tx};
use crate::error::{AppError, AppResult};
use crate::locks::fast_path::{self, FastPath};
use crate::locks::guard::{guarded_write, Preconditions, WriteContext, Written};
use crate::locks::naming::{resolve_all, Named};
use crate::locks::{sets, LockPolicy, Lockable};
use crate::models::{HeldLock, Lock, LockId, Role, StoredKey, StoredRecord};

pub use general::{active_locks, refresh, release_tab, status, AcquireMode, Acquired, LockStatus};
pub use host::guard;

/// `POST /locks`: the lock on what the request names, as `mode` asks
/// (`general::acquire`). `target` reads the request's record; its refusal
/// (422) is told only once the caller is known, as 401 comes first.
///
/// A plain acquire of a lockable baton stores takes the fast path when
/// `fast` (the instance's fast path, if on) allows. Otherwise, in one
/// retried transaction: the record and its case, then the caller and their
/// role on it, before anything is locked or written; then the order with
/// deep acquires and membership changes
/// (`Lock::order_with_deep_acquires`), the role read again under it (a role
/// lowered meanwhile ended its locks, and this one must not come after);
/// then the record's row, which orders this acquire with guarded writes of
/// the same record — but for a deep one, which already excludes every
/// other lock write and would only deadlock with a holder's write. SQLite
/// reads the record once: its one writer already orders every write.
pub async fn acquire<T>(
    db: &Database,
    caller: &Caller,
    target: T,
    mode: AcquireMode,
    policy: &LockPolicy,
    fast: Option<&FastPath>,
) -> AppResult<Acquired>
where
    T: Fn() -> AppResult<Named> + Send + Sync + 'static,
{
    // A wait without a tab is refused (422) by the general path, after the
    // caller and their role are checked: not by the fast path, which would lock.
    let waits_without_tab = mode.wait && caller.session_id().is_none();
    let plain = !(mode.takeover || mode.deep || waits_without_tab);
    if let (Some(fast), true) = (fast, plain) {
        if let Ok(Named::Stored(kind, id)) = target() {
            // A type without waiting lines refuses `wait`: the general path says so.
            if !mode.wait || kind.allows_waiting() {
                if let Some(held) = fast_path::acquire(fast, db, caller, kind, id, policy).await? {
                    return Ok(Acquired::Created(held));
                }
            }
        }
    }
    let (caller, policy) = (caller.clone(), *policy);
    db.write_retrying(caller.editor(), move |tx| {
        let asked = target().and_then(|named| Ok((named.find_unlocked(tx.conn)?, named)));
        let ((case_id, found), named) = match asked {
            Ok(asked) => asked,
            Err(e) => {
                caller.clone().load(tx.conn)?;
                return Err(e);
            }
        };
        let (actor, case, rank) = caller.clone().load_on_case(tx.conn, case_id)?;
        require(rank, &case, Role::Editor)?;
        if Lock::order_with_deep_acquires(tx.conn, mode.deep)? {
            require(rank_on(tx.conn, &actor.user, case.id)?, &case, Role::Editor)?;
        }
        // SQLite's one writer runs this whole transaction alone: the record
        // read above is still the record, and there is no row to lock.
        let target = match found {
            Some(target) if !tx.conn.locks_rows() => target,
            _ => named.resolve(tx, !mode.deep)?,
        };
        general::acquire(tx, &actor, &target, mode, &policy)
    })
    .await
}

/// `DELETE /locks/:id`: the holder's release in one statement when
/// `fast` allows and nothing else is to be done (no line to hand it
/// to); else `general::release`, which also breaks someone else's lock.
pub async fn release(
    db: &Database,
    caller: &Caller,
    id: LockId,
    policy: &LockPolicy,
    fast: Option<&FastPath>,
) -> AppResult<()> {
    if let Some(fast) = fast {
        if fast_path::release(fast, db, caller, id, policy)
            .await?
            .is_some()
        {
            return Ok(());
        }
    }
    let (caller, policy) = (caller.clone(), *policy);
    db.write(caller.editor(), move |tx| {
        let actor = caller.load(tx.conn)?;
        general::release(tx, &actor, id, &policy)
    })
    .await
}

/// `POST /locks/batch`: every one of `named` locked by the caller's tab, or
/// none (`sets::acquire_all`), in one retried transaction.
pub async fn lock_set(
    db: &Database,
    caller: &Caller,
    named: Vec<Named>,
    policy: &LockPolicy,
) -> AppResult<Vec<HeldLock>> {
    let (caller, policy) = (caller.clone(), *policy);
    db.write_retrying(caller.editor(), move |tx| {
        let (actor, targets) = resolve_all(tx, &caller, &named, true)?;
        sets::acquire_all(tx, &actor, &targets, &policy)
    })
    .await
}

/// `POST /locks/claim`: a lock on the first of `named` nobody else holds
/// (`sets::claim`).
pub async fn claim(
    db: &Database,
    caller: &Caller,
    named: Vec<Named>,
    policy: &LockPolicy,
) -> AppResult<Acquired> {
    let (caller, policy) = (caller.clone(), *policy);
    db.write(caller.editor(), move |tx| {
        // Not row-locked here: a claim passes busy candidates over.
        let (actor, targets) = resolve_all(tx, &caller, &named, false)?;
        sets::claim(tx, &actor, &targets, &policy)
    })
    .await
}

/// Who writes a lockable through the guard, with which preconditions, and
/// the least role on its case the write needs.
pub struct Guarded {
    pub caller: Caller,
    pub preconditions: Preconditions,
    pub min_role: Role,
}

/// `PATCH`/`DELETE` of one lockable, in one transaction whose broadcasts go
/// out after commit: the record, then the caller and their role on its case
/// before anything is locked (401 before 404); then the record's row locked
/// (it orders this write with others of the same record) and read again;
/// then `prepare` reads the request against the record (a body that cannot
/// be right is 400 or 422, never 412 or 423: RFC 9110 §13.2.1), and `write`
/// runs through the guard (`guard::guarded_write`) with what it made.
pub async fn write<L, T, P, F>(
    db: &Database,
    asked: Guarded,
    key: L::Key,
    policy: &LockPolicy,
    prepare: P,
    write: F,
) -> AppResult<Written<L>>
where
    L: Lockable,
    P: FnOnce(&mut Tx, &Actor, &L) -> AppResult<T> + Send + 'static,
    F: FnOnce(&mut Tx, &WriteContext, L, T) -> AppResult<Written<L>> + Send + 'static,
    T: Send + 'static,
{
    let policy = *policy;
    let Guarded {
        caller,
        preconditions,
        min_role,
    } = asked;
    db.write(caller.editor(), move |tx| {
        let Some(record) = L::find(tx.conn, key)? else {
            caller.load(tx.conn)?; // 401 comes before 404
            return Err(missing(key));
        };
        let (actor, case, rank) = caller.load_on_case(tx.conn, record.case_id())?;
        require(rank, &case, min_role)?;
        let record = if tx.conn.locks_rows() {
            L::find_for_update(tx.conn, key)?.ok_or_else(|| missing(key))?
        } else {
            record
        };
        let prepared = prepare(tx, &actor, &record)?;
        let ctx = WriteContext {
            actor: &actor,
            preconditions,
            policy: &policy,
            tab_required: false,
        };
        guarded_write(tx, &ctx, record, |tx, record| {
            write(tx, &ctx, record, prepared)
        })
    })
    .await
}

/// `PATCH` of a stored record: its fields alone saved in one statement when
/// `fast` allows and the body is only fields (`fields`); else
/// [`write`].
#[allow(clippy::too_many_arguments)]
pub async fn save<T, P, F>(
    db: &Database,
    asked: Guarded,
    key: StoredKey,
    fields: Option<fast_path::FastSave>,
    policy: &LockPolicy,
    fast: Option<&FastPath>,
    prepare: P,
    write: F,
) -> AppResult<Written<StoredRecord>>
where
    P: FnOnce(&mut Tx, &Actor, &StoredRecord) -> AppResult<T> + Send + 'static,
    F: FnOnce(&mut Tx, &WriteContext, StoredRecord, T) -> AppResult<Written<StoredRecord>>
        + Send
        + 'static,
    T: Send + 'static,
{
    if let (Some(fast), Some(fields)) = (fast, fields) {
        let saved = fast_path::save(
            fast,
            db,
            &asked.caller,
            key,
            asked.preconditions,
            fields,
            policy,
        )
        .await?;
        if let Some(record) = saved {
            return Ok(Written::Updated(record));
        }
    }
    self::write(db, asked, key, policy, prepare, write).await
}

/// 404 for a lockable that is not there (any more).
pub fn missing(key: impl std::fmt::Display) -> AppError {
    AppError::not_found(format!("{key} does not exist (it may have been deleted)."))
}
