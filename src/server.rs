//! Putting it together: state from settings, the actix app, background tasks.

use std::net::TcpListener;
use std::sync::Arc;

use actix_cors::Cors;
use actix_web::dev::Server;
use actix_web::middleware::{from_fn, DefaultHeaders};
use actix_web::{http, web, App, HttpServer};

use crate::auth::password::PasswordPool;
use crate::auth::throttle::{LoginThrottle, ThrottleLimits};
use crate::auth::{AuthError, JwtKeys};
use crate::config::Settings;
use crate::db::EventBus;
use crate::db::{Backend, Database, DbError};
use crate::http::metrics::MetricsSource;
use crate::http::{errors, observe};
use crate::locks::engine::retention::AuditRetention;
use crate::locks::engine::{self, Engine};
use crate::locks::LockPolicy;
use crate::realtime::hub::{Hub, LocalBus};
use crate::realtime::pg_bus::{self, PgBus};
use crate::realtime::{heartbeat, presence, ChannelTiming, Realtime};
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(String),
    /// A setting that cannot be right, named in the message (exit status 2).
    #[error("{0}")]
    Setting(String),
    /// A schema file that cannot be right (exit status 2).
    #[error(transparent)]
    Schema(#[from] crate::schema::SchemaError),
    /// A schema that does not fit the stored records (exit status 3).
    #[error("{0}")]
    SchemaMismatch(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The schema in force: the file named by `--schema`, else the casebook.
pub fn load_schema(
    database: &crate::config::DatabaseSettings,
) -> Result<crate::schema::Schema, StartError> {
    Ok(match &database.schema {
        Some(path) => crate::schema::Schema::load(path)?,
        None => crate::schema::Schema::casebook(),
    })
}

/// Before serving: the schema is made the one in force, the database
/// migrated and compared with it (a schema that does not fit the stored
/// records is refused, naming each type, field and count), and what the
/// declared types need in the database made: unique indexes, and the fast
/// save on PostgreSQL.
fn prepare_database(
    url: &str,
    database: &crate::config::DatabaseSettings,
) -> Result<(), StartError> {
    let schema = crate::schema::install(load_schema(database)?).map_err(StartError::Config)?;
    let mut conn = crate::db::connect(url).map_err(DbError::from)?;
    crate::db::migrate(&mut conn)?;
    let comparison =
        crate::models::stored_types::compare(&mut conn, schema).map_err(DbError::from)?;
    if !comparison.fits() {
        return Err(StartError::SchemaMismatch(mismatch_message(
            database.schema.as_deref(),
            url,
            &comparison,
        )));
    }
    crate::models::stored_types::apply_unique_indexes(&mut conn, schema).map_err(DbError::from)?;
    // Before the first lock is granted: every token of this run is greater
    // than every token of the runs before, even those a power cut took back.
    crate::models::Lock::begin_token_run(&mut conn).map_err(DbError::from)?;
    if let crate::db::DbConn::Postgresql(pg) = &mut conn {
        engine::install_fast_save(pg).map_err(DbError::from)?;
    }
    Ok(())
}

/// What `serve` and `baton schema check` say when a schema does not fit.
pub fn mismatch_message(
    file: Option<&std::path::Path>,
    database_url: &str,
    comparison: &crate::models::stored_types::Comparison,
) -> String {
    let file = file.map_or_else(
        || "the built-in schema".to_owned(),
        |p| p.display().to_string(),
    );
    let mut message = format!("{file} does not fit the records in the database:");
    for problem in &comparison.problems {
        message.push_str(&format!("\n  - {problem}"));
    }
    if !comparison.commands.is_empty() {
        message.push_str(
            "\nNothing was changed. To delete what no longer fits (this cannot be undone):",
        );
        let database = shown_url(database_url);
        for command in &comparison.commands {
            message.push_str(&format!("\n  {command} --database-url {database}"));
        }
    }
    message
}

/// A database URL as a command line may show it: a password left out, and
/// quoted for a shell where it needs to be.
fn shown_url(url: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/:@._-=%+,".contains(c);
    let shown = without_password(url);
    if shown.chars().all(plain) {
        shown
    } else {
        format!("'{}'", shown.replace('\'', "'\\''"))
    }
}

fn without_password(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(at)) if rest.contains(':') => {
            let credentials = &url[scheme.len() + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:PASSWORD{}", &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// SQLite serves one instance: a second `baton serve` on the same file would
/// keep its own tabs and locks' channel state apart from the first. Holding
/// an exclusive lock on a file beside the database makes it refuse to start.
fn lock_sqlite_file(url: &str) -> Result<std::fs::File, StartError> {
    let path = format!("{}.instance-lock", crate::db::sqlite_path(url));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StartError::Config(format!("cannot open {path}: {e}")))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StartError::Config(format!(
            "another baton is already serving {}; SQLite supports one instance \
             (use PostgreSQL, DATABASE_URL=postgres://…, to run several)",
            crate::db::sqlite_path(url)
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(StartError::Config(format!("cannot lock {path}: {e}")))
        }
    }
}

/// Descriptors kept back from the tabs: the listeners, the event listener,
/// logs, the SQLite files and whatever else a request opens. The database
/// pool's connections are added to it.
const RESERVED_FILES: u64 = 64;

/// The open-file limit `baton serve` runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit in force now.
    pub limit: u64,
    /// The soft limit the process was started with.
    pub started_with: u64,
    /// Open tabs that fit: one socket each, after the reserve.
    pub tabs: u64,
}

/// Raises the soft open-file limit to the hard one. Every open tab is a
/// socket, and the usual soft limit (1,024) would cap an instance at about a
/// thousand tabs; the hard limit is what the administrator allows.
#[cfg(unix)]
pub fn raise_open_file_limit(pool_size: u32) -> std::io::Result<OpenFiles> {
    use rlimit::Resource;
    let (started_with, hard) = Resource::NOFILE.get()?;
    if started_with < hard {
        Resource::NOFILE.set(hard, hard)?;
    }
    let limit = Resource::NOFILE.get()?.0;
    let reserve = RESERVED_FILES + u64::from(pool_size);
    Ok(OpenFiles {
        limit,
        started_with,
        tabs: limit.saturating_sub(reserve),
    })
}

/// Opens (and migrates) the database and checks that tokens can be signed.
pub fn build_state(settings: Settings, jwt_secret: &[u8]) -> Result<AppState, StartError> {
    crate::auth::check_secret(jwt_secret).map_err(|e| StartError::Setting(e.to_string()))?;
    let jwt = JwtKeys::new(jwt_secret, settings.token_ttl);
    jwt.self_check()?;
    let url = &settings.database.database_url;
    let instance_lock = match Backend::of_url(url) {
        Backend::Sqlite => Some(Arc::new(lock_sqlite_file(url)?)),
        Backend::Postgres => None,
    };
    if Backend::of_url(url) == Backend::Postgres {
        pg_bus::check_listener_url(url).map_err(StartError::Config)?;
    }
    // Refused before anything is changed: the directory is made here, the
    // backups taken once serving.
    crate::backup::Schedule::from_settings(&settings).map_err(StartError::Setting)?;
    prepare_database(url, &settings.database)?;
    let hub = Arc::new(Hub::default());
    // On PostgreSQL every instance reads every commit from the outbox; on
    // SQLite (one instance) the hub is fed directly.
    let pg_bus = (Backend::of_url(url) == Backend::Postgres).then(|| Arc::new(PgBus::new()));
    let bus: Arc<dyn EventBus> = match &pg_bus {
        Some(pg_bus) => pg_bus.clone(),
        None => Arc::new(LocalBus { hub: hub.clone() }),
    };
    let db = Database::open_with(
        &settings.database.database_url,
        settings.database.db_pool_size,
        settings.database.db_timeout,
        bus,
        settings.database.sqlite_synchronous,
    )?;
    let policy = LockPolicy {
        ttl: settings.lock_ttl,
        idle_timeout: settings.idle_timeout,
    };
    let realtime = Realtime {
        db: db.clone(),
        hub,
        heartbeats: Default::default(),
        presence: Default::default(),
        policy,
        timing: ChannelTiming {
            heartbeat_interval: settings.heartbeat_interval,
            disconnect_grace: settings.disconnect_grace,
        },
        instance_id: settings
            .instance_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        bus_wakeups: pg_bus.map(|bus| bus.wakeups()),
    };
    let throttle = Arc::new(LoginThrottle::new(ThrottleLimits {
        per_account: settings.login_account_limit,
        per_address: settings.login_address_limit,
        window: settings.login_window,
        tracked: settings.login_tracked as usize,
    }));
    // SQLite's statements cost no round trip: it always takes the general path.
    let fast_path = (settings.lock_fast_path && db.backend() == crate::db::Backend::Postgres)
        .then(engine::FastPath::default);
    Ok(AppState {
        engine: Engine::new(db.clone(), policy, fast_path),
        db,
        jwt,
        policy,
        realtime,
        throttle,
        passwords: PasswordPool::new(settings.password_threads),
        settings: Arc::new(settings),
        _instance_lock: instance_lock,
    })
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

/// Starts serving on `listener`, the metrics listener when
/// `BATON_METRICS_BIND` is set, and the background tasks, on the current
/// runtime. The returned server must be awaited (or spawned) to run; it
/// ignores signals (see [`run`]).
pub fn start(state: AppState, listener: TcpListener) -> Result<Server, StartError> {
    if let Some(addr) = state.settings.metrics_bind.clone() {
        let metrics = metrics_server(&state, &addr)?;
        actix_web::rt::spawn(metrics);
    }
    let audit_retention = state.settings.audit_retention.map(|keep| AuditRetention {
        keep,
        frames_live: pg_bus::OUTBOX_RETENTION,
    });
    actix_web::rt::spawn(engine::run_reaper(
        state.db.clone(),
        state.policy,
        state.settings.reaper_interval,
        audit_retention,
    ));
    if let Some(schedule) =
        crate::backup::Schedule::from_settings(&state.settings).map_err(StartError::Setting)?
    {
        actix_web::rt::spawn(crate::backup::run(schedule));
    }
    if state.db.backend() == Backend::Sqlite {
        // What `baton` commands commit in other processes, from now on.
        let from = state
            .db
            .pool()
            .get()
            .ok()
            .and_then(|mut conn| pg_bus::outbox_end(&mut conn).ok());
        actix_web::rt::spawn(crate::realtime::relay::run(
            state.db.clone(),
            state.realtime.hub.clone(),
            state.settings.reaper_interval,
            from.unwrap_or(1),
        ));
    }
    actix_web::rt::spawn(heartbeat::run(state.realtime.clone()));
    actix_web::rt::spawn(presence::run(state.realtime.clone()));
    if let Some(wakeups) = &state.realtime.bus_wakeups {
        // Where delivery starts, read before the first request (the
        // listener itself may connect later).
        let from = match state.db.pool().get() {
            Ok(mut conn) => pg_bus::outbox_end(&mut conn).ok(),
            Err(_) => None,
        };
        if from.is_none() {
            tracing::warn!(
                "cannot read the outbox's end; the event listener will when it connects"
            );
        }
        actix_web::rt::spawn(pg_bus::listen(
            state.settings.database.database_url.clone(),
            state.realtime.hub.clone(),
            wakeups.clone(),
            state.settings.database.db_timeout,
            from,
        ));
    }
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

/// `GET /metrics` on its own address, one worker.
fn metrics_server(state: &AppState, addr: &str) -> Result<Server, StartError> {
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let (_, hard) = rlimit::Resource::NOFILE.get().expect("getrlimit");
        let files = raise_open_file_limit(16).expect("raise the open-file limit");
        let (soft, _) = rlimit::Resource::NOFILE.get().expect("getrlimit");
        assert_eq!(soft, hard);
        assert_eq!(files.limit, hard);
        assert!(files.started_with <= hard);
        assert_eq!(files.tabs, hard.saturating_sub(RESERVED_FILES + 16));
    }
}
