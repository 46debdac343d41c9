use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde_json::{json, Value};

use super::record_json;
use crate::clock::utc;
use crate::db::schema::edgenotes;
use crate::db::DbConn;
use crate::locks::Lockable;

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = edgenotes)]
pub struct Edgenote {
    pub id: i64,
    pub case_id: i64,
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

impl Edgenote {
    pub fn of_case(conn: &mut DbConn, case_id: i64) -> QueryResult<Vec<Edgenote>> {
        edgenotes::table
            .filter(edgenotes::case_id.eq(case_id))
            .select(Edgenote::as_select())
            .order((edgenotes::slug.asc(), edgenotes::id.asc()))
            .load(conn)
    }

    pub fn slug_taken(conn: &mut DbConn, case_id: i64, slug: &str) -> QueryResult<bool> {
        diesel::select(diesel::dsl::exists(
            edgenotes::table
                .filter(edgenotes::case_id.eq(case_id))
                .filter(edgenotes::slug.eq(slug)),
        ))
        .get_result(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        case_id: i64,
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

    pub fn update(
        &self,
        conn: &mut DbConn,
        changes: &EdgenoteChanges,
        now: NaiveDateTime,
    ) -> QueryResult<Edgenote> {
        diesel::update(edgenotes::table.find(self.id))
            .set((
                changes,
                edgenotes::version.eq(self.version + 1),
                edgenotes::updated_at.eq(now),
            ))
            .returning(edgenotes::all_columns)
            .get_result::<Edgenote>(conn)
    }

    pub fn delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        diesel::delete(edgenotes::table.find(self.id))
            .execute(conn)
            .map(|_| ())
    }
}

impl Lockable for Edgenote {
    const TYPE: &'static str = "Edgenote";
    const TABLE: &'static str = "edgenotes";

    fn find(conn: &mut DbConn, id: i64) -> QueryResult<Option<Edgenote>> {
        edgenotes::table
            .find(id)
            .select(Edgenote::as_select())
            .get_result(conn)
            .optional()
    }

    fn find_for_update(conn: &mut DbConn, id: i64) -> QueryResult<Option<Edgenote>> {
        crate::select_for_update!(
            conn,
            edgenotes::table.find(id).select(Edgenote::as_select())
        )
    }

    fn id(&self) -> i64 {
        self.id
    }

    fn case_id(&self) -> i64 {
        self.case_id
    }

    fn version(&self) -> i64 {
        self.version
    }

    fn to_json(&self) -> Value {
        record_json(
            Self::TYPE,
            Self::TABLE,
            self.id,
            json!({
                "caseId": self.case_id,
                "slug": self.slug,
                "caption": self.caption,
                "content": self.content,
                "version": self.version,
                "createdAt": utc(self.created_at),
                "updatedAt": utc(self.updated_at),
            }),
        )
    }
}
