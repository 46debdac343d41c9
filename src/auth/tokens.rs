//! Issuing and ending login tokens. A token is a signed JWT naming a row of
//! `auth_tokens`; it authenticates only while that row is live (checked in
//! the same query that loads the caller, [`super::Caller::load`]), so ending
//! the row ends the token on every instance at once.

use chrono::NaiveDateTime;

use super::jwt::TokenClaims;
use super::JwtKeys;
use crate::clock;
use crate::db::DbConn;
use crate::error::AppResult;
use crate::models::{AuthToken, UserId};

/// Records a token for `user_id` and signs it. Run inside the write
/// transaction of a login.
pub fn issue(
    conn: &mut DbConn,
    jwt: &JwtKeys,
    user_id: UserId,
    now: NaiveDateTime,
) -> AppResult<String> {
    issue_lasting(conn, jwt, user_id, now, jwt.ttl())
}

/// Like [`issue`], for `ttl` instead of the configured lifetime (a team's
/// backend may ask for shorter). Returns the token.
pub fn issue_lasting(
    conn: &mut DbConn,
    jwt: &JwtKeys,
    user_id: UserId,
    now: NaiveDateTime,
    ttl: std::time::Duration,
) -> AppResult<String> {
    let expires_at = clock::after(now, ttl);
    let token_id = AuthToken::create(conn, user_id, now, expires_at)?;
    let claims = TokenClaims { user_id, token_id };
    Ok(jwt.sign(claims, expires_at.and_utc().timestamp())?)
}
