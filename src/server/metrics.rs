//! The metrics server: `GET /metrics` apart from the API.

use actix_web::dev::Server;
use actix_web::{web, App, HttpServer};

use crate::http::metrics::MetricsSource;
use crate::state::AppState;

use super::StartError;

/// `GET /metrics` on its own address, one worker.
pub(super) fn metrics_server(state: &AppState, addr: &str) -> Result<Server, StartError> {
    let handle = crate::http::metrics::prometheus().map_err(StartError::Config)?;
    let source = web::Data::new(MetricsSource::new(handle, state.db.clone()));
    let bind = |source| StartError::Bind {
        addr: addr.to_owned(),
        source,
    };
    let server = HttpServer::new(move || {
        App::new()
            .app_data(source.clone())
            .configure(crate::http::metrics::routes)
    })
    .workers(1)
    .disable_signals()
    .bind(addr)
    .map_err(bind)?
    .run();
    tracing::info!("metrics on http://{addr}/metrics");
    Ok(server)
}
