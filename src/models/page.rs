use chrono::NaiveDateTime;
use diesel::dsl::max;
use diesel::prelude::*;

use crate::db::schema::pages;
use crate::db::DbConn;
use crate::models::{CaseId, PageId};

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = pages)]
pub struct Page {
    pub id: PageId,
    pub case_id: CaseId,
    pub position: i32,
    pub title: String,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = pages)]
pub struct PageChanges {
    pub title: Option<String>,
    pub position: Option<i32>,
}

super::versioned_record!(Page, pages, PageChanges, id = PageId, type = "Page", case = case_id);

impl Page {
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<Page>> {
        pages::table
            .filter(pages::case_id.eq(case_id))
            .select(Page::as_select())
            .order((pages::position.asc(), pages::id.asc()))
            .load(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        case_id: CaseId,
        title: &str,
        position: Option<i32>,
        now: NaiveDateTime,
    ) -> QueryResult<Page> {
        let position = match position {
            Some(p) => p,
            None => {
                let last: Option<i32> = pages::table
                    .filter(pages::case_id.eq(case_id))
                    .select(max(pages::position))
                    .get_result(conn)?;
                last.map_or(0, |p| p.saturating_add(1))
            }
        };
        diesel::insert_into(pages::table)
            .values((
                pages::case_id.eq(case_id),
                pages::position.eq(position),
                pages::title.eq(title),
                pages::version.eq(1),
                pages::created_at.eq(now),
                pages::updated_at.eq(now),
            ))
            .returning(pages::all_columns)
            .get_result::<Page>(conn)
    }

    /// Before deleting: the row's strongest lock on PostgreSQL, so that a card
    /// added to the page meanwhile waits and fails rather than being cascaded
    /// away unannounced (see [`crate::models::Case::lock_for_delete`]).
    pub fn lock_for_delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, pages, pages::id.eq(self.id))
    }
}
