//! What the lock engine knows about lockable records: the case, and every
//! type of the schema in force (`crate::schema`), each one
//! [`TargetKind`] made from its descriptor at start. A new lockable type
//! is a declaration in the schema file; nothing here names one.

use diesel::QueryResult;

use crate::db::DbConn;
use crate::models::{
    Case, CaseId, ExternalRecord, HeldLock, Lock, RecordId, StoredKey, StoredRecord, TargetId,
    WireType,
};
use crate::schema::{self, RecordType};
use crate::views::{ExternalView, Identity, RecordView};

/// A record people take locks on — a case, or a record of a declared type:
/// versioned, in one case, found by its key, with its wire shape. What the
/// lock engine, the guard and the handlers read of it.
pub trait Lockable: Sized + Send + 'static {
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
    fn containers(&self) -> Vec<TargetId>;
    /// Starts at 1; every update increments it.
    fn version(&self) -> i64;
    /// Its wire shape.
    fn view(&self) -> RecordView;
}

impl Lockable for Case {
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

    fn containers(&self) -> Vec<TargetId> {
        Vec::new()
    }

    fn version(&self) -> i64 {
        self.version
    }

    fn view(&self) -> RecordView {
        self.into()
    }
}

impl Lockable for StoredRecord {
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

    fn containers(&self) -> Vec<TargetId> {
        let mut containers = self.ancestors.clone();
        containers.push(TargetId {
            type_name: Case::TYPE,
            id: self.case_id.get(),
        });
        containers
    }

    fn version(&self) -> i64 {
        self.version
    }

    fn view(&self) -> RecordView {
        self.into()
    }
}

/// What a lock is on, as the lock engine and the guard see it: the case, a
/// record baton stores, or a record of an external type (a host's), with
/// its id, its case and the records whose deep locks cover it. Made from a
/// record baton read ([`LockTarget::of`]), or for an external record.
#[derive(Clone, Debug)]
pub struct LockTarget {
    pub identity: Identity,
    pub case_id: CaseId,
    pub view: RecordView,
    /// Its version; none for an external record (baton has no copy).
    pub version: Option<i64>,
    /// The records whose deep locks cover it, innermost first, its case
    /// last (none for a case).
    pub containers: Vec<TargetId>,
    /// A record of an external type: `identity.param` is what the host
    /// calls it.
    pub external: bool,
}

impl LockTarget {
    pub fn of<L: Lockable>(record: &L) -> LockTarget {
        LockTarget {
            identity: Identity::new(record.type_name(), record.table(), record.lockable_id()),
            case_id: record.case_id(),
            view: record.view(),
            version: Some(record.version()),
            containers: record.containers(),
            external: false,
        }
    }

    /// A record of an external type `ty`.
    pub fn external(ty: &'static RecordType, record: &ExternalRecord) -> LockTarget {
        let identity = Identity {
            type_name: &ty.name,
            table: &ty.plural,
            param: record.param.clone(),
            id: record.id,
        };
        LockTarget {
            view: RecordView::External(ExternalView::new(identity.clone(), record.case_id.get())),
            identity,
            case_id: record.case_id,
            version: None,
            containers: vec![TargetId {
                type_name: Case::TYPE,
                id: record.case_id.get(),
            }],
            external: true,
        }
    }

    /// What a lock on it keeps as its param: the host's name for an
    /// external record, nothing for baton's own.
    pub fn external_param(&self) -> Option<&str> {
        self.external.then_some(self.identity.param.as_str())
    }

    /// The records whose deep lock covers this one, innermost first.
    pub fn containers(&self) -> Vec<TargetId> {
        self.containers.clone()
    }

    /// Its type and id.
    pub fn id(&self) -> TargetId {
        TargetId {
            type_name: self.identity.type_name,
            id: self.identity.id,
        }
    }
}

/// One lockable type.
#[derive(Debug)]
pub struct TargetKind {
    pub type_name: &'static str,
    pub table: &'static str,
    /// Its declared type; none for the case. An external type's records
    /// are named by a param and a case, the others baton stores.
    record_type: Option<&'static RecordType>,
    /// Whether its records hold others (a deep lock is for them only).
    holds_records: bool,
}

impl TargetKind {
    fn case() -> TargetKind {
        TargetKind {
            type_name: Case::TYPE,
            table: Case::TABLE,
            record_type: None,
            holds_records: true,
        }
    }

    fn declared(schema: &'static schema::Schema, ty: &'static RecordType) -> TargetKind {
        TargetKind {
            type_name: &ty.name,
            table: &ty.plural,
            record_type: Some(ty),
            holds_records: !schema.children_of(Some(&ty.name)).is_empty(),
        }
    }

