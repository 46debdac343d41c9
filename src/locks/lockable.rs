//! What the lock engine knows about lockable records: the case, and every
//! type of the schema in force (`crate::schema`), each one
//! [`LockableKind`] made from its descriptor at start. A new lockable type
//! is a declaration in the schema file; nothing here names one.

use diesel::QueryResult;

use crate::db::DbConn;
use crate::models::{
    lock_sql, Case, CaseId, DeclaredRecord, ExternalRecord, HeldLock, Lock, LockableRecord, Record,
    RecordId, RecordKey,
};
use crate::schema::{self, RecordType};
use crate::views::{ExternalView, Identity, RecordView};

/// A lockable record with its wire shape.
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
    /// The records whose deep locks cover it, innermost first, its case
    /// last (none for a case).
    pub containers: Vec<(&'static str, i64)>,
    /// A record of an external type: `identity.param` is what the host
    /// calls it.
    pub external: bool,
}

impl Target {
    pub fn of<L: Lockable>(record: &L) -> Target {
        Target {
            identity: Identity::new(record.type_name(), record.table(), record.lockable_id()),
            case_id: record.case_id(),
            view: record.view(),
            containers: record.containers(),
            external: false,
        }
    }

    /// A record of an external type `ty`.
    pub fn external(ty: &'static RecordType, record: &ExternalRecord) -> Target {
        let identity = Identity {
            type_name: &ty.name,
            table: &ty.plural,
            param: record.param.clone(),
            id: record.id,
        };
        Target {
            view: RecordView::External(ExternalView::new(identity.clone(), record.case_id.get())),
            identity,
            case_id: record.case_id,
            containers: vec![(Case::TYPE, record.case_id.get())],
            external: true,
        }
    }

    /// What a lock on it keeps as its param: the host's name for an
    /// external record, nothing for baton's own.
    pub fn external_param(&self) -> Option<&str> {
        self.external.then_some(self.identity.param.as_str())
    }

    /// The records whose deep lock covers this one, innermost first.
    pub fn containers(&self) -> Vec<(&'static str, i64)> {
        self.containers.clone()
    }
}

