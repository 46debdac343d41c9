//! What the lock engine knows about lockable records: a type name and table
//! (from [`Record`]), how to find one, and its case, version and wire shape.
//! A new lockable type is one model with `versioned_record!`, one
//! `lockable!` line below and one line in [`REGISTRY`].

use diesel::QueryResult;

use crate::db::DbConn;
use crate::models::{Card, Case, Edgenote, Page, Record};
use crate::views::{Identity, RecordView};

pub trait Lockable: Record + Sized + Send + 'static {
    /// The column of its table that names its case (`id` for a case).
    const CASE_COLUMN: &'static str;
    fn find(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>>;
    /// Like `find`, locking the row until the transaction ends (PostgreSQL).
    fn find_for_update(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>>;
    fn case_id(&self) -> i64;
    fn version(&self) -> i64;
    fn view(&self) -> RecordView;
}

/// Implements [`Lockable`] for a model made with `versioned_record!`; the
/// column and the closure say which case the record belongs to.
macro_rules! lockable {
    ($model:ident, $case_column:literal, case_id = |$r:ident| $case_id:expr) => {
        impl Lockable for $model {
            const CASE_COLUMN: &'static str = $case_column;

            fn find(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>> {
                $model::find(conn, id)
            }

            fn find_for_update(conn: &mut DbConn, id: i64) -> QueryResult<Option<Self>> {
                $model::find_for_update(conn, id)
            }

            fn case_id(&self) -> i64 {
                let $r = self;
                $case_id
            }

            fn version(&self) -> i64 {
                self.version
            }

            fn view(&self) -> RecordView {
                self.into()
            }
        }
    };
}

lockable!(Case, "id", case_id = |case| case.id);
lockable!(Page, "case_id", case_id = |page| page.case_id);
lockable!(Card, "case_id", case_id = |card| card.case_id);
lockable!(Edgenote, "case_id", case_id = |note| note.case_id);

/// A lockable record with its type erased, as the lock engine sees it.
#[derive(Clone, Debug)]
pub struct Target {
    pub identity: Identity,
    pub case_id: i64,
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
    find: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
    find_for_update: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
}

impl LockableKind {
    pub const fn of<L: Lockable>() -> LockableKind {
        LockableKind {
            type_name: L::TYPE,
            table: L::TABLE,
            case_column: L::CASE_COLUMN,
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
