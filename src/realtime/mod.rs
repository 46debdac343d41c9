//! The live side: events produced by committed writes, the hub that fans
//! them out to the tabs watching a case, each tab's channel, presence, and
//! the heartbeat that keeps leases and presence fresh.

pub mod channel;
pub mod events;
pub mod heartbeat;
pub mod hub;
pub mod pg_bus;
pub mod presence;
