//! What the lock engine knows about lockable records: a type name and table
//! (from [`Record`]), how to find one, its case and version (from
//! [`LockableRecord`], which `versioned_record!` implements) and its wire
//! shape (a `RecordView` variant). A new lockable type is a model made with
//! `versioned_record!`, its view, and one line in [`REGISTRY`]; the guide is
//! "Adding a lockable type" in `docs/architecture.md`.

use diesel::QueryResult;

use crate::db::DbConn;
use crate::models::{Card, Case, CaseId, Edgenote, LockableRecord, Page};
use crate::views::{Identity, RecordView};

/// A lockable record with its wire shape: every [`LockableRecord`] that has
/// a `RecordView` variant.
pub trait Lockable: LockableRecord {
    fn view(&self) -> RecordView;
}

impl<L> Lockable for L
where
    L: LockableRecord,
    for<'a> &'a L: Into<RecordView>,
{
    fn view(&self) -> RecordView {
        self.into()
    }
}

/// A lockable record with its type erased, as the lock engine sees it.
#[derive(Clone, Debug)]
pub struct Target {
    pub identity: Identity,
    pub case_id: CaseId,
    pub view: RecordView,
}

impl Target {
    pub fn of<L: Lockable>(record: &L) -> Target {
        Target {
            identity: Identity::of(record),
            case_id: record.case_id(),
            view: record.view(),
        }
    }
}

/// One registered lockable type.
pub struct LockableKind {
    pub type_name: &'static str,
    pub table: &'static str,
    pub case_column: &'static str,
    /// Its lock fast path's acquire statement (PostgreSQL).
    pub fast_acquire: &'static str,
    find: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
    find_for_update: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
}

impl LockableKind {
    pub const fn of<L: Lockable>() -> LockableKind {
        LockableKind {
            type_name: L::TYPE,
            table: L::TABLE,
            case_column: L::CASE_COLUMN,
            fast_acquire: L::FAST_ACQUIRE,
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

/// Looks a type up by its name (`Card`), exactly as the OpenAPI document lists it.
pub fn kind_named(name: &str) -> Option<&'static LockableKind> {
    REGISTRY.iter().find(|k| k.type_name == name)
}

/// The table of a lockable type name, for rendering stored locks.
pub fn table_of(type_name: &str) -> &'static str {
    kind_named(type_name).map_or("", |k| k.table)
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
    fn types_are_found_by_their_exact_name() {
        assert_eq!(super::kind_named("Card").unwrap().table, "cards");
        assert_eq!(super::kind_named("Edgenote").unwrap().table, "edgenotes");
        assert!(super::kind_named("card").is_none());
        assert!(super::kind_named("cards").is_none());
        assert!(super::kind_named("Comment").is_none());
    }
}
