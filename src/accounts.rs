//! Changing and removing user accounts, with what follows from each: a new
//! password ends the user's other tokens; a removed user's tokens end, their
//! locks are released (`kicked`) and their open tabs are closed. Shared by
//! the HTTP routes and the `baton user` commands.

use crate::auth::access::Rank;
use crate::db::{KickReason, Outgoing, Tabs, Tx};
use crate::error::{AppError, AppResult};
use crate::locks::engine::rules;
use crate::locks::engine::tabs::{end_all_holdings, end_holdings_where};
use crate::locks::engine::LockPolicy;
use crate::models::{
    AuthToken, Case, CaseId, CaseMaker, Membership, Role, User, UserChanges, UserId, UserRef,
};

/// A user as a team's own backend describes them (`POST /auth/tokens`).
#[derive(Clone, Debug)]
pub struct HostUser {
    pub external_id: String,
    pub name: String,
    pub email: Option<String>,
}

/// A case a team's backend names for its user, and the user's role in it
/// (`None` removes the membership).
#[derive(Clone, Debug)]
pub struct HostCase {
    pub slug: String,
    pub role: Option<Role>,
    pub title: Option<String>,
}

/// Creates or updates the user a team's backend knows as
/// `user.external_id`, and sets their role in each named case (creating a
/// case that is absent, unless the role is `None`). Cases not named are
/// left alone. A removed membership ends that user's locks and places in
/// line in that case and closes their tabs on it.
pub fn provision(
    tx: &mut Tx,
    user: &HostUser,
    cases: &[HostCase],
    policy: &LockPolicy,
) -> AppResult<User> {
    if let Some(email) = &user.email {
        if let Some(other) = User::find_by_email(tx.conn, email)? {
            if other.external_id.as_deref() != Some(user.external_id.as_str()) {
                return Err(AppError::Conflict(format!(
                    "Another user already has the email {email}; send a different one, or none."
                )));
            }
        }
    }
    let record = match User::find_by_external_id(tx.conn, &user.external_id)? {
        Some(found) if !found.is_active() => {
            return Err(AppError::Conflict(format!(
                "The user {} was removed from baton, so no token can be made for them.",
                user.external_id
            )))
        }
        Some(found) => {
            User::update_external(tx.conn, found.id, &user.name, user.email.as_deref(), tx.now)?
        }
        None => User::create_external(
            tx.conn,
            &user.external_id,
            &user.name,
            user.email.as_deref(),
            tx.now,
        )?,
    };
    for named in cases {
        // Found or made, never inserted twice: two backends' calls for the
        // same new user and case at once both succeed.
        match named.role {
            Some(role) => {
                let title = named.title.as_deref().unwrap_or(&named.slug);
                let case =
                    Case::find_or_create(tx.conn, &named.slug, title, CaseMaker::Host, tx.now)?;
                hosts_case(&case)?;
                let membership =
                    Membership::find_or_create(tx.conn, case.id, record.id, role, tx.now)?;
                if membership.role() != role {
                    set_role(tx, membership, role, policy)?;
                }
            }
            None => {
                let Some(case) = Case::find_by_slug(tx.conn, &named.slug)? else {
                    continue;
                };
                hosts_case(&case)?;
                if let Some(existing) = Membership::find_for(tx.conn, case.id, record.id)? {
                    remove_membership(tx, existing, policy)?;
                }
            }
        }
    }
    Ok(record)
}

/// A case a person made is theirs: a host's call that names it is refused
/// whole (409; its transaction rolls back, so nothing is changed).
fn hosts_case(case: &Case) -> AppResult<()> {
    if case.made_by_a_person() {
        return Err(AppError::Conflict(format!(
            "The case '{}' was made by a person in baton, not by your backend, so your backend cannot add or remove its members; use another slug.",
            case.slug
        )));
    }
    Ok(())
}

/// Removes a membership: in the same transaction the user's locks in the
/// case end (`kicked`, handed to the next in line) and they leave its
/// waiting lines; once committed, every tab of theirs on the case, on every
/// instance, is told (`access_removed`) and closed.
pub fn remove_membership(
    tx: &mut Tx,
    membership: Membership,
    policy: &LockPolicy,
) -> AppResult<()> {
    let (user_id, case_id) = (membership.user_id, membership.case_id);
    end_holdings_in_case(tx, user_id, case_id, policy)?;
    membership.delete(tx.conn)?;
    tx.publish(Outgoing::Close {
        tabs: Tabs::OnCase {
            user: user_id.get(),
            case: case_id.get(),
        },
        reason: KickReason::AccessRemoved,
    });
    Ok(())
}