/// Which records a kind is: the case, a declared type baton stores, or an
/// external type (records a host names).
#[derive(Clone, Copy, Debug)]
enum Source {
    Case,
    Declared(&'static RecordType),
    External(&'static RecordType),
}

/// One lockable type.
#[derive(Debug)]
pub struct LockableKind {
    pub type_name: &'static str,
    pub table: &'static str,
    /// Its lock fast path's acquire statement (PostgreSQL); none for an
    /// external type, whose record may first need naming.
    pub fast_acquire: Option<&'static str>,
    source: Source,
    /// Whether its records hold others (a deep lock is for them only).
    holds_records: bool,
}

impl LockableKind {
    fn case() -> LockableKind {
        LockableKind {
            type_name: Case::TYPE,
            table: Case::TABLE,
            fast_acquire: Some(lock_sql::FAST_ACQUIRE_CASE),
            source: Source::Case,
            holds_records: true,
        }
    }

    fn declared(schema: &'static schema::Schema, ty: &'static RecordType) -> LockableKind {
        LockableKind {
            type_name: &ty.name,
            table: &ty.plural,
            fast_acquire: (!ty.is_external()).then_some(lock_sql::FAST_ACQUIRE_RECORD),
            source: if ty.is_external() {
                Source::External(ty)
            } else {
                Source::Declared(ty)
            },
            holds_records: !schema.children_of(Some(&ty.name)).is_empty(),
        }
    }

    /// The declared type, unless this is the case.
    pub fn record_type(&self) -> Option<&'static RecordType> {
        match self.source {
            Source::Case => None,
            Source::Declared(ty) | Source::External(ty) => Some(ty),
        }
    }

    /// An external type: its records are named by a param and a case.
    pub fn is_external(&self) -> bool {
        matches!(self.source, Source::External(_))
    }

    /// The records with these ids, by id, in one query; with `for_update`
    /// their rows locked in id order until the transaction ends.
    pub fn find_all(
        &self,
        conn: &mut DbConn,
        ids: &[i64],
        for_update: bool,
    ) -> QueryResult<Vec<Target>> {
        Ok(match self.source {
            Source::Case => Case::find_all(conn, ids, for_update)?
                .iter()
                .map(Target::of)
                .collect(),
            Source::Declared(ty) => DeclaredRecord::find_all(conn, ty, ids, for_update)?
                .iter()
                .map(Target::of)
                .collect(),
            Source::External(ty) => ExternalRecord::find_all(conn, &ty.name, ids, for_update)?
                .iter()
                .map(|record| Target::external(ty, record))
                .collect(),
        })
    }

    /// Locks record `id`'s row for this transaction unless another
    /// transaction holds it (PostgreSQL's `SKIP LOCKED`): `false` when it is
    /// busy or gone. A claim passes such a candidate over instead of
    /// waiting for it. SQLite's writer is single: nothing is ever busy.
    pub fn lock_row_unless_busy(&self, conn: &mut DbConn, id: i64) -> QueryResult<bool> {
        use diesel::prelude::*;
        use diesel::sql_types::{BigInt, Text};
        crate::on_backend!(conn,
            postgres: |c| match self.source {
                Source::Case => diesel::sql_query(
                    "SELECT id FROM cases WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED",
                )
                .bind::<BigInt, _>(id)
                .execute(c),
                Source::Declared(ty) => diesel::sql_query(
                    "SELECT id FROM records WHERE record_type = $1 AND id = $2 \
                     FOR NO KEY UPDATE SKIP LOCKED",
                )
                .bind::<Text, _>(&ty.name)
                .bind::<BigInt, _>(id)
                .execute(c),
                Source::External(ty) => diesel::sql_query(
                    "SELECT id FROM external_records WHERE record_type = $1 AND id = $2 \
                     FOR NO KEY UPDATE SKIP LOCKED",
                )
                .bind::<Text, _>(&ty.name)
                .bind::<BigInt, _>(id)
                .execute(c),
            }
            .map(|rows| rows == 1),
            sqlite: |_c| Ok(true),
        )
    }

    /// Whether a tab may wait in line for a record of this type (its
    /// `lock.wait`; always for a case).
    pub fn allows_waiting(&self) -> bool {
        self.record_type().is_none_or(|ty| ty.lock.wait)
    }

    /// Whether a record of this type can be locked deeply.
    pub fn holds_records(&self) -> bool {
        self.holds_records
    }

    /// The locks on record `id` (of case `case_id`) and on everything
    /// inside it, at any depth (empty for a type that holds no records).
    pub fn locks_inside(
        &self,
        conn: &mut DbConn,
        case_id: CaseId,
        id: i64,
    ) -> QueryResult<Vec<HeldLock>> {
        match self.source {
            _ if !self.holds_records => Ok(Vec::new()),
            Source::Case => Lock::of_case(conn, CaseId(id)),
            Source::Declared(ty) | Source::External(ty) => {
                Lock::inside_record(conn, case_id, &ty.name, id)
            }
        }
    }

    pub fn find(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
        Ok(match self.source {
            Source::Case => Case::find(conn, CaseId(id))?.as_ref().map(Target::of),
            Source::Declared(ty) => DeclaredRecord::find(conn, key(ty, id))?
                .as_ref()
                .map(Target::of),
            Source::External(ty) => ExternalRecord::find(conn, &ty.name, id)?
                .map(|record| Target::external(ty, &record)),
        })
    }

    /// Like `find`, locking the record's row until the transaction ends, so
    /// that acquiring a lock queues behind a guarded write of the same record.
    pub fn find_for_update(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<Target>> {
        Ok(match self.source {
            Source::Case => Case::find_for_update(conn, CaseId(id))?
                .as_ref()
                .map(Target::of),
            Source::Declared(ty) => DeclaredRecord::find_for_update(conn, key(ty, id))?
                .as_ref()
                .map(Target::of),
            Source::External(ty) => ExternalRecord::find_for_update(conn, &ty.name, id)?
                .map(|record| Target::external(ty, &record)),
        })
    }

    /// An external record that was never locked, as the guard sees it: no
    /// row, so id 0, which no lock or waiter names; only the deep locks of
    /// its case can cover it. None for a type that is not external.
    pub fn never_locked(&self, case_id: CaseId, param: &str) -> Option<Target> {
        let Source::External(ty) = self.source else {
            return None;
        };
        let record = ExternalRecord {
            id: 0,
            record_type: ty.name.clone(),
            case_id,
            param: param.to_owned(),
            created_at: chrono::NaiveDateTime::default(),
        };
        Some(Target::external(ty, &record))
    }

    /// The external record that case `case_id` calls `param`, if it was ever
    /// locked (an external record never locked is free).
    pub fn find_external(
        &self,
        conn: &mut DbConn,
        case_id: CaseId,
        param: &str,
    ) -> QueryResult<Option<Target>> {
        let Source::External(ty) = self.source else {
            return Ok(None);
        };
        Ok(ExternalRecord::named(conn, &ty.name, case_id, param)?
            .map(|record| Target::external(ty, &record)))
    }
}

fn key(ty: &'static RecordType, id: i64) -> RecordKey {
    RecordKey {
        ty,
        id: RecordId(id),
    }
}

/// Every lockable type of the schema in force: the case, then the declared
/// types in declaration order. Made once per schema.
pub fn registry() -> &'static [LockableKind] {
    static REGISTRY: std::sync::OnceLock<Vec<LockableKind>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let schema = schema::in_force();
        std::iter::once(LockableKind::case())
            .chain(
                schema
                    .types()
                    .iter()
                    .map(|ty| LockableKind::declared(schema, ty)),
            )
            .collect()
    })
}

/// Looks a type up by its name (`Ticket`), exactly as the OpenAPI document lists it.
pub fn kind_named(name: &str) -> Option<&'static LockableKind> {
    registry().iter().find(|k| k.type_name == name)
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
    registry()
        .iter()
        .map(|k| k.type_name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn types_are_found_by_their_exact_name() {
        let schema = crate::schema::in_force();
        for ty in schema.types() {
            let kind = super::kind_named(&ty.name).expect("a declared type is lockable");
            assert_eq!(kind.table, ty.plural);
            let has_children = !schema.children_of(Some(&ty.name)).is_empty();
            assert_eq!(kind.holds_records(), has_children, "{}", ty.name);
            assert!(super::kind_named(&ty.name.to_lowercase()).is_none());
            assert!(super::kind_named(&ty.plural).is_none());
        }
        assert!(super::kind_named("Case").unwrap().holds_records());
        assert!(super::kind_named("Comment").is_none());
    }
}
