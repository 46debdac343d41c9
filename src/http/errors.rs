//! Turns the framework's own errors (bad JSON, bad paths, unknown routes,
//! oversized bodies) into baton's JSON envelope.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{InternalError, JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::error::AppError;
use crate::views::{ErrorBody, ErrorCode};

pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .error_handler(move |err, _req| json_error(err, limit).into())
}

fn json_error(err: JsonPayloadError, limit: usize) -> AppError {
    match err {
        JsonPayloadError::OverflowKnownLength { .. } | JsonPayloadError::Overflow { .. } => {
            AppError::PayloadTooLarge(format!(
                "The request body is larger than the limit of {limit} bytes."
            ))
        }
        JsonPayloadError::ContentType => AppError::UnsupportedMediaType(
            "Send the body as JSON with `Content-Type: application/json`.".into(),
        ),
        JsonPayloadError::Deserialize(e) if e.is_data() => {
            AppError::invalid(format!("Invalid fields: {e}."))
        }
        JsonPayloadError::Deserialize(e) => {
            AppError::BadRequest(format!("The body is not valid JSON: {e}."))
        }
        other => AppError::BadRequest(format!("Could not read the request body: {other}.")),
    }
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|err: PathError, req: &HttpRequest| {
        AppError::not_found(format!("Nothing at {} ({err}).", req.path())).into()
    })
}

pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err: QueryPayloadError, _req| {
        AppError::invalid(format!("Invalid query parameters: {err}.")).into()
    })
}

/// A route that exists, asked with a method it does not serve: 405 with
/// `Allow` listing the ones it does.
pub async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    let pattern = req.match_pattern().unwrap_or_default();
    let allowed = super::allowed_methods(&pattern);
    let (status, body) = AppError::MethodNotAllowed(format!(
        "{} is not supported on {}; use {}.",
        req.method(),
        req.path(),
        allowed.join(" or ")
    ))
    .to_response_parts();
    HttpResponse::build(status)
        .insert_header((header::ALLOW, allowed.join(", ")))
        .json(body)
}

/// The default service: an unknown route.
pub async fn no_route(req: HttpRequest) -> Result<HttpResponse, AppError> {
    Err(AppError::not_found(format!(
        "There is no route {} {}.",
        req.method(),
        req.path()
    )))
}

/// Middleware: wraps any error response that is not already JSON (405 from a
/// resource, CORS refusals, …) in the envelope, so clients never see HTML or
/// plain text.
pub async fn envelope_errors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    match next.call(req).await {
        Ok(res) if !needs_envelope(res.response()) => Ok(res.map_into_left_body()),
        Ok(res) => {
            let (request, response) = res.into_parts();
            let enveloped = envelope_response(Some(&request), response.status(), None);
            Ok(ServiceResponse::new(request, enveloped).map_into_right_body())
        }
        // Errors raised by middleware (CORS) rather than by a handler.
        Err(err) => {
            let status = err.as_response_error().status_code();
            let message = err.to_string();
            let enveloped = envelope_response(None, status, Some(message.clone()));
            Err(InternalError::from_response(message, enveloped).into())
        }
    }
}

fn needs_envelope<B>(res: &HttpResponse<B>) -> bool {
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    (res.status().is_client_error() || res.status().is_server_error()) && !is_json
}

fn envelope_response(
    req: Option<&HttpRequest>,
    status: StatusCode,
    message: Option<String>,
) -> HttpResponse {
    let (method, path) = req.map_or(("", ""), |r| (r.method().as_str(), r.path()));
    let (code, fallback) = match status.as_u16() {
        400 => (
            ErrorCode::BadRequest,
            "The request could not be understood.".to_string(),
        ),
        401 => (ErrorCode::Unauthorized, "Sign in first.".to_string()),
        403 => (ErrorCode::Forbidden, "You may not do this.".to_string()),
        404 => (ErrorCode::NotFound, format!("There is nothing at {path}.")),
        405 => (
            ErrorCode::MethodNotAllowed,
            format!("{method} is not supported on {path}."),
        ),
        413 => (
            ErrorCode::PayloadTooLarge,
            "The request body is too large.".to_string(),
        ),
        _ if status.is_server_error() => (
            ErrorCode::Internal,
            "Something went wrong on the server; it has been logged.".to_string(),
        ),
        _ => (
            ErrorCode::BadRequest,
            status.canonical_reason().unwrap_or("Error").to_string(),
        ),
    };
    let message = message
        .filter(|m| !m.is_empty() && !status.is_server_error())
        .unwrap_or(fallback);
    HttpResponse::build(status).json(ErrorBody::new(code, message))
}
