//! `GET /metrics` in the Prometheus text format, served on its own address
//! (`BATON_METRICS_BIND`), never on the public one. Counters and histograms
//! are recorded where things happen (requests in `observe`, lock events
//! after commit, tabs in the hub, the bus, the reaper); the gauges read from
//! the database and the pool are taken at scrape time.

use std::sync::Mutex;
use std::time::Duration;

use actix_web::{web, HttpResponse};
use metrics::{describe_counter, describe_gauge, describe_histogram, gauge, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::db::{Database, DbError};
use crate::models::{Lock, Waiter};

/// Latency buckets, in seconds: from a fast lock request to a slow one.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The process's Prometheus recorder, installed the first time it is asked
/// for (a process has one global recorder; until then every metric is a no-op).
pub fn prometheus() -> Result<PrometheusHandle, String> {
    static HANDLE: Mutex<Option<PrometheusHandle>> = Mutex::new(None);
    let mut installed = HANDLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(handle) = installed.as_ref() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets(&BUCKETS)
        .and_then(|b| b.install_recorder())
        .map_err(|e| format!("cannot start the metrics recorder: {e}"))?;
    describe();
    // Histograms are kept in blocks that upkeep folds together.
    let upkeep = handle.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(5));
        upkeep.run_upkeep();
    });
    *installed = Some(handle.clone());
    Ok(handle)
}

fn describe() {
    describe_counter!(
        "baton_http_requests_total",
        "HTTP requests by method, route pattern and status"
    );
    describe_histogram!(
        "baton_http_request_duration_seconds",
        Unit::Seconds,
        "HTTP request latency by method and route pattern"
    );
    describe_gauge!("baton_locks_held", "Locks held now (all instances)");
    describe_counter!(
        "baton_lock_events_total",
        "Lock events by action (acquired, released, overridden, expired, idle, disconnected, kicked, queued, handed_off), counted after commit"
    );
    describe_gauge!(
        "baton_waiters",
        "Tabs waiting in line for a locked record now (all instances)"
    );
    describe_counter!(
        "baton_handoffs_total",
        "Records handed to the next waiter in line, by why the old lock ended (released, overridden for a break, expired, idle, disconnected, kicked)"
    );
    describe_histogram!(
        "baton_wait_seconds",
        Unit::Seconds,
        "From joining a waiting line to being handed the record"
    );
    describe_counter!(
        "baton_write_retries_total",
        "Write transactions PostgreSQL aborted as a deadlock victim or serialization failure and baton ran again"
    );
    describe_counter!(
        "baton_lock_fast_path_total",
        "Lock acquires, releases and card saves by whether the one-statement fast path took them (taken) or left them to the general path (declined); PostgreSQL only"
    );
    describe_histogram!(
        "baton_sqlite_write_group_size",
        "SQLite: requests carried by each write transaction (group commit)"
    );
    describe_counter!(
        "baton_takeovers_refused_total",
        "Takeovers and breaks refused because the holder outranks the caller"
    );
    describe_gauge!("baton_open_tabs", "Open edits channels on this instance");
    describe_histogram!(
        "baton_fanout_delay_seconds",
        Unit::Seconds,
        "From a write's commit to its frames reaching this instance's tabs (PostgreSQL bus)"
    );
    describe_counter!(
        "baton_frames_dropped_total",
        "Frames a slow tab missed; it was told to resync"
    );
    describe_counter!(
        "baton_bus_reconnects_total",
        "Reconnects of the PostgreSQL event listener"
    );
    describe_counter!(
        "baton_db_timeouts_total",
        "Database calls given up after BATON_DB_TIMEOUT (answered 503), by outcome: not_applied (nothing changed) or unknown (a commit was in flight)"
    );
    describe_gauge!(
        "baton_db_pool_connections",
        "Pooled database connections by state (in_use, idle)"
    );
    describe_gauge!(
        "baton_db_pool_waiting",
        "Requests waiting for a pooled connection"
    );
    describe_histogram!(
        "baton_reaper_lag_seconds",
        Unit::Seconds,
        "How long after falling due an expired or idle lock was ended"
    );
    describe_counter!(
        "baton_logins_total",
        "Sign-ins by outcome (ok, bad_credentials, throttled)"
    );
}

/// What the scrape handler reads.
pub struct MetricsSource {
    handle: PrometheusHandle,
    db: Database,
}

impl MetricsSource {
    pub fn new(handle: PrometheusHandle, db: Database) -> MetricsSource {
        MetricsSource { handle, db }
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics));
}

async fn metrics(source: web::Data<MetricsSource>) -> HttpResponse {
    let pool = source.db.pool_stats();
    gauge!("baton_db_pool_connections", "state" => "in_use").set(f64::from(pool.in_use));
    gauge!("baton_db_pool_connections", "state" => "idle").set(f64::from(pool.idle));
    gauge!("baton_db_pool_waiting").set(pool.waiting as f64);
    match source
        .db
        .read(|conn| Ok::<_, DbError>((Lock::count(conn)?, Waiter::count(conn)?)))
        .await
    {
        Ok((held, waiting)) => {
            gauge!("baton_locks_held").set(held as f64);
            gauge!("baton_waiters").set(waiting as f64);
        }
        Err(e) => tracing::warn!(error = %e, "metrics: cannot count locks and waiters"),
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(source.handle.render())
}
