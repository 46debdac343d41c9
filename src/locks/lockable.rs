//! What the lock engine knows about lockable records: a type name and table
//! (from [`Record`]), how to find one, its case and version (from
//! [`LockableRecord`], which `versioned_record!` implements) and its wire
//! shape (a `RecordView` variant). A new lockable type is a model made with
//! `versioned_record!`, its view, and one line in [`REGISTRY`]; the guide is
//! "Adding a lockable type" in `docs/architecture.md`.

use diesel::QueryResult;

use crate::db::DbConn;
use crate::models::{
    Card, Case, CaseId, Edgenote, HeldLock, Lock, LockableRecord, Page, PageId, Record,
};
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
    /// The record it sits in below its case (a card's page).
    pub container: Option<(&'static str, i64)>,
}

impl Target {
    pub fn of<L: Lockable>(record: &L) -> Target {
        Target {
            identity: Identity::of(record),
            case_id: record.case_id(),
            view: record.view(),
            container: record.container(),
        }
    }

    /// The records whose deep lock covers this one, innermost first: its
    /// container (a card's page), then its case (unless it is the case).
    pub fn containers(&self) -> Vec<(&'static str, i64)> {
        containers(self.identity.type_name, self.case_id, self.container)
    }
}

/// [`Target::containers`] of a record.
pub fn containers_of<L: LockableRecord>(record: &L) -> Vec<(&'static str, i64)> {
    containers(L::TYPE, record.case_id(), record.container())
}

fn containers(
    type_name: &str,
    case_id: CaseId,
    container: Option<(&'static str, i64)>,
) -> Vec<(&'static str, i64)> {
    let case = (Case::TYPE, case_id.get());
    container
        .into_iter()
        .chain((type_name != Case::TYPE).then_some(case))
        .collect()
}

/// The locks on a record and on everything inside it, by the record's id.
type LocksInside = fn(&mut DbConn, i64) -> QueryResult<Vec<HeldLock>>;

/// One registered lockable type.
pub struct LockableKind {
    pub type_name: &'static str,
    pub table: &'static str,
    pub case_column: &'static str,
    /// Its lock fast path's acquire statement (PostgreSQL).
    pub fast_acquire: &'static str,
    find: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
    find_for_update: fn(&mut DbConn, i64) -> QueryResult<Option<Target>>,
    find_all: fn(&mut DbConn, &[i64], bool) -> QueryResult<Vec<Target>>,
    /// The locks a deep lock on a record of this type covers (the record's
    /// own included); `None`: it holds no records, so it cannot be locked
    /// deeply.
    inside: Option<LocksInside>,
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
            find_all: find_targets::<L>,
            inside: None,
        }
    }

    /// A type whose records hold others: `inside` lists the locks a deep
    /// lock on one of them covers.
    const fn holding(self, inside: LocksInside) -> Self {
        LockableKind {
            inside: Some(inside),
            ..self
        }
    }

    /// The records with these ids, by id, in one query; with `for_update`
    /// their rows locked in id order until the transaction ends.
    pub fn find_all(
        &self,
        conn: &mut DbConn,
        ids: &[i64],
        for_update: bool,
    ) -> QueryResult<Vec<Target>> {
        (self.find_all)(conn, ids, for_update)
    }

    /// Locks record `id`'s row for this transaction unless another
    /// transaction holds it (PostgreSQL's `SKIP LOCKED`): `false` when it is
    /// busy or gone. A claim passes such a candidate over instead of
    /// waiting for it. SQLite's writer is single: nothing is ever busy.
    pub fn lock_row_unless_busy(&self, conn: &mut DbConn, id: i64) -> QueryResult<bool> {
        use diesel::prelude::*;
        use diesel::sql_types::BigInt;
        // `table` is one of the registry's names, never a client's string.
        let sql = format!(
            "SELECT id FROM {} WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED",
            self.table
        );
        crate::on_backend!(conn,
            postgres: |c| diesel::sql_query(&sql)
                .bind::<BigInt, _>(id)
                .execute(c)
                .map(|rows| rows == 1),
            sqlite: |_c| Ok(true),
        )
    }

    /// Whether a record of this type can be locked deeply.
    pub fn holds_records(&self) -> bool {
        self.inside.is_some()
    }

    /// The locks on record `id` and on everything inside it (empty for a
    /// type that holds no records).
    pub fn locks_inside(&self, conn: &mut DbConn, id: i64) -> QueryResult<Vec<HeldLock>> {
        match self.inside {
            Some(inside) => inside(conn, id),
            None => Ok(Vec::new()),
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

fn find_targets<L: Lockable>(
    conn: &mut DbConn,
    ids: &[i64],
    for_update: bool,
) -> QueryResult<Vec<Target>> {
    Ok(L::find_all(conn, ids, for_update)?
        .iter()
        .map(Target::of)
        .collect())
}

fn find_target_for_update<L: Lockable>(conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
    Ok(L::find_for_update(conn, id)?.as_ref().map(Target::of))
}

/// Every lockable type baton knows.
pub const REGISTRY: &[LockableKind] = &[
    LockableKind::of::<Case>().holding(locks_in_case),
    LockableKind::of::<Page>().holding(locks_in_page),
    LockableKind::of::<Card>(),
    LockableKind::of::<Edgenote>(),
];

fn locks_in_case(conn: &mut DbConn, id: i64) -> QueryResult<Vec<HeldLock>> {
    Lock::of_case(conn, CaseId(id))
}

fn locks_in_page(conn: &mut DbConn, id: i64) -> QueryResult<Vec<HeldLock>> {
    Lock::inside_page(conn, PageId(id))
}

/// Looks a type up by its name (`Card`), exactly as the OpenAPI document lists it.
pub fn kind_named(name: &str) -> Option<&'static LockableKind> {
    REGISTRY.iter().find(|k| k.type_name == name)
}

/// The record a lock or a waiter names by type name and id, if both still
/// exist.
pub fn find_named(conn: &mut DbConn, type_name: &str, id: i64) -> QueryResult<Option<Target>> {
    match kind_named(type_name) {
        Some(kind) => kind.find(conn, id),
        None => Ok(None),
    }
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
