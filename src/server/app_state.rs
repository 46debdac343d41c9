//! The application state built from settings: keys, database, realtime,
//! throttles and the lock engine.

use std::sync::Arc;

use crate::auth::password::PasswordPool;
use crate::auth::throttle::{LoginThrottle, ThrottleLimits};
use crate::auth::JwtKeys;
use crate::config::Settings;
use crate::db::EventBus;
use crate::db::{Backend, Database};
use crate::locks::engine::LockPolicy;
use crate::locks::engine::{self, Engine};
use crate::realtime::hub::{Hub, LocalBus};
use crate::realtime::pg_bus::{self, PgBus};
use crate::realtime::{ChannelTiming, Realtime};
use crate::state::AppState;

use super::database::{lock_sqlite_file, prepare_database};
use super::StartError;

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
