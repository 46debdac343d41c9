//! Request extractors: the caller (token checked), the actor (user loaded),
//! the write preconditions (`If-Match`, `Lock-Token`), and the request
//! headers they come from.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::{HeaderMap, AUTHORIZATION, USER_AGENT};
use actix_web::{web, FromRequest, HttpRequest};

use crate::auth::api_keys::KeyHolder;
use crate::auth::{Actor, Caller};
use crate::error::AppError;
use crate::locks::engine::Preconditions;
use crate::models::LockId;
use crate::state::AppState;

pub const SESSION_HEADER: &str = "x-session-id";
pub const LOCK_TOKEN_HEADER: &str = "lock-token";

fn app_state(req: &HttpRequest) -> Result<&web::Data<AppState>, AppError> {
    req.app_data::<web::Data<AppState>>()
        .ok_or_else(|| AppError::Unavailable("server state missing".into()))
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
    let state = app_state(req)?;
    let headers = req.headers();
    // The token first: without a valid one the answer is 401, whatever else
    // the request says.
    let caller = Caller::verify(&state.jwt, bearer(headers), None, user_agent(headers))?;
    Ok(caller.in_session(session_header(headers)?))
}

impl FromRequest for KeyHolder {
    type Error = AppError;
    type Future = std::future::Ready<Result<KeyHolder, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(KeyHolder::from_bearer(bearer(req.headers())).map_err(AppError::from))
    }
}

/// `X-Session-ID`, when sent: a header that is present must match its
/// documented pattern (an empty or non-ASCII value is 400, not "no tab").
pub fn session_header(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    match headers.get(SESSION_HEADER) {
        None => Ok(None),
        Some(value) => valid_session_id(value.to_str().unwrap_or_default().trim()).map(Some),
    }
}

impl FromRequest for Actor {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Actor, AppError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let caller = caller_of(&req)?;
            let db = app_state(&req)?.db.clone();
            db.read(move |conn| caller.clone().load(conn)).await
        })
    }
}

/// The client's address for login throttling: the last entry of the
/// configured trusted proxy header, or else the connection's peer. (Never a
/// header nobody configured: clients could then pick their own address.)
pub fn client_address(req: &HttpRequest, trusted_header: Option<&str>) -> Option<IpAddr> {
    match trusted_header {
        Some(name) => header(req.headers(), name)
            .and_then(|v| v.rsplit(',').next())
            .and_then(|last| parse_address(last.trim())),
        None => req.peer_addr().map(|a| a.ip()),
    }
}

/// `203.0.113.7`, `203.0.113.7:4711`, `2001:db8::1` or `[2001:db8::1]:4711`.
fn parse_address(s: &str) -> Option<IpAddr> {
    s.parse::<IpAddr>()
        .ok()
        .or_else(|| s.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
}

/// 1 to 18 digits: an id or a version (never overflows an i64).
pub fn digits(s: &str) -> Option<i64> {
    let ok = (1..=18).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| s.parse().ok()).flatten()
}

/// Accepts `"3"`, `W/"3"` and `3`; `*` means no version check.
fn parse_if_match(value: &str) -> Result<Option<i64>, AppError> {
    if value == "*" {
        return Ok(None);
    }
    let v = value.strip_prefix("W/").unwrap_or(value);
    let v = v.strip_prefix('"').unwrap_or(v);
    let v = v.strip_suffix('"').unwrap_or(v);
    digits(v).map(Some).ok_or_else(|| {
        AppError::BadRequest(format!(
            "If-Match must be the record's version in quotes, like \"3\" (from its ETag); got {value}."
        ))
    })
}

/// Accepts `12`, `"12"` and `<12>`.
fn parse_lock_token(value: &str) -> Result<LockId, AppError> {
    let inner = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('<').and_then(|v| v.strip_suffix('>')))
        .unwrap_or(value);
    digits(inner).map(LockId).ok_or_else(|| {
        AppError::BadRequest(format!(
            "Lock-Token must be the id of your lock (its `token`), like 12; got {value}."
        ))
    })
}

/// The write preconditions as the OpenAPI document describes them; parsed by
/// [`preconditions`], which accepts exactly these forms.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct WriteHeaders {
    /// The version you last saw, from the record's `ETag` (`"3"`): the write
    /// is refused with 412 `stale_version` if the record has changed since.
    #[param(
        rename = "If-Match",
        nullable = false,
        pattern = r#"^(\*|(W/)?"?[0-9]{1,18}"?)$"#
    )]
    if_match: Option<String>,
    /// The token of the lock you hold on the record: the write is refused
    /// with 412 `lock_lost` if that lock has been overridden, expired or
    /// released, even when nobody holds the record now.
    #[param(
        rename = "Lock-Token",
        nullable = false,
        pattern = r#"^([0-9]{1,18}|"[0-9]{1,18}"|<[0-9]{1,18}>)$"#
    )]
    lock_token: Option<String>,
}

/// `If-Match` and `Lock-Token`, parsed.
pub fn preconditions(headers: &HeaderMap) -> Result<Preconditions, AppError> {
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

impl FromRequest for Preconditions {
    type Error = AppError;
    type Future = std::future::Ready<Result<Preconditions, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(preconditions(req.headers()))
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
        assert!(parse_if_match("+5").is_err());
        assert!(parse_if_match(&"9".repeat(19)).is_err());
    }

    #[test]
    fn client_addresses_from_a_proxy_header() {
        let req = actix_web::test::TestRequest::default()
            .insert_header(("X-Forwarded-For", "198.51.100.1, 203.0.113.7"))
            .peer_addr("127.0.0.1:5000".parse().unwrap())
            .to_http_request();
        let last: IpAddr = "203.0.113.7".parse().unwrap();
        assert_eq!(client_address(&req, Some("x-forwarded-for")), Some(last));
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(client_address(&req, None), Some(peer));
        assert_eq!(
            parse_address("[2001:db8::1]:80"),
            "2001:db8::1".parse().ok()
        );
        assert_eq!(client_address(&req, Some("x-real-ip")), None);
    }

    #[test]
    fn lock_token_and_session_forms() {
        assert_eq!(parse_lock_token("<12>").unwrap(), LockId(12));
        assert_eq!(parse_lock_token("12").unwrap(), LockId(12));
        assert!(parse_lock_token("twelve").is_err());
        assert!(parse_lock_token("\"12").is_err());
        assert!(valid_session_id("6f1c-2a_b").is_ok());
        assert!(valid_session_id("bad id").is_err());
        assert!(valid_session_id(&"x".repeat(65)).is_err());
    }

    #[test]
    fn a_session_header_that_is_sent_must_be_valid() {
        let mut headers = HeaderMap::new();
        assert_eq!(session_header(&headers).unwrap(), None);
        let mut with = |value: &[u8]| {
            let value = actix_web::http::header::HeaderValue::from_bytes(value).unwrap();
            headers.insert(
                actix_web::http::header::HeaderName::from_static(SESSION_HEADER),
                value,
            );
            session_header(&headers)
        };
        assert_eq!(with(b"tab-1").unwrap().as_deref(), Some("tab-1"));
        assert!(with(b"").is_err(), "empty");
        assert!(with(b"\xe9t\xe9").is_err(), "not ASCII");
        assert!(with(b"a b").is_err(), "a space");
    }
}
