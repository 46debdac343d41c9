//! What the lock engine knows about lockable records: a type name, a table,
//! how to find one, and its case, version and JSON. A new lockable type is
//! one `impl Lockable` and one line in [`REGISTRY`].

use diesel::QueryResult;
use serde_json::Value;

use crate::db::DbConn;
use crate::models::{Card, Case, Edgenote, Page};

pub trait Lockable: Sized + Send + 'static {
    /// The type name clients send as `lockableType` (`"Card"`).
    const TYPE: &'static str;
    /// The table, as carried in JSON (`"cards"`).
    const TABLE: &'static str;

    fn find(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>>;
    /// Like `find`, locking the row until the transaction ends (PostgreSQL).
    fn find_for_update(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>>;
    fn id(&self) -> i64;
    fn case_id(&self) -> i64;
    fn version(&self) -> i64;
    fn to_json(&self) -> Value;
}

/// A lockable record with its type erased, as the lock engine sees it.
#[derive(Clone, Debug)]
pub struct Target {
    pub type_name: &'static str,
    pub id: i64,
    pub case_id: i64,
    pub json: Value,
}

impl Target {
    pub fn of<L: Lockable>(record: &L) -> Target {
        Target {
            type_name: L::TYPE,
            id: record.id(),
            case_id: record.case_id(),
            json: record.to_json(),
        }
    }

    /// "Card 12", for messages.
    pub fn label(&self) -> String {
        format!("{} {}", self.type_name, self.id)
    }
}

/// One registered lockable type.
pub struct LockableKind {
    pub type_name: &'static str,
    pub table: &'static str,
    find: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
    find_for_update: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
}

impl LockableKind {
    pub const fn of<L: Lockable>() -> LockableKind {
        LockableKind {
            type_name: L::TYPE,
            table: L::TABLE,
            find: find_target::<L>,
            find_for_update: find_target_for_update::<L>,
        }
    }

    pub fn find(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
        (self.find)(conn, id)
    }

    /// Like `find`, locking the record's row until the transaction ends, so
    /// that acquiring a lock queues behind a guarded write of the same record.
    pub fn find_for_update(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
        (self.find_for_update)(conn, id)
    }
}

fn find_target<L: Lockable>(conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
    Ok(L::find(conn, id)?.as_ref().map(Target::of))
}

fn find_target_for_update<L: Lockable>(conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
    Ok(L::find_for_update(conn, id)?.as_ref().map(Target::of))
}

/// Every lockable type baton knows.
pub const REGISTRY: &[LockableKind] = &[
    LockableKind::of::<Case>(),
    LockableKind::of::<Page>(),
    LockableKind::of::<Card>(),
    LockableKind::of::<Edgenote>(),
];

/// Looks a type up by its name (`Card`), in any letter case, or by its
/// table (`cards`).
pub fn kind_named(name: &str) -> Option<&'static LockableKind> {
    REGISTRY
        .iter()
        .find(|k| k.type_name.eq_ignore_ascii_case(name) || k.table.eq_ignore_ascii_case(name))
}

/// The type names, for error messages.
pub fn known_types() -> String {
    REGISTRY
        .iter()
        .map(|k| k.type_name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn types_are_found_by_name_or_table() {
        assert_eq!(super::kind_named("Card").unwrap().table, "cards");
        assert_eq!(
            super::kind_named("edgenotes").unwrap().type_name,
            "Edgenote"
        );
        assert_eq!(super::kind_named("page").unwrap().type_name, "Page");
        assert!(super::kind_named("Comment").is_none());
    }
}
