//! `POST /guard`: a host's question, may this user write this record of its
//! own database now, answered by the same guard as baton's own writes.

use crate::auth::access::{rank_on, require};
use crate::auth::api_keys::KeyHolder;
use crate::auth::Actor;
use crate::db::{Database, Tx};
use crate::error::{AppError, AppResult};
use crate::locks::fast_path::{self, FastPath};
use crate::locks::guard::{self, HostWrite, Preconditions, WriteContext};
use crate::locks::naming::{case_by_slug, TargetName};
use crate::locks::policy::LockPolicy;
use crate::locks::rules::HOLDER_ROLE;
use crate::models::User;

/// `Ok` when the write may happen (the holder's lock activity renewed);
/// otherwise the guard's refusal, in the guard's order: 404 (the case, the
/// record), 403 (the user's role), then 423 and 412 (`guard::guard`). The
/// fast guard answers "yes" in one statement when `fast` is on;
/// anything else is the general path's, in one retried transaction.
pub async fn guard(
    db: &Database,
    key: KeyHolder,
    asked: HostWrite,
    policy: &LockPolicy,
    fast: Option<&FastPath>,
) -> AppResult<()> {
    if fast.is_some()
        && fast_path::guard(db, key.hash().to_owned(), asked.clone(), policy)
            .await?
            .is_some()
    {
        return Ok(());
    }
    let policy = *policy;
    db.write_retrying(None, move |tx| guard_in(tx, &key, &asked, &policy))
        .await
}

/// The general path of `POST /guard`, in the caller's transaction: the
/// key, the case and the record (404), the user's role (403), then the
/// record's row locked and the guard.
fn guard_in(tx: &mut Tx, key: &KeyHolder, asked: &HostWrite, policy: &LockPolicy) -> AppResult<()> {
    let HostWrite {
        named,
        case_slug,
        user_external_id,
        session_id,
        lock_token,
    } = asked;
    key.check(tx.conn, tx.now)?;
    let case = case_by_slug(tx.conn, case_slug)?;
    let kind = named.kind();
    let missing = |id: i64| {
        AppError::not_found(format!(
            "{} {id} does not exist in case '{}'.",
            kind.type_name, case.slug
        ))
    };
    // The record before the user (404 comes before 403), read without
    // locking its row: nothing is locked, and nothing named, before the
    // user's role on the case is known.
    if let TargetName::Stored(_, id) = named {
        kind.find(tx.conn, *id)?
            .filter(|t| t.case_id == case.id)
            .ok_or_else(|| missing(*id))?;
    }
    let user = User::find_by_external_id(tx.conn, user_external_id)?
            .filter(User::is_active)
            .ok_or_else(|| {
                AppError::forbidden(format!(
                    "No user {user_external_id} is an editor of case '{}'; mint them a token with the role first (POST /auth/tokens).",
                    case.slug
                ))
            })?;
    require(rank_on(tx.conn, &user, case.id)?, &case, HOLDER_ROLE)?;
    // Now the record's row, locked until the transaction ends.
    let target = match named {
        TargetName::Stored(_, id) => kind
            .find_for_update(tx.conn, *id)?
            .filter(|t| t.case_id == case.id)
            .ok_or_else(|| missing(*id))?,
        TargetName::External { param, .. } => {
            let found = match kind.find_external(tx.conn, case.id, param)? {
                Some(t) => kind.find_for_update(tx.conn, t.identity.id)?,
                None => None,
            };
            // Never locked: no lock names it, but a deep lock on its
            // case covers it all the same.
            found
                .or_else(|| kind.never_locked(case.id, param))
                .ok_or_else(|| AppError::invalid("lockableType is not an external type."))?
        }
    };
    let actor = Actor {
        user,
        token_id: 0,
        session_id: session_id.clone(),
        user_agent: None,
    };
    let ctx = WriteContext {
        actor: &actor,
        preconditions: Preconditions {
            if_match: None,
            lock_token: *lock_token,
        },
        policy,
        tab_required: true,
    };
    guard::guard(tx, &ctx, &target)
}
