//! Request extractors: the authenticated actor (user + browser tab) and the
//! write preconditions (`If-Match`, `Lock-Token`).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::{HeaderMap, AUTHORIZATION, USER_AGENT};
use actix_web::{web, FromRequest, HttpRequest};

use super::AuthError;
use crate::db::DbConn;
use crate::error::AppError;
use crate::models::User;
use crate::state::AppState;

pub const SESSION_HEADER: &str = "x-session-id";
pub const LOCK_TOKEN_HEADER: &str = "lock-token";

/// Who is making the request: the signed-in user and, when the browser tab
/// sent `X-Session-ID`, which tab.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user: User,
    pub session_id: Option<String>,
    pub user_agent: Option<String>,
}

impl Actor {
    /// Resolves a bearer token (header or, for WebSockets, query) to an actor.
    pub async fn from_token(
        state: &AppState,
        token: Option<&str>,
        session_id: Option<String>,
        user_agent: Option<String>,
    ) -> Result<Actor, AppError> {
        let caller = Caller::verify(state, token, session_id, user_agent)?;
        state.db.read(move |conn| caller.load(conn)).await
    }
}

/// A caller whose token checked out but whose user is not loaded yet. The
/// lock and record write routes take this and [`Caller::load`] the user in
/// their own transaction: one pooled connection and one trip to a database
/// thread per request instead of two.
#[derive(Clone, Debug)]
pub struct Caller {
    user_id: i64,
    session_id: Option<String>,
    user_agent: Option<String>,
}

impl Caller {
    /// Checks the bearer token's signature and expiry (no database).
    pub fn verify(
        state: &AppState,
        token: Option<&str>,
        session_id: Option<String>,
        user_agent: Option<String>,
    ) -> Result<Caller, AppError> {
        let token = token
            .filter(|t| !t.is_empty())
            .ok_or(AuthError::MissingToken)?;
        Ok(Caller {
            user_id: state.jwt.verify(token)?,
            session_id,
            user_agent,
        })
    }

    /// The actor, or 401 when the token's user no longer exists.
    pub fn load(self, conn: &mut DbConn) -> Result<Actor, AppError> {
        let user = User::find(conn, self.user_id)?.ok_or(AuthError::UnknownUser)?;
        Ok(Actor {
            user,
            session_id: self.session_id,
            user_agent: self.user_agent,
        })
    }

    /// The tab (browser session) the request came from, if it said.
    pub fn session_id(&self) -> Option<&String> {
        self.session_id.as_ref()
    }
}

/// A session id is whatever opaque id the tab made (a UUID, usually).
pub fn valid_session_id(s: &str) -> Result<String, AppError> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(s.to_owned())
    } else {
        Err(AppError::BadRequest(
            "X-Session-ID must be 1 to 64 letters, digits, '-' or '_' (a UUID is ideal).".into(),
        ))
    }
}

fn header(headers: &HeaderMap, name: impl actix_web::http::header::AsHeaderName) -> Option<&str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = header(headers, AUTHORIZATION)?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub fn user_agent(headers: &HeaderMap) -> Option<String> {
    header(headers, USER_AGENT).map(|ua| ua.chars().take(255).collect())
}

impl FromRequest for Caller {
    type Error = AppError;
    type Future = std::future::Ready<Result<Caller, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(caller_of(req))
    }
}

fn caller_of(req: &HttpRequest) -> Result<Caller, AppError> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| AppError::Unavailable("server state missing".into()))?;
    let headers = req.headers();
    let session_id = header(headers, SESSION_HEADER)
        .filter(|s| !s.is_empty())
        .map(valid_session_id)
        .transpose()?;
    Caller::verify(state, bearer(headers), session_id, user_agent(headers))
}

impl FromRequest for Actor {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Actor, AppError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let caller = caller_of(&req)?;
            let state = req
                .app_data::<web::Data<AppState>>()
                .ok_or_else(|| AppError::Unavailable("server state missing".into()))?
                .clone();
            state.db.read(move |conn| caller.load(conn)).await
        })
    }
}

/// What a write asks to be true before it happens.
#[derive(Clone, Copy, Debug, Default)]
pub struct Preconditions {
    /// `If-Match: "<version>"`.
    pub if_match: Option<i64>,
    /// `Lock-Token: <lock id>`.
    pub lock_token: Option<i64>,
}

/// Accepts `"3"`, `W/"3"` and `3`; `*` means no version check.
fn parse_if_match(value: &str) -> Result<Option<i64>, AppError> {
    if value == "*" {
        return Ok(None);
    }
    let v = value.strip_prefix("W/").unwrap_or(value).trim_matches('"');
    v.parse().map(Some).map_err(|_| {
        AppError::BadRequest(format!(
            "If-Match must be the record's version in quotes, like \"3\" (from its ETag); got {value}."
        ))
    })
}

/// Accepts `12`, `"12"` and `<12>`.
fn parse_lock_token(value: &str) -> Result<i64, AppError> {
    value
        .trim_matches(|c| c == '"' || c == '<' || c == '>')
        .parse()
        .map_err(|_| {
            AppError::BadRequest(format!(
                "Lock-Token must be the id of your lock (its `token`), like 12; got {value}."
            ))
        })
}

impl Preconditions {
    pub fn from_headers(headers: &HeaderMap) -> Result<Preconditions, AppError> {
        Ok(Preconditions {
            if_match: match header(headers, actix_web::http::header::IF_MATCH) {
                Some(v) => parse_if_match(v)?,
                None => None,
            },
            lock_token: header(headers, LOCK_TOKEN_HEADER)
                .map(parse_lock_token)
                .transpose()?,
        })
    }
}

impl FromRequest for Preconditions {
    type Error = AppError;
    type Future = std::future::Ready<Result<Preconditions, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Preconditions::from_headers(req.headers()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_forms() {
        assert_eq!(parse_if_match("\"3\"").unwrap(), Some(3));
        assert_eq!(parse_if_match("W/\"4\"").unwrap(), Some(4));
        assert_eq!(parse_if_match("5").unwrap(), Some(5));
        assert_eq!(parse_if_match("*").unwrap(), None);
        assert!(parse_if_match("\"abc\"").is_err());
    }

    #[test]
    fn lock_token_and_session_forms() {
        assert_eq!(parse_lock_token("<12>").unwrap(), 12);
        assert_eq!(parse_lock_token("12").unwrap(), 12);
        assert!(parse_lock_token("twelve").is_err());
        assert!(valid_session_id("6f1c-2a_b").is_ok());
        assert!(valid_session_id("bad id").is_err());
        assert!(valid_session_id(&"x".repeat(65)).is_err());
    }
}
