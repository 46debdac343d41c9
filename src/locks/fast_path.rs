//! The lock fast path: on PostgreSQL the everyday acquire (a free record,
//! no takeover) and the holder's release are one statement each, committed
//! on its own, with the token check, the audit row and the broadcast in it
//! (`crate::models::lock_fast_path`). `None` means "take the general path",
//! which then decides everything the fast path does not: 401/403/404/409,
//! renewing one's own lock, takeovers, locks past their lease. SQLite, whose
//! statements cost no round trip, always takes the general path.

use diesel::pg::PgConnection;
use diesel::QueryResult;

use super::engine::count_event;
use super::{LockPolicy, LockableKind};
use crate::auth::access::Rank;
use crate::auth::Caller;
use crate::db::{Backend, Database, DbConn, DbError};
use crate::models::lock_fast_path::{self, FreshLock};
use crate::models::{HeldLock, LockAction, LockId, Role};

/// Takes the lock on a free record in one statement, or `None`.
pub async fn acquire(
    db: &Database,
    caller: &Caller,
    kind: &'static LockableKind,
    id: i64,
    policy: &LockPolicy,
) -> Result<Option<HeldLock>, DbError> {
    let holder = caller.token_holder();
    let session_id = caller.session_id().cloned();
    let user_agent = caller.user_agent().cloned();
    let ttl = policy.ttl;
    one_statement(db, "acquire", LockAction::Acquired, move |pg| {
        let editor_roles: Vec<&str> = Role::ALL
            .into_iter()
            .filter(|r| Rank::Member(*r).allows(Role::Editor))
            .map(Role::as_str)
            .collect();
        let fresh = FreshLock {
            sql: kind.fast_acquire,
            lockable_type: kind.type_name,
            lockable_id: id,
            session_id: session_id.as_deref(),
            user_agent: user_agent.as_deref(),
            ttl,
            editor_roles: &editor_roles,
        };
        lock_fast_path::acquire(pg, holder, &fresh)
    })
    .await
}

/// Releases the caller's own lock, still in force, in one statement; or `None`.
pub async fn release(
    db: &Database,
    caller: &Caller,
    id: LockId,
    policy: &LockPolicy,
) -> Result<Option<HeldLock>, DbError> {
    let holder = caller.token_holder();
    let session_id = caller.session_id().cloned();
    let idle_timeout = policy.idle_timeout;
    one_statement(db, "release", LockAction::Released, move |pg| {
        lock_fast_path::release(pg, holder, id, session_id.as_deref(), idle_timeout)
    })
    .await
}

/// Runs `statement` (PostgreSQL only) committed on its own, and counts what
/// it did: the lock event when it took the request, and whether it did.
async fn one_statement<F>(
    db: &Database,
    request: &'static str,
    action: LockAction,
    statement: F,
) -> Result<Option<HeldLock>, DbError>
where
    F: FnOnce(&mut PgConnection) -> QueryResult<Option<HeldLock>> + Send + 'static,
{
    if db.backend() != Backend::Postgres {
        return Ok(None);
    }
    let held = db
        .autocommit(
            move |conn| match conn {
                DbConn::Postgresql(pg) => statement(pg),
                DbConn::Sqlite(_) => Ok(None),
            },
            Option::is_some,
        )
        .await?;
    if held.is_some() {
        count_event(action);
    }
    let outcome = if held.is_some() { "taken" } else { "declined" };
    metrics::counter!("baton_lock_fast_path_total", "request" => request, "outcome" => outcome)
        .increment(1);
    Ok(held)
}
