//! The lock engine's one door. Every request that takes, renews, reads or
//! ends a lock, or writes a lockable record, comes in through [`Engine`]
//! with parsed values (a named record, a validated body) and gets back
//! what happened; each entry opens its own transaction, chooses the fast
//! path (one statement, PostgreSQL) or the general path, and queues its
//! broadcasts to go out after commit. Handlers only parse, call and render.
//!
//! Inside: `general` (acquire, refresh, release, break, a tab's release, in
//! a transaction), `records` (creating, saving and deleting records and
//! cases through the guard), `read` (what a reader may see), `sets` (lock
//! sets and claims), `tabs` (what tabs, memberships and accounts ending do
//! to locks), `host` (`POST /guard`) and `retention` (the audit trail's).

mod general;
mod host;
mod read;
mod reaper;
mod records;
pub mod retention;
mod sets;
pub mod tabs;

use crate::auth::access::{rank_on, require};
use crate::auth::api_keys::KeyHolder;
use crate::auth::{Actor, Caller};
use crate::db::Database;
use crate::error::{AppError, AppResult};
use crate::locks::fast_path;
use crate::locks::naming::resolve_all;
use crate::models::{HeldLock, Lock, LockEventId, LockId, QueuedWaiter, StoredKey, Tab, WaiterId};
use crate::views::LockEventView;

pub use crate::locks::fast_path::statements::install_fast_save;
pub use crate::locks::fast_path::FastPath;
pub use crate::locks::guard::{HostWrite, Preconditions};
pub use crate::locks::line::Joined;
pub use crate::locks::naming::{case_by_slug, TargetName};
pub use crate::locks::policy::LockPolicy;
pub use crate::locks::rules::{self, AcquireMode};
pub use crate::locks::target::{kind_named, known_types, registry, Lockable, TargetKind};
pub use general::{Acquired, LockStatus};
pub use read::{case_of, lock_snapshot};
pub use reaper::run as run_reaper;

/// The lock engine of one instance: its database, the lock policy, and the
/// fast path when this instance has it on.
#[derive(Clone)]
pub struct Engine {
    db: Database,
    policy: LockPolicy,
    fast: Option<FastPath>,
}

impl Engine {
    pub fn new(db: Database, policy: LockPolicy, fast: Option<FastPath>) -> Engine {
        Engine { db, policy, fast }
    }

    /// How long locks live here.
    pub fn policy(&self) -> &LockPolicy {
        &self.policy
    }

    /// `POST /locks`: the lock on what the request names, as `mode` asks
    /// (`general::acquire`). A `target` the request could not name (422) is
    /// told only once the caller is known, as 401 comes first.
    ///
    /// An acquire of a lockable baton stores takes the fast path when it is
    /// on and every rule that applies is in its SQL
    /// (`rules::fast_path_serves`). Otherwise, in one retried transaction: the record and its
    /// case, then the caller and their role on it, before anything is
    /// locked or written; then the order with deep acquires and membership
    /// changes (`Lock::order_with_deep_acquires`), the role read again under
    /// it (a role lowered meanwhile ended its locks, and this one must not
    /// come after); then the record's row, which orders this acquire with
    /// guarded writes of the same record — but for a deep one, which already
    /// excludes every other lock write and would only deadlock with a
    /// holder's write. SQLite reads the record once: its one writer already
    /// orders every write.
    pub async fn acquire(
        &self,
        caller: &Caller,
        target: AppResult<TargetName>,
        mode: AcquireMode,
    ) -> AppResult<Acquired> {
        if let (Some(fast), Ok(TargetName::Stored(kind, id))) = (&self.fast, &target) {
            let asked = rules::Asked {
                kind,
                mode,
                with_tab: caller.session_id().is_some(),
            };
            if rules::fast_path_serves(&asked) {
                let took = fast_path::acquire(fast, &self.db, caller, kind, *id, &self.policy);
                if let Some(held) = took.await? {
                    return Ok(Acquired::Created(held));
                }
            }
        }
        let named = match target {
            Ok(named) => named,
            Err(e) => {
                // 401 before 422
                let caller = caller.clone();
                self.db.read(move |conn| caller.clone().load(conn)).await?;
                return Err(e);
            }
        };
        let (caller, policy) = (caller.clone(), self.policy);
        self.db
            .write_retrying(caller.editor(), move |tx| {
                let (case_id, found) = match named.find_unlocked(tx.conn) {
                    Ok(found) => found,
                    Err(e) => {
                        caller.clone().load(tx.conn)?;
                        return Err(e);
                    }
                };
                let (actor, case, rank) = caller.clone().load_on_case(tx.conn, case_id)?;
                require(rank, &case, rules::HOLDER_ROLE)?;
                if Lock::order_with_deep_acquires(tx.conn, mode.deep)? {
                    let rank = rank_on(tx.conn, &actor.user, case.id)?;
                    require(rank, &case, rules::HOLDER_ROLE)?;
                }
                // SQLite's one writer runs this whole transaction alone: the
                // record read above is still the record, and there is no row
                // to lock.
                let target = match found {
                    Some(target) if !tx.conn.locks_rows() => target,
                    _ => named.resolve(tx, !mode.deep)?,
                };
                general::acquire(tx, &actor, &target, mode, &policy)
            })
            .await
    }

