//! Case roles and ranks: who may read, edit or manage a case, and who
//! outranks whom when a lock is taken over or broken.

use std::fmt;

use diesel::prelude::*;

use crate::db::schema::memberships;
use crate::db::DbConn;
use crate::error::{AppError, AppResult};
use crate::models::{Case, CaseId, Role, User, UserId};

/// Authority on a case. A site admin acts as a manager everywhere and
/// outranks every case role (the derived order puts it last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    Member(Role),
    SiteAdmin,
}

impl Rank {
    pub fn allows(self, role: Role) -> bool {
        self >= Rank::Member(role)
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rank::Member(role) => role.fmt(f),
            Rank::SiteAdmin => f.write_str("site admin"),
        }
    }
}

/// The user's rank on a case, `None` for a non-member.
pub fn rank_on(conn: &mut DbConn, user: &User, case_id: CaseId) -> QueryResult<Option<Rank>> {
    if user.admin {
        return Ok(Some(Rank::SiteAdmin));
    }
    member_rank(conn, user.id, case_id)
}

/// Like [`rank_on`] when only the user id is at hand (the holder of a lock).
pub fn rank_of_user_id(
    conn: &mut DbConn,
    user_id: UserId,
    case_id: CaseId,
) -> QueryResult<Option<Rank>> {
    if User::is_admin(conn, user_id)? {
        return Ok(Some(Rank::SiteAdmin));
    }
    member_rank(conn, user_id, case_id)
}

/// The rank a membership gives, ignoring the site-admin flag.
fn member_rank(conn: &mut DbConn, user_id: UserId, case_id: CaseId) -> QueryResult<Option<Rank>> {
    let role: Option<String> = memberships::table
        .filter(memberships::case_id.eq(case_id))
        .filter(memberships::user_id.eq(user_id))
        .select(memberships::role)
        .get_result(conn)
        .optional()?;
    Ok(role.as_deref().and_then(Role::parse).map(Rank::Member))
}

/// The user's rank on the case if it allows `min`, else 403.
pub fn authorize(conn: &mut DbConn, user: &User, case: &Case, min: Role) -> AppResult<Rank> {
    require(rank_on(conn, user, case.id)?, case, min)
}

/// `rank` if it allows `min` on `case`, else 403 saying what is missing.
pub fn require(rank: Option<Rank>, case: &Case, min: Role) -> AppResult<Rank> {
    match rank {
        Some(rank) if rank.allows(min) => Ok(rank),
        Some(rank) => Err(AppError::forbidden(format!(
            "Only a {min} or above of case '{}' can do this; you are a {rank}.",
            case.slug
        ))),
        // Nothing of the case is named to a non-member: not even its slug,
        // which the request may not have named (a lock's, a record's).
        None => Err(AppError::forbidden(
            "You are not a member of this case; ask one of its managers to add you.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_order_reader_editor_manager_admin() {
        let reader = Rank::Member(Role::Reader);
        let editor = Rank::Member(Role::Editor);
        let manager = Rank::Member(Role::Manager);
        assert!(reader < editor && editor < manager && manager < Rank::SiteAdmin);
        assert!(Rank::SiteAdmin.allows(Role::Manager));
        assert!(!reader.allows(Role::Editor));
        assert!(editor.allows(Role::Editor));
    }
}
