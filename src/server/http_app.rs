//! The HTTP app: its data, middleware, CORS and routes, on a listener.

use std::net::TcpListener;

use actix_cors::Cors;
use actix_web::dev::Server;
use actix_web::middleware::{from_fn, DefaultHeaders};
use actix_web::{http, web, App, HttpServer};

use crate::http::{errors, observe};
use crate::state::AppState;

use super::StartError;

/// The API and the web app on `listener`; it ignores signals (see
/// [`super::run`]).
pub(super) fn http_server(state: AppState, listener: TcpListener) -> Result<Server, StartError> {
    let settings = state.settings.clone();
    let data = web::Data::new(state);
    let workers = settings.workers;
    let shutdown_timeout = settings.shutdown_timeout.as_secs().max(1);
    let document = web::Data::new(crate::http::openapi::document());
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(document.clone())
            .app_data(errors::json_config(settings.body_limit))
            .app_data(web::PayloadConfig::new(settings.body_limit))
            .app_data(errors::path_config())
            .app_data(errors::query_config())
            .wrap(from_fn(crate::http::any_string::refuse_nul))
            .wrap(cors(&settings.cors_origins))
            .wrap(from_fn(errors::envelope_errors))
            .wrap(security_headers())
            .wrap(from_fn(observe::observe))
            .configure(crate::http::routes)
            .default_service(web::to(crate::http::web_app::app_or_not_found))
    })
    .disable_signals()
    // Frames and responses are written whole: sending each at once beats
    // Nagle's wait for the previous segment's ACK, which a tab that only
    // listens may hold back (delayed ACK) while the next frame is due.
    .tcp_nodelay(true)
    // Drop a finished connection at once instead of lingering (1 s by
    // default) for the client to close first: after a WebSocket close
    // handshake the tab's `onclose` waits for exactly this.
    .client_disconnect_timeout(std::time::Duration::ZERO)
    .shutdown_timeout(shutdown_timeout);
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    Ok(server.listen(listener)?.run())
}

fn cors(origins: &[String]) -> Cors {
    let cors = Cors::default()
        .allowed_methods(["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"])
        .allowed_headers([
            http::header::AUTHORIZATION,
            http::header::CONTENT_TYPE,
            http::header::IF_MATCH,
            http::header::HeaderName::from_static("x-session-id"),
            http::header::HeaderName::from_static("lock-token"),
            observe::REQUEST_ID_HEADER,
        ])
        .expose_headers([
            http::header::ETAG,
            http::header::RETRY_AFTER,
            observe::REQUEST_ID_HEADER,
        ])
        .max_age(3600);
    if origins.iter().any(|o| o == "*") {
        return cors.allow_any_origin();
    }
    origins
        .iter()
        .filter(|o| !o.is_empty())
        .fold(cors, |cors, origin| cors.allowed_origin(origin))
}

/// Headers every response carries unless its handler set its own: API
/// answers are never cached (the web app's files set their own caching and,
/// for pages, a Content-Security-Policy).
fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .add((http::header::REFERRER_POLICY, "no-referrer"))
        .add((http::header::CACHE_CONTROL, "no-store"))
}
