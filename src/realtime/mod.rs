//! The live side: the hub that fans committed changes out to the tabs
//! watching a case, each tab's channel, presence, the heartbeat that keeps
//! leases and presence fresh, and the buses that carry frames from a commit
//! to the hub (in-process for SQLite, an outbox table for PostgreSQL).

pub mod channel;
pub mod heartbeat;
pub mod hub;
pub mod pg_bus;
pub mod presence;
pub mod relay;

use std::sync::Arc;
use std::time::Duration;

use crate::db::Database;
use crate::locks::engine::LockPolicy;
use heartbeat::Heartbeats;
use hub::Hub;
use presence::PresenceBoard;

/// What the channels and the realtime background tasks need, and no more.
#[derive(Clone)]
pub struct Realtime {
    pub db: Database,
    pub hub: Arc<Hub>,
    pub heartbeats: Arc<Heartbeats>,
    pub presence: Arc<PresenceBoard>,
    pub policy: LockPolicy,
    pub timing: ChannelTiming,
    /// Names this process in `presences`, so instances can tell their tabs apart.
    pub instance_id: String,
    /// On PostgreSQL: what wakes this instance's outbox listener.
    pub bus_wakeups: Option<Arc<pg_bus::Wakeups>>,
}

/// The channel's clock, from the settings.
#[derive(Clone, Copy, Debug)]
pub struct ChannelTiming {
    /// How often a tab is pinged; two missed pongs mean it is gone.
    pub heartbeat_interval: Duration,
    /// How long a closed tab keeps its locks, for reconnects.
    pub disconnect_grace: Duration,
}

impl ChannelTiming {
    /// Presence rows not refreshed for this long belong to a stopped instance.
    pub fn presence_ttl(&self) -> Duration {
        self.heartbeat_interval * 3
    }
}