    /// The declared type, unless this is the case.
    pub fn record_type(&self) -> Option<&'static RecordType> {
        self.record_type
    }

    /// An external type: its records are named by a param and a case.
    pub fn is_external(&self) -> bool {
        self.record_type.is_some_and(|ty| ty.is_external())
    }

    /// The records with these ids, by id, in one query; with `for_update`
    /// their rows locked in id order until the transaction ends.
    pub fn find_all(
        &self,
        conn: &mut DbConn,
        ids: &[i64],
        for_update: bool,
    ) -> QueryResult<Vec<LockTarget>> {
        Ok(match self.record_type {
            None => Case::find_all(conn, ids, for_update)?
                .iter()
                .map(LockTarget::of)
                .collect(),
            Some(ty) if !ty.is_external() => StoredRecord::find_all(conn, ty, ids, for_update)?
                .iter()
                .map(LockTarget::of)
                .collect(),
            Some(ty) => ExternalRecord::find_all(conn, &ty.name, ids, for_update)?
                .iter()
                .map(|record| LockTarget::external(ty, record))
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
            postgres: |c| match self.record_type {
                None => diesel::sql_query(
                    "SELECT id FROM cases WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED",
                )
                .bind::<BigInt, _>(id)
                .execute(c),
                Some(ty) if !ty.is_external() => diesel::sql_query(
                    "SELECT id FROM records WHERE record_type = $1 AND id = $2 \
                     FOR NO KEY UPDATE SKIP LOCKED",
                )
                .bind::<Text, _>(&ty.name)
                .bind::<BigInt, _>(id)
                .execute(c),
                Some(ty) => diesel::sql_query(
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
        crate::schema::LockRules::of(self.type_name).wait
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
        match self.record_type {
            _ if !self.holds_records => Ok(Vec::new()),
            None => Lock::of_case(conn, CaseId(id)),
            Some(ty) => Lock::inside_record(conn, case_id, &ty.name, id),
        }
    }

    pub fn find(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<LockTarget>> {
        Ok(match self.record_type {
            None => Case::find(conn, CaseId(id))?.as_ref().map(LockTarget::of),
            Some(ty) if !ty.is_external() => StoredRecord::find(conn, key(ty, id))?
                .as_ref()
                .map(LockTarget::of),
            Some(ty) => ExternalRecord::find(conn, &ty.name, id)?
                .map(|record| LockTarget::external(ty, &record)),
        })
    }

    /// Like `find`, locking the record's row until the transaction ends, so
    /// that acquiring a lock queues behind a guarded write of the same record.
    pub fn find_for_update(&self, conn: &mut DbConn, id: i64) -> QueryResult<Option<LockTarget>> {
        Ok(match self.record_type {
            None => Case::find_for_update(conn, CaseId(id))?
                .as_ref()
                .map(LockTarget::of),
            Some(ty) if !ty.is_external() => StoredRecord::find_for_update(conn, key(ty, id))?
                .as_ref()
                .map(LockTarget::of),
            Some(ty) => ExternalRecord::find_for_update(conn, &ty.name, id)?
                .map(|record| LockTarget::external(ty, &record)),
        })
    }

    /// An external record that was never locked, as the guard sees it: no
    /// row, so id 0, which no lock or waiter names; only the deep locks of
    /// its case can cover it. None for a type that is not external.
    pub fn never_locked(&self, case_id: CaseId, param: &str) -> Option<LockTarget> {
        let ty = self.record_type.filter(|ty| ty.is_external())?;
        let record = ExternalRecord {
            id: 0,
            record_type: ty.name.clone(),
            case_id,
            param: param.to_owned(),
            created_at: chrono::NaiveDateTime::default(),
        };
        Some(LockTarget::external(ty, &record))
    }

    /// The external record that case `case_id` calls `param`, if it was ever
    /// locked (an external record never locked is free).
    pub fn find_external(
        &self,
        conn: &mut DbConn,
        case_id: CaseId,
        param: &str,
    ) -> QueryResult<Option<LockTarget>> {
        let Some(ty) = self.record_type.filter(|ty| ty.is_external()) else {
            return Ok(None);
        };
        Ok(ExternalRecord::named(conn, &ty.name, case_id, param)?
            .map(|record| LockTarget::external(ty, &record)))
    }
}

fn key(ty: &'static RecordType, id: i64) -> StoredKey {
    StoredKey {
        ty,
        id: RecordId(id),
    }
}

/// Every lockable type of the schema in force: the case, then the declared
/// types in declaration order. Made once per schema.
pub fn registry() -> &'static [TargetKind] {
    static REGISTRY: std::sync::OnceLock<Vec<TargetKind>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let schema = schema::in_force();
        std::iter::once(TargetKind::case())
            .chain(
                schema
                    .types()
                    .iter()
                    .map(|ty| TargetKind::declared(schema, ty)),
            )
            .collect()
    })
}

/// Looks a type up by its name (`Ticket`), exactly as the OpenAPI document lists it.
pub fn kind_named(name: &str) -> Option<&'static TargetKind> {
    registry().iter().find(|k| k.type_name == name)
}

/// The record a lock or a waiter names by type name and id, if both still
/// exist.
pub fn find_named(conn: &mut DbConn, type_name: &str, id: i64) -> QueryResult<Option<LockTarget>> {
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
    use super::kind_named;

    #[test]
    fn types_are_found_by_their_exact_name() {
        let schema = crate::schema::in_force();
        for ty in schema.types() {
            let kind = kind_named(&ty.name).expect("a declared type is lockable");
            assert_eq!(kind.table, ty.plural);
            let has_children = !schema.children_of(Some(&ty.name)).is_empty();
            assert_eq!(kind.holds_records(), has_children, "{}", ty.name);
            assert!(kind_named(&ty.name.to_lowercase()).is_none());
            assert!(kind_named(&ty.plural).is_none());
        }
        assert!(kind_named("Case").unwrap().holds_records());
        assert!(kind_named("Comment").is_none());
    }
}
