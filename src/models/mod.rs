//! Records and their queries. No JSON here: the wire shapes live in
//! `crate::views`.

pub mod api_key;
pub mod auth_token;
pub mod case;
pub mod external_record;
pub mod ids;
pub mod lock;
pub mod lock_event;
pub mod lock_notice;
pub mod membership;
pub mod presence;
pub mod record;
pub mod role;
pub mod stored_types;
pub mod user;
pub mod waiter;

pub use api_key::ApiKey;
pub use auth_token::AuthToken;
pub use case::{Case, CaseMaker};
pub use external_record::ExternalRecord;
pub use ids::{CaseId, LockEventId, LockId, MembershipId, RecordId, TargetId, UserId, WaiterId};
pub use lock::{HeldLock, Lock};
pub use lock_event::{LockAction, LockEvent};
pub use lock_notice::{LockNotice, SavedRecord, TokenHolder};
pub use membership::Membership;
pub use presence::{Presence, Tab};
pub use record::{Place, RecordChanges, RecordRow, StoredKey, StoredRecord};
pub use role::Role;
pub use user::{User, UserChanges, UserRef};
pub use waiter::{QueuedWaiter, Waiter, WaiterEnd};

/// What identifies a record of baton's own on the wire: its type name, its
/// table and its id (`{type, table, param, id}`), so clients can key
/// anything by `${type}/${param}`.
pub trait WireType {
    /// The type name (`"Lock"`).
    const TYPE: &'static str;
    /// The table (`"locks"`).
    const TABLE: &'static str;

    fn id(&self) -> i64;
}
