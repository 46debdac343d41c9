use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::{CaseId, MembershipId, Role, User, UserId};
use crate::db::schema::{memberships, users};
use crate::db::DbConn;

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = memberships)]
pub struct Membership {
    pub id: MembershipId,
    pub case_id: CaseId,
    pub user_id: UserId,
    pub role: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

impl super::WireType for Membership {
    const TYPE: &'static str = "Membership";
    const TABLE: &'static str = "memberships";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

/// A new membership's row, created and updated `now`.
#[derive(Insertable)]
#[diesel(table_name = memberships)]
struct NewMembership {
    case_id: CaseId,
    user_id: UserId,
    role: &'static str,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

impl NewMembership {
    fn at(case_id: CaseId, user_id: UserId, role: Role, now: NaiveDateTime) -> NewMembership {
        NewMembership {
            case_id,
            user_id,
            role: role.as_str(),
            created_at: now,
            updated_at: now,
        }
    }
}

impl Membership {
    pub fn find(conn: &mut DbConn, id: MembershipId) -> QueryResult<Option<Membership>> {
        memberships::table
            .find(id)
            .select(Membership::as_select())
            .get_result(conn)
            .optional()
    }

    pub fn find_for(
        conn: &mut DbConn,
        case_id: CaseId,
        user_id: UserId,
    ) -> QueryResult<Option<Membership>> {
        memberships::table
            .filter(memberships::case_id.eq(case_id))
            .filter(memberships::user_id.eq(user_id))
            .select(Membership::as_select())
            .get_result(conn)
            .optional()
    }

    /// The members of a case with their users, by name.
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<(Membership, User)>> {
        memberships::table
            .inner_join(users::table)
            .filter(memberships::case_id.eq(case_id))
            .select((Membership::as_select(), User::as_select()))
            .order((users::name.asc(), users::id.asc()))
            .load(conn)
    }

    /// The cases a user is a member of, with their role in each.
    pub fn roles_of_user(conn: &mut DbConn, user_id: UserId) -> QueryResult<Vec<(CaseId, Role)>> {
        let rows: Vec<(CaseId, String)> = memberships::table
            .filter(memberships::user_id.eq(user_id))
            .select((memberships::case_id, memberships::role))
            .load(conn)?;
        Ok(rows
            .into_iter()
            .filter_map(|(case, role)| Role::parse(&role).map(|role| (case, role)))
            .collect())
    }

    pub fn count_managers(conn: &mut DbConn, case_id: CaseId) -> QueryResult<i64> {
        memberships::table
            .filter(memberships::case_id.eq(case_id))
            .filter(memberships::role.eq(Role::Manager.as_str()))
            .count()
            .get_result(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        case_id: CaseId,
        user_id: UserId,
        role: Role,
        now: NaiveDateTime,
    ) -> QueryResult<Membership> {
        diesel::insert_into(memberships::table)
            .values(NewMembership::at(case_id, user_id, role, now))
            .returning(memberships::all_columns)
            .get_result::<Membership>(conn)
    }

    /// The user's membership of the case, made with `role` if there is
    /// none: two requests making it at once get the same row.
    pub fn find_or_create(
        conn: &mut DbConn,
        case_id: CaseId,
        user_id: UserId,
        role: Role,
        now: NaiveDateTime,
    ) -> QueryResult<Membership> {
        let insert = diesel::insert_into(memberships::table)
            .values(NewMembership::at(case_id, user_id, role, now))
            .on_conflict((memberships::case_id, memberships::user_id))
            .do_nothing();
        crate::on_backend!(conn, |c| insert.execute(c))?;
        Membership::find_for(conn, case_id, user_id)?.ok_or(diesel::NotFound)
    }

    pub fn set_role(
        &self,
        conn: &mut DbConn,
        role: Role,
        now: NaiveDateTime,
    ) -> QueryResult<Membership> {
        diesel::update(memberships::table.find(self.id))
            .set((
                memberships::role.eq(role.as_str()),
                memberships::updated_at.eq(now),
            ))
            .returning(memberships::all_columns)
            .get_result::<Membership>(conn)
    }

    pub fn delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        diesel::delete(memberships::table.find(self.id))
            .execute(conn)
            .map(|_| ())
    }

    pub fn role(&self) -> Role {
        // The CHECK constraint keeps the column to the three roles.
        Role::parse(&self.role).unwrap_or(Role::Reader)
    }
}
