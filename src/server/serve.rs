//! Serving: the servers and tasks started, and shut down on a signal.

use std::net::TcpListener;

use actix_web::dev::Server;

use crate::state::AppState;

use super::background::spawn_background_tasks;
use super::http_app::http_server;
use super::metrics::metrics_server;
use super::StartError;

/// Starts serving on `listener`, the metrics listener when
/// `BATON_METRICS_BIND` is set, and the background tasks, on the current
/// runtime. The returned server must be awaited (or spawned) to run; it
/// ignores signals (see [`run`]).
pub fn start(state: AppState, listener: TcpListener) -> Result<Server, StartError> {
    if let Some(addr) = state.settings.metrics_bind.clone() {
        let metrics = metrics_server(&state, &addr)?;
        actix_web::rt::spawn(metrics);
    }
    spawn_background_tasks(&state)?;
    http_server(state, listener)
}

/// Serves until SIGTERM (or Ctrl-C), then shuts down gracefully:
/// 1. stops accepting connections;
/// 2. tells every open tab to close with 1012 "service restart", so it
///    reconnects — to another instance behind the load balancer — within
///    the disconnect grace; its locks are left to that grace, not released;
/// 3. waits for in-flight requests, at most `BATON_SHUTDOWN_TIMEOUT`.
pub async fn run(state: AppState, listener: TcpListener) -> Result<(), StartError> {
    let hub = state.realtime.hub.clone();
    let timeout = state.settings.shutdown_timeout;
    let server = start(state, listener)?;
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        shutdown_signal().await;
        tracing::info!(
            "shutting down: no new connections, tabs told to reconnect (1012), \
             in-flight requests get up to {}",
            humantime::format_duration(timeout)
        );
        handle.pause().await;
        hub.restart_all();
        // Each tab closes, then records leaving (its locks' grace starts);
        // the worker that runs it must outlive that.
        let deadline = tokio::time::Instant::now() + timeout;
        while hub.open_tabs() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        handle.stop(true).await;
    });
    Ok(server.await?)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
