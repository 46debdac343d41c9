//! Typed ids: a `LockId` is not a `UserId`, so passing one where the
//! other is expected does not compile. Each is an `i64` on the database side
//! (a `BigInt` column, on either backend) and a plain number on the wire.
//!
//! ```
//! fn user(conn: &mut baton::db::DbConn) -> diesel::QueryResult<Option<baton::models::User>> {
//!     baton::models::User::find(conn, baton::models::UserId(1))
//! }
//! ```
//!
//! A lock's id does not name a user:
//!
//! ```compile_fail,E0308
//! fn user(conn: &mut baton::db::DbConn) -> diesel::QueryResult<Option<baton::models::User>> {
//!     baton::models::User::find(conn, baton::models::LockId(1))
//! }
//! ```

/// Declares `i64` newtype ids: diesel column values wherever `i64` is one
/// (`diesel-derive-newtype`), serialized as the bare number.
macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
            diesel_derive_newtype::DieselNewType,
        )]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl $name {
            /// The bare number, for type-erased uses (the lock engine's
            /// targets, wire shapes, logs).
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}

ids! {
    /// A case's id.
    CaseId;
    /// A stored record's id, unique within its type.
    RecordId;
    /// A lock's id (also its token).
    LockId;
    /// A lock event's id.
    LockEventId;
    /// A user's id.
    UserId;
    /// A membership's id.
    MembershipId;
    /// A place in a waiting line (a waiter's id).
    WaiterId;
}

/// What a lock is on, by type and id: the case (type `Case`, the case's
/// id) or a record of a declared type. What the record a deep lock covers
/// sits in is a list of these (`Lockable::containers` of the lock engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    pub type_name: &'static str,
    pub id: i64,
}

impl TargetId {
    /// Whether lock `lock` is on it.
    pub fn is_of(&self, lock: &crate::models::Lock) -> bool {
        lock.lockable_type == self.type_name && lock.lockable_id == self.id
    }
}
