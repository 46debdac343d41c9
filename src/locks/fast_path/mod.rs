//! The fast path: on PostgreSQL the everyday acquire (a free record, no
//! takeover), the holder's release and the everyday save of a declared
//! record's fields are one statement each, committed on its own, with the
//! token check, the audit row and the broadcast in it
//! (`statements.rs`, from the SQL of `sql.rs`). `None` means "take the general
//! path", which then decides everything the fast path does not:
//! 401/403/404/409/412/423, renewing one's own lock, takeovers, locks past
//! their lease. SQLite, whose statements cost no round trip, always takes
//! the general path.
//!
//! The statements check the caller as this instance knows them
//! (`callers`), while the auth epoch has not moved, rather than reading
//! tokens, users and memberships again.

pub mod callers;
pub mod sql;
pub mod statements;

use std::sync::Arc;

use diesel::pg::PgConnection;
use diesel::QueryResult;

use callers::{KnownCaller, KnownCallers};
use statements::{FastSave as FastSaveCall, FreshLock};

use super::counting::count_event;
use super::guard::{HostWrite, Preconditions};
use super::naming::TargetName;
use super::policy::LockPolicy;
use super::rules::holder_roles;
use super::target::TargetKind;
use crate::auth::Caller;
use crate::db::{Backend, Database, DbConn, DbError};
use crate::models::{HeldLock, LockAction, LockId, StoredKey, StoredRecord, TokenHolder};
use crate::schema::body::RecordInput;
use crate::schema::RecordType;

/// An instance's fast path, when it serves PostgreSQL with
/// `BATON_LOCK_FAST_PATH` on: the callers it has checked.
#[derive(Clone, Default)]
pub struct FastPath {
    callers: Arc<KnownCallers>,
}

impl FastPath {
    /// Runs `statement` as the caller `holder` names, known or read now;
    /// `None` when the token is not live (the general path says why). A
    /// statement that declined (`None`) may have met a moved auth epoch: the
    /// caller is read again at their next request.
    fn as_caller<T>(
        &self,
        pg: &mut PgConnection,
        holder: TokenHolder,
        statement: impl FnOnce(&mut PgConnection, &KnownCaller) -> QueryResult<Option<T>>,
    ) -> QueryResult<Option<T>> {
        let Some(caller) = self.callers.get_or_read(pg, holder, holder_roles())? else {
            return Ok(None);
        };
        let done = statement(pg, &caller)?;
        if done.is_none() {
            self.callers.forget(holder);
        }
        Ok(done)
    }
}

/// Takes the lock on a free record in one statement, or `None`.
pub async fn acquire(
    fast: &FastPath,
    db: &Database,
    caller: &Caller,
    kind: &'static TargetKind,
    id: i64,
    policy: &LockPolicy,
) -> Result<Option<HeldLock>, DbError> {
    let Some(sql) = sql::fast_acquire_of(kind) else {
        return Ok(None);
    };
    let holder = caller.token_holder();
    let session_id = caller.session_id().cloned();
    let user_agent = caller.user_agent().cloned();
    let ttl = policy.lease_of(kind.type_name);
    let fast = fast.clone();
    let held = one_statement(db, "acquire", move |pg| {
        let fresh = FreshLock {
            sql,
            lockable_type: kind.type_name,
            lockable_id: id,
            session_id: session_id.as_deref(),
            user_agent: user_agent.as_deref(),
            ttl,
        };
        fast.as_caller(pg, holder, |pg, caller| {
            statements::acquire(pg, caller, &fresh)
        })
    })
    .await?;
    Ok(counted(held, LockAction::Acquired))
}

/// Releases the caller's own lock, still in force, in one statement; or `None`.
pub async fn release(
    fast: &FastPath,
    db: &Database,
    caller: &Caller,
    id: LockId,
    policy: &LockPolicy,
) -> Result<Option<HeldLock>, DbError> {
    let holder = caller.token_holder();
    let session_id = caller.session_id().cloned();
    let idle_timeout = policy.idle_timeout;
    let fast = fast.clone();
    let held = one_statement(db, "release", move |pg| {
        fast.as_caller(pg, holder, |pg, caller| {
            statements::release(pg, caller, id, session_id.as_deref(), idle_timeout)
        })
    })
    .await?;
    Ok(counted(held, LockAction::Released))
}

