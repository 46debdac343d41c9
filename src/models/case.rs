use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{cases, memberships};
use crate::db::DbConn;
use crate::models::{CaseId, UserId};

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = cases)]
pub struct Case {
    pub id: CaseId,
    pub slug: String,
    pub title: String,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = cases)]
pub struct CaseChanges {
    pub title: Option<String>,
}

super::versioned_record!(Case, cases, CaseChanges, id = CaseId, type = "Case", case = id);

impl Case {
    pub fn find_by_slug(conn: &mut DbConn, slug: &str) -> QueryResult<Option<Case>> {
        cases::table
            .filter(cases::slug.eq(slug))
            .select(Case::as_select())
            .get_result(conn)
            .optional()
    }

    /// The cases a user is a member of, by title.
    pub fn of_member(conn: &mut DbConn, user_id: UserId) -> QueryResult<Vec<Case>> {
        cases::table
            .inner_join(memberships::table)
            .filter(memberships::user_id.eq(user_id))
            .select(Case::as_select())
            .order((cases::title.asc(), cases::id.asc()))
            .load(conn)
    }

    pub fn all(conn: &mut DbConn) -> QueryResult<Vec<Case>> {
        cases::table
            .select(Case::as_select())
            .order((cases::title.asc(), cases::id.asc()))
            .load(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        slug: &str,
        title: &str,
        now: NaiveDateTime,
    ) -> QueryResult<Case> {
        diesel::insert_into(cases::table)
            .values((
                cases::slug.eq(slug),
                cases::title.eq(title),
                cases::version.eq(1),
                cases::created_at.eq(now),
                cases::updated_at.eq(now),
            ))
            .returning(cases::all_columns)
            .get_result::<Case>(conn)
    }

    /// Before deleting: the row's strongest lock on PostgreSQL (the guard's
    /// `FOR NO KEY UPDATE` lets inserts into the case go by). From here on, a
    /// lock, card or presence inserted into this case waits for the delete
    /// and then fails its foreign key, instead of being cascaded away unaudited.
    pub fn lock_for_delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, cases, cases::id.eq(self.id))
    }
}