/// Changes a member's role. Lowered below editor, the user's locks and
/// places in line in the case end as for a removal; their tabs stay open
/// (a reader watches).
pub fn set_role(
    tx: &mut Tx,
    membership: Membership,
    role: Role,
    policy: &LockPolicy,
) -> AppResult<Membership> {
    let (user_id, case_id) = (membership.user_id, membership.case_id);
    let membership = membership.set_role(tx.conn, role, tx.now)?;
    if !rules::may_hold(Some(Rank::Member(role))) {
        end_holdings_in_case(tx, user_id, case_id, policy)?;
    }
    Ok(membership)
}

/// Ends a user's locks in a case (`kicked`, handed to the next in line) and
/// takes them out of its waiting lines. A site admin keeps theirs: their
/// rank does not come from the membership.
fn end_holdings_in_case(
    tx: &mut Tx,
    user_id: UserId,
    case_id: CaseId,
    policy: &LockPolicy,
) -> AppResult<()> {
    if User::is_admin(tx.conn, user_id)? {
        return Ok(());
    }
    end_holdings_where(tx, user_id, |case| case == case_id, policy)
}

/// A site admin made an ordinary user: what only the admin rank allowed
/// ends at once. Their locks and places in line end (`kicked`) in every
/// case where they are not an editor or above, and every channel of theirs
/// on a case they are not a member of, on every instance, is told
/// (`access_removed`) and closed.
fn end_admin_rank(tx: &mut Tx, user_id: UserId, policy: &LockPolicy) -> AppResult<()> {
    let roles = Membership::roles_of_user(tx.conn, user_id)?;
    let may_hold = |case: CaseId| {
        roles.iter().any(|(member_of, role)| {
            *member_of == case && rules::may_hold(Some(Rank::Member(*role)))
        })
    };
    end_holdings_where(tx, user_id, |case| !may_hold(case), policy)?;
    tx.publish(Outgoing::Close {
        tabs: Tabs::OutsideCases {
            user: user_id.get(),
            keep: roles.iter().map(|(case, _)| case.get()).collect(),
        },
        reason: KickReason::AccessRemoved,
    });
    Ok(())
}

/// Applies `changes` to an active user. With a new password hash, every
/// token of the user but `keep_token` ends at once; a site admin made an
/// ordinary user loses at once what only that rank allowed
/// ([`end_admin_rank`]).
pub fn update_user(
    tx: &mut Tx,
    user_id: UserId,
    changes: UserChanges,
    keep_token: Option<i64>,
    policy: &LockPolicy,
) -> AppResult<User> {
    let before = active_user(tx, user_id)?;
    let new_password = changes.password_hash.is_some();
    let demoted = before.admin && changes.admin == Some(false);
    let user = User::update(tx.conn, user_id, &changes, tx.now)?;
    if new_password {
        end_other_tokens(tx, user_id, keep_token)?;
    }
    if demoted {
        end_admin_rank(tx, user_id, policy)?;
    }
    Ok(user)
}

/// Sets an active user's password (`baton user passwd`): every token of
/// theirs ends at once, as for [`update_user`] with a new password.
pub fn change_password(tx: &mut Tx, user_id: UserId, password_hash: String) -> AppResult<User> {
    active_user(tx, user_id)?;
    let changes = UserChanges {
        password_hash: Some(password_hash),
        ..UserChanges::default()
    };
    let user = User::update(tx.conn, user_id, &changes, tx.now)?;
    end_other_tokens(tx, user_id, None)?;
    Ok(user)
}

/// A new password: every token of the user but `keep_token` ends, and
/// every tab opened with one is signed out, on every instance.
fn end_other_tokens(tx: &mut Tx, user_id: UserId, keep_token: Option<i64>) -> AppResult<()> {
    AuthToken::revoke_all_of_user(tx.conn, user_id, keep_token, tx.now)?;
    tx.publish(Outgoing::Close {
        tabs: Tabs::OfUser {
            user: user_id.get(),
            except_token: keep_token,
        },
        reason: KickReason::SignedOut,
    });
    Ok(())
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
    end_all_holdings(tx, user_id, by, policy)?;
    // Their tokens ended: every tab of theirs is signed out.
    tx.publish(Outgoing::Close {
        tabs: Tabs::OfUser {
            user: user_id.get(),
            except_token: None,
        },
        reason: KickReason::SignedOut,
    });
    Ok(user)
}

fn active_user(tx: &mut Tx, user_id: UserId) -> AppResult<User> {
    User::find(tx.conn, user_id)?
        .filter(User::is_active)
        .ok_or_else(|| AppError::not_found(format!("There is no user {user_id}.")))
}
