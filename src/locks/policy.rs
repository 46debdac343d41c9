//! How long locks live: the settings every part of the engine reads.

use std::time::Duration;

/// How long locks live; from the settings.
#[derive(Clone, Copy, Debug)]
pub struct LockPolicy {
    /// Acquire, refresh and the holder's writes extend a lease this far,
    /// unless the record's type declares its own (`lock.lease`).
    pub ttl: Duration,
    /// A lock without activity for this long is released.
    pub idle_timeout: Duration,
}

impl LockPolicy {
    /// The lease of a lock on a record of `type_name`: its type's
    /// `lock.lease`, else the server's.
    pub fn lease_of(&self, type_name: &str) -> Duration {
        crate::schema::LockRules::of(type_name).lease_or(self.ttl)
    }
}
