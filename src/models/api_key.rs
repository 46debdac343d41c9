//! API keys: a team's own backend calls baton with one (to mint tokens for
//! its users). Only the key's hash is stored; see `crate::auth::api_keys`.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::api_keys;
use crate::db::DbConn;

/// A live key as `baton key list` shows it: never the key itself.
#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = api_keys)]
pub struct ApiKey {
    pub id: i64,
    pub name: String,
    pub created_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
}

impl ApiKey {
    /// Stores a new key by its hash; `None` when a live key has that name.
    pub fn create(
        conn: &mut DbConn,
        name: &str,
        key_hash: &str,
        now: NaiveDateTime,
    ) -> QueryResult<Option<ApiKey>> {
        if ApiKey::live_named(conn, name)?.is_some() {
            return Ok(None);
        }
        let insert = diesel::insert_into(api_keys::table)
            .values((
                api_keys::name.eq(name),
                api_keys::key_hash.eq(key_hash),
                api_keys::created_at.eq(now),
            ))
            .returning((
                api_keys::id,
                api_keys::name,
                api_keys::created_at,
                api_keys::last_used_at,
            ));
        crate::on_backend!(conn, |c| insert.get_result::<ApiKey>(c)).map(Some)
    }

    /// The live key of that name.
    pub fn live_named(conn: &mut DbConn, name: &str) -> QueryResult<Option<ApiKey>> {
        api_keys::table
            .filter(api_keys::name.eq(name))
            .filter(api_keys::revoked_at.is_null())
            .select(ApiKey::as_select())
            .get_result(conn)
            .optional()
    }

    /// The live key with this hash: its id, stored hash and last use.
    pub fn live_by_hash(
        conn: &mut DbConn,
        key_hash: &str,
    ) -> QueryResult<Option<(i64, String, Option<NaiveDateTime>)>> {
        api_keys::table
            .filter(api_keys::key_hash.eq(key_hash))
            .filter(api_keys::revoked_at.is_null())
            .select((api_keys::id, api_keys::key_hash, api_keys::last_used_at))
            .get_result(conn)
            .optional()
    }

    /// Records that key `id` was used at `now`.
    pub fn used(conn: &mut DbConn, id: i64, now: NaiveDateTime) -> QueryResult<()> {
        diesel::update(api_keys::table.find(id))
            .set(api_keys::last_used_at.eq(now))
            .execute(conn)
            .map(|_| ())
    }

    /// Every live key, oldest first.
    pub fn live(conn: &mut DbConn) -> QueryResult<Vec<ApiKey>> {
        api_keys::table
            .filter(api_keys::revoked_at.is_null())
            .order(api_keys::id.asc())
            .select(ApiKey::as_select())
            .load(conn)
    }

    /// Ends the live key of that name at once; false if there is none.
    pub fn revoke(conn: &mut DbConn, name: &str, now: NaiveDateTime) -> QueryResult<bool> {
        diesel::update(
            api_keys::table
                .filter(api_keys::name.eq(name))
                .filter(api_keys::revoked_at.is_null()),
        )
        .set(api_keys::revoked_at.eq(now))
        .execute(conn)
        .map(|n| n > 0)
    }
}
