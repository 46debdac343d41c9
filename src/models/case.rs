use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{cases, memberships};
use crate::db::{DbConn, Tx};
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
    /// Who made it ([`CaseMaker::as_str`]); `None` for a case made before
    /// baton recorded it.
    pub made_by: Option<String>,
}

/// Who made a case: a person (`POST /cases`, the demo) or a team's backend
/// (`POST /auth/tokens`). A host never provisions anyone into a case a
/// person made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseMaker {
    Person,
    Host,
}

impl CaseMaker {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseMaker::Person => "person",
            CaseMaker::Host => "host",
        }
    }
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = cases)]
pub struct CaseChanges {
    pub title: Option<String>,
}

impl super::WireType for Case {
    const TYPE: &'static str = "Case";
    const TABLE: &'static str = "cases";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

/// A new case's row: version 1, created and updated `now`.
#[derive(Insertable)]
#[diesel(table_name = cases)]
struct NewCase<'a> {
    slug: &'a str,
    title: &'a str,
    version: i64,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    made_by: &'static str,
}

impl<'a> NewCase<'a> {
    fn at(slug: &'a str, title: &'a str, by: CaseMaker, now: NaiveDateTime) -> NewCase<'a> {
        NewCase {
            slug,
            title,
            version: 1,
            created_at: now,
            updated_at: now,
            made_by: by.as_str(),
        }
    }
}

impl Case {
    pub fn find(conn: &mut DbConn, id: CaseId) -> QueryResult<Option<Case>> {
        cases::table
            .find(id)
            .select(Case::as_select())
            .get_result(conn)
            .optional()
    }

    /// Like `find`, the row locked until the transaction ends (PostgreSQL;
    /// see "Row-lock order" in `crate::locks`).
    pub fn find_for_update(conn: &mut DbConn, id: CaseId) -> QueryResult<Option<Case>> {
        crate::select_one_for_no_key_update!(conn, cases::table.find(id).select(Case::as_select()))
    }

    /// The cases with these ids, by id, in one query; with `for_update`
    /// their rows are locked in id order until the transaction ends
    /// (PostgreSQL).
    pub fn find_all(conn: &mut DbConn, ids: &[i64], for_update: bool) -> QueryResult<Vec<Case>> {
        let ids: Vec<CaseId> = ids.iter().map(|&id| CaseId(id)).collect();
        macro_rules! by_ids {
            () => {
                cases::table
                    .filter(cases::id.eq_any(ids.clone()))
                    .order(cases::id.asc())
                    .select(Case::as_select())
            };
        }
        match conn {
            // The lock clause sits above the sort: rows lock in id order.
            DbConn::Postgresql(c) if for_update => by_ids!().for_no_key_update().load(c),
            _ => by_ids!().load(conn),
        }
    }

    /// Applies `changes` and increments `version`. The caller has read the
    /// row for update, so `self.version` is current.
    pub fn update(
        &self,
        conn: &mut DbConn,
        changes: &CaseChanges,
        now: NaiveDateTime,
    ) -> QueryResult<Case> {
        diesel::update(cases::table.find(self.id))
            .set((
                changes,
                cases::version.eq(self.version + 1),
                cases::updated_at.eq(now),
            ))
            .returning(cases::all_columns)
            .get_result::<Case>(conn)
    }

    /// Deletes the case and, by cascade, everything in it, its audit
    /// trail included: so the audit entries this transaction queued for it
    /// go too (their frames are still published).
    pub fn delete(&self, tx: &mut Tx) -> QueryResult<()> {
        tx.forget_audit_of_case(self.id.get());
        diesel::delete(cases::table.find(self.id))
            .execute(tx.conn)
            .map(|_| ())
    }

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

    /// Whether a person made it (not a host, and not before baton recorded who).
    pub fn made_by_a_person(&self) -> bool {
        self.made_by.as_deref() == Some(CaseMaker::Person.as_str())
    }

    pub fn create(
        conn: &mut DbConn,
        slug: &str,
        title: &str,
        by: CaseMaker,
        now: NaiveDateTime,
    ) -> QueryResult<Case> {
        diesel::insert_into(cases::table)
            .values(NewCase::at(slug, title, by, now))
            .returning(cases::all_columns)
            .get_result::<Case>(conn)
    }

    /// The case with this slug, created (with `title`, by `by`) if there is
    /// none: two requests creating it at once get the same row.
    pub fn find_or_create(
        conn: &mut DbConn,
        slug: &str,
        title: &str,
        by: CaseMaker,
        now: NaiveDateTime,
    ) -> QueryResult<Case> {
        if let Some(case) = Case::find_by_slug(conn, slug)? {
            return Ok(case);
        }
        let insert = diesel::insert_into(cases::table)
            .values(NewCase::at(slug, title, by, now))
            .on_conflict(cases::slug)
            .do_nothing();
        crate::on_backend!(conn, |c| insert.execute(c))?;
        Case::find_by_slug(conn, slug)?.ok_or(diesel::NotFound)
    }

    /// Before deleting: the row's strongest lock on PostgreSQL (the guard's
    /// `FOR NO KEY UPDATE` lets inserts into the case go by). From here on, a
    /// lock, card or presence inserted into this case waits for the delete
    /// and then fails its foreign key, instead of being cascaded away unaudited.
    pub fn lock_for_delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, cases, cases::id.eq(self.id))
    }
}
