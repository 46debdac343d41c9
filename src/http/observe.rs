//! Middleware that makes every request observable: a request id (taken from
//! `X-Request-ID` or made, echoed back, and on every log line of the
//! request), one access-log line, and the request metrics by route pattern.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Query parameters whose values never reach a log (the channel's token).
const SECRET_PARAMS: [&str; 2] = ["token", "access_token"];

/// A request id a client or proxy may hand us: short and printable.
fn usable_request_id(value: &HeaderValue) -> Option<String> {
    let s = value.to_str().ok()?;
    let ok = (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=".contains(&b));
    ok.then(|| s.to_owned())
}

/// The path and query as logged: secret parameters' values replaced.
pub fn redacted_target(path: &str, query: &str) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if SECRET_PARAMS.contains(&name) => format!("{name}=[redacted]"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{path}?{}", query.join("&"))
}

pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let request_id = req
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(usable_request_id)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let method = req.method().to_string();
    let target = redacted_target(req.path(), req.query_string());
    let span = tracing::info_span!("request", request_id = %request_id);
    // Every database call of the request draws on one budget of
    // BATON_DB_TIMEOUT.
    let mut res = crate::db::with_request_budget(next.call(req))
        .instrument(span.clone())
        .await?;

    let elapsed = started.elapsed();
    // The route pattern, not the path: ids must not become metric labels.
    let route = res
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".to_owned());
    let status = res.status().as_u16();
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        res.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    span.in_scope(|| {
        tracing::info!(
            target: "baton::access",
            method = %method,
            route = %route,
            target = %target,
            status,
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            request_id = %request_id,
            "{method} {target} {status}"
        )
    });
    let status = status.to_string();
    metrics::counter!("baton_http_requests_total",
        "method" => method.clone(), "route" => route.clone(), "status" => status)
    .increment(1);
    metrics::histogram!("baton_http_request_duration_seconds",
        "method" => method, "route" => route)
    .record(elapsed.as_secs_f64());
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_redacted_from_logged_targets() {
        assert_eq!(
            redacted_target("/cases/x/edits", "token=abc.def&sessionId=s1"),
            "/cases/x/edits?token=[redacted]&sessionId=s1"
        );
        assert_eq!(redacted_target("/me", ""), "/me");
    }

    #[test]
    fn request_ids_from_clients_are_kept_only_when_printable() {
        let ok = HeaderValue::from_static("req-42.a:b");
        assert_eq!(usable_request_id(&ok).as_deref(), Some("req-42.a:b"));
        let spaces = HeaderValue::from_static("has spaces");
        assert_eq!(usable_request_id(&spaces), None);
    }
}
