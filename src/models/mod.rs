//! Records and their queries. No JSON here: the wire shapes live in
//! `crate::views`.

pub mod auth_token;
pub mod card;
pub mod case;
pub mod edgenote;
pub mod ids;
pub mod lock;
pub mod lock_event;
pub mod lock_fast_path;
pub mod lock_sql;
pub mod membership;
pub mod page;
pub mod presence;
pub mod role;
pub mod user;
pub mod waiter;

pub use auth_token::AuthToken;
pub use card::Card;
pub use case::Case;
pub use edgenote::Edgenote;
pub use ids::{
    CardId, CaseId, EdgenoteId, LockEventId, LockId, MembershipId, PageId, UserId, WaiterId,
};
pub use lock::{HeldLock, Lock};
pub use lock_event::{LockAction, LockEvent};
pub use membership::Membership;
pub use page::Page;
pub use presence::Presence;
pub use role::Role;
pub use user::{User, UserChanges, UserRef};
pub use waiter::{QueuedWaiter, Waiter, WaiterEnd};

/// What identifies a record on the wire: its type name, its table and its id
/// (`{type, table, param, id}`), so clients can key anything by
/// `${type}/${param}`.
pub trait Record {
    /// The type name (`"Card"`), also what clients send as `lockableType`.
    const TYPE: &'static str;
    /// The table (`"cards"`).
    const TABLE: &'static str;

    fn id(&self) -> i64;
}

/// A record people take locks on: versioned, in one case, found by id. What
/// the lock engine needs of it beyond its wire shape (which
/// `crate::locks::Lockable` adds). Implemented by `versioned_record!`.
pub trait LockableRecord: Record + Sized + Send + 'static {
    /// The column of its table that names its case (`id` for a case).
    const CASE_COLUMN: &'static str;
    /// Its typed id (`CardId`), what handlers take; the lookups here take
    /// the bare number, as the lock engine's registry holds it.
    type Id: Copy + Into<i64> + std::fmt::Display + Send + 'static;
    fn find(conn: &mut crate::db::DbConn, id: i64) -> diesel::QueryResult<Option<Self>>;
    /// Like `find`, locking the row until the transaction ends (PostgreSQL).
    fn find_for_update(conn: &mut crate::db::DbConn, id: i64) -> diesel::QueryResult<Option<Self>>;
    /// The lock fast path's acquire on this type (PostgreSQL), built at
    /// compile time by `crate::models::lock_sql::fast_acquire!`.
    const FAST_ACQUIRE: &'static str;
    fn case_id(&self) -> CaseId;
    /// The record it sits in below its case, whose deep lock covers it too
    /// (a card's page): its type name and id.
    fn container(&self) -> Option<(&'static str, i64)>;
    /// Starts at 1; every update increments it.
    fn version(&self) -> i64;
}

/// Implements [`Record`], [`LockableRecord`] and the queries every versioned
/// content record (case, page, card, edgenote) shares: find, find for
/// update, the versioned update and delete. `id = <type>` is its id type;
/// `case = <column>` names the column that holds the record's case (`id` for
/// a case itself); `within = <column> in <model>`, the record it sits in
/// below the case (a card's page), if any. The `LockableRecord` lookups take the bare id (the lock
/// engine works on any lockable type); the inherent ones, the typed id. A macro
/// rather than generic code: diesel's per-table types make a generic version
/// mostly trait bounds.
macro_rules! versioned_record {
    ($model:ident, $table:ident, $changes:ty, id = $id:ident, type = $type_name:literal, case = $case:ident $(, within = $within:ident in $container:ident)?) => {
        impl $crate::models::Record for $model {
            const TYPE: &'static str = $type_name;
            const TABLE: &'static str = stringify!($table);

            fn id(&self) -> i64 {
                self.id.get()
            }
        }

        impl $crate::models::LockableRecord for $model {
            const CASE_COLUMN: &'static str = stringify!($case);
            const FAST_ACQUIRE: &'static str =
                $crate::models::lock_sql::fast_acquire!(stringify!($table), stringify!($case));
            type Id = $crate::models::$id;

            fn find(conn: &mut $crate::db::DbConn, id: i64) -> diesel::QueryResult<Option<$model>> {
                $model::find(conn, $crate::models::$id(id))
            }

            fn find_for_update(
                conn: &mut $crate::db::DbConn,
                id: i64,
            ) -> diesel::QueryResult<Option<$model>> {
                $model::find_for_update(conn, $crate::models::$id(id))
            }

            fn case_id(&self) -> $crate::models::CaseId {
                self.$case
            }

            fn container(&self) -> Option<(&'static str, i64)> {
                None$(.or(Some((
                    <$crate::models::$container as $crate::models::Record>::TYPE,
                    self.$within.get(),
                ))))?
            }

            fn version(&self) -> i64 {
                self.version
            }
        }

        impl $model {
            pub fn find(
                conn: &mut $crate::db::DbConn,
                id: $crate::models::$id,
            ) -> diesel::QueryResult<Option<$model>> {
                $table::table
                    .find(id)
                    .select($model::as_select())
                    .get_result(conn)
                    .optional()
            }

            /// Like `find`, the row locked until the transaction ends
            /// (PostgreSQL; see "Row-lock order" in `crate::locks`).
            pub fn find_for_update(
                conn: &mut $crate::db::DbConn,
                id: $crate::models::$id,
            ) -> diesel::QueryResult<Option<$model>> {
                $crate::select_one_for_no_key_update!(
                    conn,
                    $table::table.find(id).select($model::as_select())
                )
            }

            /// Applies `changes` and increments `version`. The caller has read
            /// the row for update, so `self.version` is current.
            pub fn update(
                &self,
                conn: &mut $crate::db::DbConn,
                changes: &$changes,
                now: chrono::NaiveDateTime,
            ) -> diesel::QueryResult<$model> {
                diesel::update($table::table.find(self.id))
                    .set((
                        changes,
                        $table::version.eq(self.version + 1),
                        $table::updated_at.eq(now),
                    ))
                    .returning($table::all_columns)
                    .get_result::<$model>(conn)
            }

            pub fn delete(&self, conn: &mut $crate::db::DbConn) -> diesel::QueryResult<()> {
                diesel::delete($table::table.find(self.id))
                    .execute(conn)
                    .map(|_| ())
            }
        }
    };
}
pub(crate) use versioned_record;
