//! Any string, never a 500: no string holding U+0000 reaches a handler.
//! PostgreSQL can store none (neither `text` nor `jsonb`), and SQLite would
//! store what PostgreSQL refuses, so both backends refuse it here alike,
//! before anything is read or stored: 422 `invalid` naming the field. One
//! check for what a request carries: its path, its query string and a JSON
//! body. (A header cannot hold a NUL byte: the HTTP parser refuses it.)
//!
//! `POST /auth/login` is left to its handler, which answers such a sign-in
//! as it answers any wrong credentials (401).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest};
use serde_json::Value;

use crate::error::AppError;

/// Where a handler answers a NUL itself.
const ANSWERED_BY_HANDLER: &str = "/auth/login";

/// Middleware: 422 for a request whose path, query or JSON body holds a
/// string with U+0000.
pub async fn refuse_nul(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if req.path() == ANSWERED_BY_HANDLER {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    if let Some(field) = nul_in_target(req.uri().path(), req.query_string()) {
        return Ok(req.error_response(nul_error(&field)).map_into_right_body());
    }
    let req = if is_json(&req) {
        match check_body(req).await {
            Ok(req) => req,
            Err(refused) => return Ok(refused.map_into_right_body()),
        }
    } else {
        req
    };
    Ok(next.call(req).await?.map_into_left_body())
}

/// The message every refusal gives.
fn nul_error(field: &str) -> AppError {
    AppError::invalid(format!(
        "{field} contains a NUL character (U+0000), which cannot be stored; remove it."
    ))
}

fn is_json(req: &ServiceRequest) -> bool {
    req.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"))
}

/// Reads the body (within the configured limit), refuses it if a string in
/// it holds U+0000, and hands it on unchanged.
async fn check_body(req: ServiceRequest) -> Result<ServiceRequest, ServiceResponse> {
    let (http, mut payload) = req.into_parts();
    let body = match web::Bytes::from_request(&http, &mut payload).await {
        Ok(body) => body,
        // Too large, or cut off: the framework's answer (413, 400).
        Err(e) => return Err(ServiceResponse::from_err(e, http)),
    };
    // Only a body that spells the escape can hold one (JSON has no raw
    // control characters in strings): most bodies are never parsed here.
    if memchr_escape(&body) {
        if let Ok(value) = serde_json::from_slice::<Value>(&body) {
            if let Some(field) = nul_in_json(&value, "") {
                return Err(ServiceResponse::from_err(nul_error(&field), http));
            }
        }
    }
    Ok(ServiceRequest::from_parts(http, Payload::from(body)))
}

/// Whether `\u0000` appears in the raw body.
fn memchr_escape(body: &[u8]) -> bool {
    body.windows(6).any(|w| w.eq_ignore_ascii_case(b"\\u0000"))
}

/// The first field (`card.content`, `locks[1].lockableParam`, a key's own
/// path) whose string holds U+0000.
fn nul_in_json(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(name_or_body(at)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_in_json(item, &format!("{at}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            if key.contains('\0') {
                Some(format!("A field name in {}", name_or_body(at)))
            } else {
                nul_in_json(item, &path)
            }
        }),
        _ => None,
    }
}

fn name_or_body(at: &str) -> String {
    if at.is_empty() {
        "the body".to_owned()
    } else {
        at.to_owned()
    }
}

/// The path or the query parameter that holds an encoded NUL (`%00`).
fn nul_in_target(path: &str, query: &str) -> Option<String> {
    let encoded_nul = |s: &str| {
        s.as_bytes()
            .windows(3)
            .any(|w| w.eq_ignore_ascii_case(b"%00"))
    };
    if encoded_nul(path) {
        return Some("The path".to_owned());
    }
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if encoded_nul(name) {
            Some("A query parameter's name".to_owned())
        } else if encoded_nul(value) {
            Some(format!("The query parameter {name}"))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_field_that_holds_a_nul() {
        let body = serde_json::json!({"card": {"content": "x\u{0}y", "title": "ok"}});
        assert_eq!(nul_in_json(&body, "").as_deref(), Some("card.content"));
        let list =
            serde_json::json!({"locks": [{"lockableParam": "1"}, {"lockableParam": "\u{0}"}]});
        assert_eq!(
            nul_in_json(&list, "").as_deref(),
            Some("locks[1].lockableParam")
        );
        assert_eq!(nul_in_json(&serde_json::json!({"a": "fine"}), ""), None);
        assert_eq!(
            nul_in_json(&serde_json::json!("\u{0}"), "").as_deref(),
            Some("the body")
        );
    }

    #[test]
    fn finds_an_encoded_nul_in_the_path_or_a_parameter() {
        assert_eq!(
            nul_in_target("/cases/a%00b", "").as_deref(),
            Some("The path")
        );
        assert_eq!(
            nul_in_target("/locks", "case=x%00").as_deref(),
            Some("The query parameter case")
        );
        assert_eq!(nul_in_target("/locks", "case=x%2500"), None);
        assert_eq!(nul_in_target("/locks", "case=sample"), None);
    }

    #[test]
    fn spots_the_escape_in_a_raw_body() {
        assert!(memchr_escape(br#"{"a":"x\u0000"}"#));
        assert!(!memchr_escape(br#"{"a":"x\u0001"}"#));
    }
}
