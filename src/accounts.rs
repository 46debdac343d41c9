//! Changing and removing user accounts, with what follows from each: a new
//! password ends the user's other tokens; a removed user's tokens end, their
//! locks are released (`kicked`) and their open tabs are closed. Shared by
//! the HTTP routes and the `baton user` commands.

use crate::db::{Outgoing, Tx};
use crate::error::{AppError, AppResult};
use crate::locks::holding::{end, Line};
use crate::locks::{line, LockPolicy};
use crate::models::{
    AuthToken, Lock, LockAction, Presence, User, UserChanges, UserId, UserRef, Waiter,
};

/// Applies `changes` to an active user. With a new password hash, every
/// token of the user but `keep_token` ends at once.
pub fn update_user(
    tx: &mut Tx,
    user_id: UserId,
    changes: UserChanges,
    keep_token: Option<i64>,
) -> AppResult<User> {
    active_user(tx, user_id)?;
    let new_password = changes.password_hash.is_some();
    let user = User::update(tx.conn, user_id, &changes, tx.now)?;
    if new_password {
        AuthToken::revoke_all_of_user(tx.conn, user_id, keep_token, tx.now)?;
    }
    Ok(user)
}

/// Deactivates a user: their tokens end, they leave every waiting line, their
/// locks are released as `kicked` (by `by`, when an admin did it) and handed
/// to the next in line, and every open tab of theirs,
/// on any instance, is told and closed. Their audit history stays.
pub fn remove_user(
    tx: &mut Tx,
    user_id: UserId,
    by: Option<&UserRef>,
    policy: &LockPolicy,
) -> AppResult<User> {
    let user = active_user(tx, user_id)?;
    User::deactivate(tx.conn, user_id, tx.now)?;
    AuthToken::revoke_all_of_user(tx.conn, user_id, None, tx.now)?;
    // Rows in the row-lock order of `crate::locks`: their locks, then every
    // place in line this touches. Then out of every line, so that none of
    // their locks goes back to them.
    Lock::lock_rows_of_user(tx.conn, user_id)?;
    let places = Waiter::of_user(tx.conn, user_id)?;
    let held = Lock::of_user(tx.conn, user_id)?;
    line::lock_places_for_leaving(tx, &places, &held)?;
    line::remove_user(tx, user_id)?;
    for held in Lock::of_user(tx.conn, user_id)? {
        end(tx, &held, LockAction::Kicked, by, Line::HandOff(policy))?;
    }
    let reason = match by {
        Some(admin) => format!("{} removed your account.", admin.name),
        None => "Your account was removed.".to_owned(),
    };
    for session_id in Presence::sessions_of_user(tx.conn, user_id)? {
        tx.publish(Outgoing::Kick {
            session_id,
            reason: reason.clone(),
        });
    }
    Ok(user)
}

fn active_user(tx: &mut Tx, user_id: UserId) -> AppResult<User> {
    User::find(tx.conn, user_id)?
        .filter(User::is_active)
        .ok_or_else(|| AppError::not_found(format!("There is no user {user_id}.")))
}