    /// `DELETE /locks/:id`: the holder's release in one statement when the
    /// fast path is on and nothing else is to be done (no line to hand it
    /// to); else `general::release`, which also breaks someone else's lock.
    pub async fn release(&self, caller: &Caller, id: LockId) -> AppResult<()> {
        if let Some(fast) = &self.fast {
            let released = fast_path::release(fast, &self.db, caller, id, &self.policy);
            if released.await?.is_some() {
                return Ok(());
            }
        }
        let (caller, policy) = (caller.clone(), self.policy);
        self.db
            .write(caller.editor(), move |tx| {
                let actor = caller.load(tx.conn)?;
                general::release(tx, &actor, id, &policy)
            })
            .await
    }

    /// `POST /locks/:id/refresh`: the holder renews lease and activity.
    pub async fn refresh(&self, actor: Actor, id: LockId) -> AppResult<HeldLock> {
        let policy = self.policy;
        self.db
            .write(actor.editor(), move |tx| {
                general::refresh(tx, &actor, id, &policy)
            })
            .await
    }

    /// `DELETE /locks?session=mine`: every lock of the actor's `tab` ends
    /// and the tab leaves every line; how many locks ended.
    pub async fn release_tab(&self, actor: Actor, tab: Tab) -> AppResult<usize> {
        let policy = self.policy;
        self.db
            .write_retrying(actor.editor(), move |tx| {
                general::release_tab(tx, &actor, &tab, &policy)
            })
            .await
    }

    /// `GET /locks/:id`, for readers of its case; 404 once it has ended.
    pub async fn show(&self, actor: Actor, id: LockId) -> AppResult<HeldLock> {
        let policy = self.policy;
        self.db
            .read(move |conn| read::show(conn, &actor, id, &policy))
            .await
    }

    /// `GET /locks?case=`: the locks in force in a case, for its readers.
    pub async fn case_locks(&self, actor: Actor, slug: String) -> AppResult<Vec<HeldLock>> {
        let policy = self.policy;
        self.db
            .read(move |conn| read::case_locks(conn, &actor, &slug, &policy))
            .await
    }

    /// `GET /locks/status`: the record's lock as the actor sees it, and its
    /// waiting line.
    pub async fn status(
        &self,
        actor: Actor,
        named: TargetName,
    ) -> AppResult<(LockStatus, Vec<QueuedWaiter>)> {
        let policy = self.policy;
        self.db
            .read(move |conn| read::status(conn, &actor, &named, &policy))
            .await
    }

