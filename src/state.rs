//! What every request handler and background task shares.

use std::sync::Arc;

use crate::auth::JwtKeys;
use crate::config::Settings;
use crate::db::Database;
use crate::locks::LockPolicy;
use crate::realtime::heartbeat::Heartbeats;
use crate::realtime::hub::Hub;
use crate::realtime::presence::PresenceBoard;

#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub jwt: JwtKeys,
    pub settings: Arc<Settings>,
    pub policy: LockPolicy,
    pub hub: Arc<Hub>,
    pub heartbeats: Arc<Heartbeats>,
    pub presence: Arc<PresenceBoard>,
    /// Names this process in `presences`, so instances can tell their tabs apart.
    pub instance_id: String,
    /// Held while serving a SQLite file, so a second instance refuses to start.
    pub _instance_lock: Option<Arc<std::fs::File>>,
}
