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
pub use ids::{CaseId, LockEventId, LockId, MembershipId, RecordId, UserId, WaiterId};
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

/// A record people take locks on — a case, or a record of a declared type:
/// versioned, in one case, found by its key. What the lock engine needs of
/// it beyond its wire shape (which `crate::locks::Lockable` adds).
pub trait LockableRecord: Sized + Send + 'static {
    /// What finds one: a case's id, a stored record's type and id. Its
    /// `Display` names the record to people ("Ticket 12").
    type Key: Copy + Send + std::fmt::Display + 'static;
    fn find(conn: &mut crate::db::DbConn, key: Self::Key) -> diesel::QueryResult<Option<Self>>;
    /// Like `find`, locking the row until the transaction ends (PostgreSQL).
    fn find_for_update(
        conn: &mut crate::db::DbConn,
        key: Self::Key,
    ) -> diesel::QueryResult<Option<Self>>;
    fn key(&self) -> Self::Key;
    /// Its type name (`Ticket`), what clients send as `lockableType`.
    fn type_name(&self) -> &'static str;
    /// Its table (`tickets`).
    fn table(&self) -> &'static str;
    fn lockable_id(&self) -> i64;
    fn case_id(&self) -> CaseId;
    /// The records whose deep lock covers it, innermost first: its
    /// ancestors below the case, then its case (none for a case itself).
    fn containers(&self) -> Vec<(&'static str, i64)>;
    /// Starts at 1; every update increments it.
    fn version(&self) -> i64;
}

impl LockableRecord for Case {
    type Key = CaseId;

    fn find(conn: &mut crate::db::DbConn, key: CaseId) -> diesel::QueryResult<Option<Case>> {
        Case::find(conn, key)
    }

    fn find_for_update(
        conn: &mut crate::db::DbConn,
        key: CaseId,
    ) -> diesel::QueryResult<Option<Case>> {
        Case::find_for_update(conn, key)
    }

    fn key(&self) -> CaseId {
        self.id
    }

    fn type_name(&self) -> &'static str {
        Case::TYPE
    }

    fn table(&self) -> &'static str {
        Case::TABLE
    }

    fn lockable_id(&self) -> i64 {
        self.id.get()
    }

    fn case_id(&self) -> CaseId {
        self.id
    }

    fn containers(&self) -> Vec<(&'static str, i64)> {
        Vec::new()
    }

    fn version(&self) -> i64 {
        self.version
    }
}

impl LockableRecord for StoredRecord {
    type Key = StoredKey;

    fn find(conn: &mut crate::db::DbConn, key: StoredKey) -> diesel::QueryResult<Option<Self>> {
        StoredRecord::find(conn, key)
    }

    fn find_for_update(
        conn: &mut crate::db::DbConn,
        key: StoredKey,
    ) -> diesel::QueryResult<Option<Self>> {
        StoredRecord::find_for_update(conn, key)
    }

    fn key(&self) -> StoredKey {
        StoredRecord::key(self)
    }

    fn type_name(&self) -> &'static str {
        &self.ty.name
    }

    fn table(&self) -> &'static str {
        &self.ty.plural
    }

    fn lockable_id(&self) -> i64 {
        self.id.get()
    }

    fn case_id(&self) -> CaseId {
        self.case_id
    }

    fn containers(&self) -> Vec<(&'static str, i64)> {
        let mut containers = self.ancestors.clone();
        containers.push((Case::TYPE, self.case_id.get()));
        containers
    }

    fn version(&self) -> i64 {
        self.version
    }
}
