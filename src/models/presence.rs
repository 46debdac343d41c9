//! One row per open edits channel (browser tab), so that every instance can
//! tell who is online in a case.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{presences, users};
use crate::db::DbConn;
use crate::models::UserRef;

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = presences)]
pub struct Presence {
    pub id: i64,
    pub session_id: String,
    pub user_id: i64,
    pub case_id: i64,
    pub instance_id: String,
    pub user_agent: Option<String>,
    pub connected_at: NaiveDateTime,
    pub last_seen_at: NaiveDateTime,
}

impl Presence {
    /// The live presences of a case with their users.
    pub fn of_case(
        conn: &mut DbConn,
        case_id: i64,
        seen_since: NaiveDateTime,
    ) -> QueryResult<Vec<(Presence, UserRef)>> {
        presences::table
            .inner_join(users::table)
            .filter(presences::case_id.eq(case_id))
            .filter(presences::last_seen_at.ge(seen_since))
            .select((Presence::as_select(), UserRef::as_select()))
            .order((users::name.asc(), presences::id.asc()))
            .load(conn)
    }
}
