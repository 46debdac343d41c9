use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::edgenotes;
use crate::db::DbConn;
use crate::models::{CaseId, EdgenoteId};

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = edgenotes)]
pub struct Edgenote {
    pub id: EdgenoteId,
    pub case_id: CaseId,
    pub slug: String,
    pub caption: String,
    pub content: String,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = edgenotes)]
pub struct EdgenoteChanges {
    pub slug: Option<String>,
    pub caption: Option<String>,
    pub content: Option<String>,
}

super::versioned_record!(Edgenote, edgenotes, EdgenoteChanges, id = EdgenoteId, type = "Edgenote", case = case_id);

impl Edgenote {
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<Edgenote>> {
        edgenotes::table
            .filter(edgenotes::case_id.eq(case_id))
            .select(Edgenote::as_select())
            .order((edgenotes::slug.asc(), edgenotes::id.asc()))
            .load(conn)
    }

    pub fn slug_taken(conn: &mut DbConn, case_id: CaseId, slug: &str) -> QueryResult<bool> {
        diesel::select(diesel::dsl::exists(
            edgenotes::table
                .filter(edgenotes::case_id.eq(case_id))
                .filter(edgenotes::slug.eq(slug)),
        ))
        .get_result(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        case_id: CaseId,
        slug: &str,
        caption: &str,
        content: &str,
        now: NaiveDateTime,
    ) -> QueryResult<Edgenote> {
        diesel::insert_into(edgenotes::table)
            .values((
                edgenotes::case_id.eq(case_id),
                edgenotes::slug.eq(slug),
                edgenotes::caption.eq(caption),
                edgenotes::content.eq(content),
                edgenotes::version.eq(1),
                edgenotes::created_at.eq(now),
                edgenotes::updated_at.eq(now),
            ))
            .returning(edgenotes::all_columns)
            .get_result::<Edgenote>(conn)
    }
}