/// `held`, its lock event counted when the fast path took the request.
fn counted(held: Option<HeldLock>, action: LockAction) -> Option<HeldLock> {
    if held.is_some() {
        count_event(action);
    }
    held
}

/// A save the fast path may take: only declared fields that are not
/// `unique` and not `null` (no position, no move), already valid as the
/// type declares them; `None` leaves the request to the general path.
pub struct FastSave {
    fields: String,
}

impl FastSave {
    pub fn of(ty: &RecordType, input: &RecordInput) -> Option<FastSave> {
        let plain = input
            .fields
            .iter()
            .all(|(name, value)| !ty.unique.contains(name) && !value.is_null());
        if !plain || !input.is_fields_only() || input.fields.is_empty() {
            return None;
        }
        Some(FastSave {
            fields: serde_json::to_string(&input.fields).ok()?,
        })
    }
}

/// Saves a stored record's fields in one statement; or `None`.
pub async fn save(
    fast: &FastPath,
    db: &Database,
    caller: &Caller,
    key: StoredKey,
    preconditions: Preconditions,
    fields: FastSave,
    policy: &LockPolicy,
) -> Result<Option<StoredRecord>, DbError> {
    let holder = caller.token_holder();
    let session_id = caller.session_id().cloned();
    let (ttl, idle_timeout) = (policy.lease_of(&key.ty.name), policy.idle_timeout);
    let fast = fast.clone();
    one_statement(db, "save", move |pg| {
        let save = FastSaveCall {
            record_type: &key.ty.name,
            id: key.id.get(),
            session_id: session_id.as_deref(),
            lock_token: preconditions.lock_token,
            if_match: preconditions.if_match,
            fields: &fields.fields,
            ttl,
            idle_timeout,
        };
        match fast.as_caller(pg, holder, |pg, caller| statements::save(pg, caller, &save)) {
            Ok(saved) => Ok(saved.and_then(StoredRecord::shallow)),
            // Fields stored before NULs were refused cannot be read as
            // jsonb: the general path merges them in Rust and saves them.
            Err(diesel::result::Error::DatabaseError(_, info))
                if crate::db::cannot_hold_nul(info.message()) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    })
    .await
}

/// Answers "may write" to a `POST /guard` in one statement; or `None`
/// (anything else, which the general path decides). Only for records of a
/// declared type: a case is the general path's.
pub async fn guard(
    db: &Database,
    key_hash: String,
    asked: HostWrite,
    policy: &LockPolicy,
) -> Result<Option<()>, DbError> {
    let kind = asked.named.kind();
    if kind.record_type().is_none() {
        return Ok(None);
    }
    let (ttl, idle_timeout) = (policy.lease_of(kind.type_name), policy.idle_timeout);
    one_statement(db, "guard", move |pg| {
        let (id, param) = match &asked.named {
            TargetName::Stored(_, id) => (Some(*id), None),
            TargetName::External { param, .. } => (None, Some(param.as_str())),
        };
        let call = statements::FastGuard {
            key_hash: &key_hash,
            record_type: kind.type_name,
            external: kind.is_external(),
            id,
            param,
            case_slug: &asked.case_slug,
            user_external_id: &asked.user_external_id,
            session_id: asked.session_id.as_deref(),
            lock_token: asked.lock_token,
            ttl,
            idle_timeout,
            editor_roles: holder_roles(),
        };
        statements::guard(pg, &call)
    })
    .await
}

/// Runs `statement` (PostgreSQL only) committed on its own, and counts
/// whether it took the request.
async fn one_statement<T, F>(
    db: &Database,
    request: &'static str,
    statement: F,
) -> Result<Option<T>, DbError>
where
    F: FnOnce(&mut PgConnection) -> QueryResult<Option<T>> + Send + 'static,
    T: Send + 'static,
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
    let outcome = if held.is_some() { "taken" } else { "declined" };
    metrics::counter!("baton_lock_fast_path_total", "request" => request, "outcome" => outcome)
        .increment(1);
    Ok(held)
}
