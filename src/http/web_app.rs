//! The reference web app (`web/`), built into `web/dist` and served at `/`.
//! Release builds embed the files in the binary, so `baton serve` shows the
//! app with no Node installed; debug builds read them from `web/dist` at run
//! time, so a rebuilt app is served without rebuilding baton.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse};
use rust_embed::RustEmbed;

use super::errors::no_route;
use crate::error::AppError;

#[derive(RustEmbed)]
#[folder = "web/dist"]
#[allow_missing = true]
struct Files;

const INDEX: &str = "index.html";

/// The app's pages load only their own files: no inline script, no other
/// origin, and no framing (clickjacking). Styles set from script (avatar
/// colours) go through the CSSOM, which `style-src` does not restrict.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; \
     form-action 'self'; frame-ancestors 'none'";

/// The default service: a file of the app; the app's page for a browser
/// navigation to a path that is not under an API route (the app routes on the
/// client); otherwise the JSON 404.
pub async fn app_or_not_found(req: HttpRequest) -> Result<HttpResponse, AppError> {
    if req.method() == Method::GET || req.method() == Method::HEAD {
        let path = req.path().trim_start_matches('/');
        let path = if path.is_empty() { INDEX } else { path };
        if let Some(response) = file(&req, path) {
            return Ok(response);
        }
        if is_navigation(&req) && !is_api_path(req.path()) {
            if let Some(response) = file(&req, INDEX) {
                return Ok(response);
            }
        }
    }
    no_route(req).await
}

/// One embedded file, with its type, a validator and how long to cache it:
/// Vite's `assets/` carry a content hash in their names, so they never
/// change; everything else (the page) is revalidated every time.
fn file(req: &HttpRequest, path: &str) -> Option<HttpResponse> {
    let file = Files::get(path)?;
    let etag = format!(
        "\"{}\"",
        file.metadata
            .sha256_hash()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::ETAG, etag));
    if let Ok(mime) = HeaderValue::from_str(file.metadata.mimetype()) {
        response.insert_header((header::CONTENT_TYPE, mime));
    }
    if file.metadata.mimetype().starts_with("text/html") {
        response
            .insert_header((header::CONTENT_SECURITY_POLICY, PAGE_POLICY))
            .insert_header((header::X_FRAME_OPTIONS, "DENY"));
    }
    Some(if fresh {
        response.finish()
    } else {
        response.body(file.data.into_owned())
    })
}

/// A browser loading a page (not `fetch`, not curl, not an API client).
fn is_navigation(req: &HttpRequest) -> bool {
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    };
    header("sec-fetch-mode") == "navigate" || header(header::ACCEPT.as_str()).contains("text/html")
}

/// Whether the path lies under one of the API's routes (by first segment),
/// where an unknown path keeps its JSON 404.
fn is_api_path(path: &str) -> bool {
    let first = |p: &str| {
        p.trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let segment = first(path);
    segment == "docs"
        || super::ROUTES
            .iter()
            .any(|(route, _)| first(route) == segment)
}
