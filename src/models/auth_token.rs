//! Login tokens: one row per token that a login (or `baton token`) issued.
//! The JWT names its row; the row is what logout, a password change or a
//! removed user revokes, on every instance at once.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::auth_tokens;
use crate::db::DbConn;
use crate::models::UserId;

pub struct AuthToken;

impl AuthToken {
    /// Records a new token of `user_id`; returns its id (the JWT's `jti`).
    pub fn create(
        conn: &mut DbConn,
        user_id: UserId,
        now: NaiveDateTime,
        expires_at: NaiveDateTime,
    ) -> QueryResult<i64> {
        diesel::insert_into(auth_tokens::table)
            .values((
                auth_tokens::user_id.eq(user_id),
                auth_tokens::created_at.eq(now),
                auth_tokens::expires_at.eq(expires_at),
            ))
            .returning(auth_tokens::id)
            .get_result(conn)
    }

    /// Ends one token; false if it had ended already.
    pub fn revoke(conn: &mut DbConn, id: i64, now: NaiveDateTime) -> QueryResult<bool> {
        diesel::update(
            auth_tokens::table
                .find(id)
                .filter(auth_tokens::revoked_at.is_null()),
        )
        .set(auth_tokens::revoked_at.eq(now))
        .execute(conn)
        .map(|n| n > 0)
    }

    /// Ends every token of the user but `keep` (the caller's own, when a
    /// user changes their own password).
    pub fn revoke_all_of_user(
        conn: &mut DbConn,
        user_id: UserId,
        keep: Option<i64>,
        now: NaiveDateTime,
    ) -> QueryResult<usize> {
        diesel::update(
            auth_tokens::table
                .filter(auth_tokens::user_id.eq(user_id))
                .filter(auth_tokens::id.ne(keep.unwrap_or(0)))
                .filter(auth_tokens::revoked_at.is_null()),
        )
        .set(auth_tokens::revoked_at.eq(now))
        .execute(conn)
    }

    /// Deletes rows whose token has expired: its JWT no longer verifies, so
    /// the row has nothing left to say.
    pub fn prune_expired(conn: &mut DbConn, now: NaiveDateTime) -> QueryResult<usize> {
        diesel::delete(auth_tokens::table.filter(auth_tokens::expires_at.lt(now))).execute(conn)
    }
}