    /// `GET /cases/:slug/lock_events` (managers): the audit trail, newest
    /// first, `limit` of them older than `before`.
    pub async fn lock_events(
        &self,
        actor: Actor,
        slug: String,
        limit: i64,
        before: Option<LockEventId>,
    ) -> AppResult<Vec<LockEventView>> {
        self.db
            .read(move |conn| read::lock_events(conn, &actor, &slug, limit, before))
            .await
    }

    /// `POST /locks/batch`: every one of `named` locked by the caller's tab,
    /// or none (`sets::acquire_all`), in one retried transaction.
    pub async fn lock_set(
        &self,
        caller: &Caller,
        named: Vec<TargetName>,
    ) -> AppResult<Vec<HeldLock>> {
        let (caller, policy) = (caller.clone(), self.policy);
        self.db
            .write_retrying(caller.editor(), move |tx| {
                let (actor, targets) = resolve_all(tx, &caller, &named, true)?;
                sets::acquire_all(tx, &actor, &targets, &policy)
            })
            .await
    }

    /// `POST /locks/claim`: a lock on the first of `named` nobody else
    /// holds (`sets::claim`).
    pub async fn claim(&self, caller: &Caller, named: Vec<TargetName>) -> AppResult<Acquired> {
        let (caller, policy) = (caller.clone(), self.policy);
        self.db
            .write(caller.editor(), move |tx| {
                // Not row-locked here: a claim passes busy candidates over.
                let (actor, targets) = resolve_all(tx, &caller, &named, false)?;
                sets::claim(tx, &actor, &targets, &policy)
            })
            .await
    }

    /// `POST /waiters/:id/refresh`: the waiting tab renews its place.
    pub async fn refresh_waiter(&self, actor: Actor, id: WaiterId) -> AppResult<QueuedWaiter> {
        let policy = self.policy;
        self.db
            .write(actor.editor(), move |tx| {
                crate::locks::line::refresh(tx, &actor, id, &policy)
            })
            .await
    }

    /// `DELETE /waiters/:id`: the waiting tab (or its user) leaves the line.
    pub async fn leave_line(&self, actor: Actor, id: WaiterId) -> AppResult<()> {
        self.db
            .write(actor.editor(), move |tx| {
                crate::locks::line::leave_line(tx, &actor, id)
            })
            .await
    }

    /// `POST /guard`: `Ok` when the host's write may happen (the holder's
    /// lock activity renewed); otherwise the guard's refusal.
    pub async fn guard(&self, key: KeyHolder, asked: HostWrite) -> AppResult<()> {
        host::guard(&self.db, key, asked, &self.policy, self.fast.as_ref()).await
    }

    /// `DELETE /admin/sessions/:id` (site admins): every tab with the
    /// session id (of `user` only, if given) loses its locks and places in
    /// line (`kicked`) and is closed.
    pub async fn kick(
        &self,
        admin: Actor,
        session_id: String,
        user: Option<crate::models::UserId>,
        presence_ttl: std::time::Duration,
    ) -> AppResult<()> {
        let policy = self.policy;
        self.db
            .write_retrying(admin.editor(), move |tx| {
                tabs::kick(tx, &admin, &session_id, user, presence_ttl, &policy)
            })
            .await
    }

    /// The locks each of `tabs` holds, for the admin's list of sessions.
    pub async fn locks_of_tabs(&self, tabs: Vec<Tab>) -> AppResult<Vec<Vec<HeldLock>>> {
        self.db
            .read(move |conn| {
                tabs.iter()
                    .map(|tab| Lock::of_tab(conn, tab).map_err(AppError::from))
                    .collect()
            })
            .await
    }
}

/// Where a new record goes (`Engine::create_in`): directly under a case
/// (by slug), or under a record of its type's parent type.
pub enum Parent {
    Case(String),
    Record(StoredKey),
}

/// 404 for a lockable that is not there (any more).
pub fn missing(key: impl std::fmt::Display) -> AppError {
    AppError::not_found(format!("{key} does not exist (it may have been deleted)."))
}
