//! The lock engine: which records are lockable, acquiring, renewing,
//! releasing and overriding locks, the guard every lockable write goes
//! through, and the reaper that ends expired and idle locks.

pub mod engine;
pub mod guard;
pub mod lease;
pub mod lockable;
pub mod reaper;
pub mod render;

use std::time::Duration;

pub use engine::{Acquired, LockStatus};
pub use guard::Written;
pub use lockable::{Lockable, LockableKind, Target};

/// How long locks live; from the settings.
#[derive(Clone, Copy, Debug)]
pub struct LockPolicy {
    /// Acquire, refresh and the holder's writes extend a lease this far.
    pub ttl: Duration,
    /// A lock without activity for this long is released.
    pub idle_timeout: Duration,
}
