//! What every request handler shares. Background tasks get narrower handles
//! (`Realtime`, the database, the lock policy), not this.

use std::sync::Arc;

use crate::auth::password::PasswordPool;
use crate::auth::throttle::LoginThrottle;
use crate::auth::JwtKeys;
use crate::config::Settings;
use crate::db::Database;
use crate::locks::engine::Engine;
use crate::locks::engine::LockPolicy;
use crate::realtime::Realtime;

#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub jwt: JwtKeys,
    pub settings: Arc<Settings>,
    pub policy: LockPolicy,
    pub realtime: Realtime,
    /// Failed sign-ins per account and address.
    pub throttle: Arc<LoginThrottle>,
    /// The lock engine: every lock and every lockable write goes through it.
    pub engine: Engine,
    /// Where passwords are hashed, a few at a time.
    pub passwords: PasswordPool,
    /// Held while serving a SQLite file, so a second instance refuses to start.
    pub _instance_lock: Option<Arc<std::fs::File>>,
}
