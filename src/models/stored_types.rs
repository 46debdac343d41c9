//! The schema in force against the records the database holds, at start
//! and for `baton schema check`: new types and new optional fields apply
//! by themselves; a change that would orphan or invalidate stored records
//! is refused with what it would affect. Nothing is deleted here; `drop`
//! deletes only what a command names.

use std::collections::{BTreeMap, BTreeSet};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde_json::Value;

use crate::db::schema::records;
use crate::db::DbConn;
use crate::models::CaseId;
use crate::schema::{RecordType, Schema, Store};

/// What the stored records say against a schema.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Changes that apply by themselves (new types, new fields).
    pub changes: Vec<String>,
    /// Changes that do not fit the stored records: each names the type,
    /// the field and how many records.
    pub problems: Vec<String>,
    /// For each problem that deleting data would settle, the command that
    /// deletes it.
    pub commands: Vec<String>,
}

impl Comparison {
    pub fn fits(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Compares `schema` with the stored records.
pub fn compare(conn: &mut DbConn, schema: &Schema) -> QueryResult<Comparison> {
    let mut out = Comparison::default();
    let stored: BTreeMap<String, i64> = counts_by_type(conn)?.into_iter().collect();
    for (type_name, count) in &stored {
        match schema.get(type_name) {
            None => {
                out.problems.push(format!(
                    "type {type_name} is not declared, but {count} record(s) of it are stored"
                ));
                out.commands.push(format!("baton schema drop {type_name}"));
            }
            Some(ty) if ty.store == Store::External => {
                out.problems.push(format!(
                    "type {type_name} is declared external, but baton stores {count} record(s) of it"
                ));
                out.commands.push(format!("baton schema drop {type_name}"));
            }
            Some(ty) => compare_type(conn, ty, *count, &mut out)?,
        }
    }
    for ty in schema.types() {
        if ty.store == Store::Stored && !stored.contains_key(&ty.name) {
            out.changes
                .push(format!("type {} (no records yet)", ty.name));
        }
    }
    Ok(out)
}

fn compare_type(
    conn: &mut DbConn,
    ty: &RecordType,
    count: i64,
    out: &mut Comparison,
) -> QueryResult<()> {
    let rows = stored_of_type(conn, &ty.name)?;
    compare_parents(ty, &rows, count, out);
    let orphans = orphans(conn, &ty.name)?;
    if orphans > 0 {
        out.problems.push(format!(
            "type {}: {orphans} record(s) name a parent record that does not exist",
            ty.name
        ));
        out.commands.push(format!("baton schema drop {}", ty.name));
    }
    FieldTally::of(ty, &rows).report(ty, out);
    Ok(())
}

/// A type whose declared parent is not the one its stored records have.
fn compare_parents(
    ty: &RecordType,
    rows: &[(CaseId, Option<String>, String)],
    count: i64,
    out: &mut Comparison,
) {
    let parents: BTreeSet<Option<String>> = rows.iter().map(|(_, p, _)| p.clone()).collect();
    let declared_parent = ty.parent.clone();
    let moved: usize = rows
        .iter()
        .filter(|(_, p, _)| *p != declared_parent)
        .count();
    if moved == 0 {
        return;
    }
    let was: Vec<String> = parents
        .iter()
        .filter(|p| **p != declared_parent)
        .map(|p| p.clone().unwrap_or_else(|| "Case".to_owned()))
        .collect();
    out.problems.push(format!(
        "type {}: parent changed from {} to {}, which {moved} of its {count} record(s) would no longer fit",
        ty.name,
        was.join(", "),
        declared_parent.as_deref().unwrap_or("Case")
    ));
    out.commands.push(format!("baton schema drop {}", ty.name));
}

/// The stored fields of one type against its declared fields, counted by
/// field name.
#[derive(Default)]
struct FieldTally {
    /// Values in fields no longer declared.
    unknown: BTreeMap<String, usize>,
    /// Values that no longer fit their field.
    misfits: BTreeMap<String, usize>,
    /// Required fields without a value or a default.
    missing: BTreeMap<String, usize>,
    /// Every field some record has.
    seen_fields: BTreeSet<String>,
    /// Unique within one case: (field → (case, value) → records).
    values: BTreeMap<String, BTreeMap<(i64, String), usize>>,
}

impl FieldTally {
    fn of(ty: &RecordType, rows: &[(CaseId, Option<String>, String)]) -> FieldTally {
        let mut tally = FieldTally::default();
        for (case_id, _, fields) in rows {
            let Ok(Value::Object(map)) = serde_json::from_str::<Value>(fields) else {
                *tally.misfits.entry("(all fields)".into()).or_default() += 1;
                continue;
            };
            for (name, value) in &map {
                tally.count_value(ty, *case_id, name, value);
            }
            for name in &ty.required {
                let given = map.get(name).is_some_and(|v| !v.is_null());
                let has_default = ty
                    .field(name)
                    .is_some_and(|f| f.schema.get("default").is_some());
                if !given && !has_default {
                    *tally.missing.entry(name.clone()).or_default() += 1;
                }
            }
        }
        tally
    }

    fn count_value(&mut self, ty: &RecordType, case_id: CaseId, name: &str, value: &Value) {
        self.seen_fields.insert(name.to_owned());
        match ty.field(name) {
            None if !value.is_null() => *self.unknown.entry(name.to_owned()).or_default() += 1,
            None => {}
            Some(_) if value.is_null() => {}
            Some(_) if !ty.value_fits(name, value) => {
                *self.misfits.entry(name.to_owned()).or_default() += 1
            }
            Some(_) if ty.unique.iter().any(|u| u == name) => {
                *self
                    .values
                    .entry(name.to_owned())
                    .or_default()
                    .entry((case_id.get(), value.to_string()))
                    .or_default() += 1;
            }
            Some(_) => {}
        }
    }

    fn report(self, ty: &RecordType, out: &mut Comparison) {
        for (field, n) in self.unknown {
            out.problems.push(format!(
                "type {}: field {field} is no longer declared, but {n} record(s) hold a value in it",
                ty.name
            ));
            out.commands
                .push(format!("baton schema drop {}.{field}", ty.name));
        }
        for (field, n) in self.misfits {
            out.problems.push(format!(
                "type {}: field {field} changed, and {n} record(s) hold values that no longer fit it",
                ty.name
            ));
            out.commands
                .push(format!("baton schema drop {}.{field}", ty.name));
        }
        for (field, n) in self.missing {
            out.problems.push(format!(
                "type {}: field {field} is required without a default, and {n} record(s) have no value in it (give it a default)",
                ty.name
            ));
        }
        for (field, counted) in self.values {
            let records: usize = counted.values().filter(|n| **n > 1).sum();
            if records > 0 {
                out.problems.push(format!(
                    "type {}: field {field} is unique within a case, but {records} record(s) share a value with another record of their case",
                    ty.name
                ));
            }
        }
        for field in &ty.fields {
            if !self.seen_fields.contains(&field.name) {
                out.changes
                    .push(format!("field {}.{} (new)", ty.name, field.name));
            }
        }
    }
}

/// `baton schema drop TYPE`: deletes every stored record of the type (and
/// the locks, lines and nothing else). `TYPE.FIELD`: removes the field's
/// values from every record of the type. Returns how many records changed.
pub fn drop(conn: &mut DbConn, what: &str) -> QueryResult<usize> {
    use crate::db::schema::{lock_waiters, locks};
    match what.split_once('.') {
        None => conn.transaction(|conn| {
            diesel::delete(locks::table.filter(locks::lockable_type.eq(what))).execute(conn)?;
            diesel::delete(lock_waiters::table.filter(lock_waiters::lockable_type.eq(what)))
                .execute(conn)?;
            diesel::delete(records::table.filter(records::record_type.eq(what))).execute(conn)
        }),
        Some((type_name, field)) => conn.transaction(|conn| {
            let rows: Vec<(crate::models::RecordId, String)> = records::table
                .filter(records::record_type.eq(type_name))
                .select((records::id, records::fields))
                .load(conn)?;
            let mut changed = 0;
            for (id, fields) in rows {
                let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&fields) else {
                    continue;
                };
                if map.remove(field).is_some() {
                    diesel::update(records::table.find((type_name, id)))
                        .set(records::fields.eq(Value::Object(map).to_string()))
                        .execute(conn)?;
                    changed += 1;
                }
            }
            Ok(changed)
        }),
    }
}

/// The unique indexes `unique` fields need, made at start (and those of
/// fields no longer unique dropped), so that two records created at the
/// same moment cannot share a value. Checked by [`compare`] first.
pub fn apply_unique_indexes(conn: &mut DbConn, schema: &Schema) -> QueryResult<()> {
    use diesel::connection::SimpleConnection;
    #[derive(QueryableByName)]
    struct Index {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let mut wanted = BTreeMap::new();
    for ty in schema.types() {
        for field in &ty.unique {
            let name = format!(
                "records_unique_{}_{}",
                ty.name.to_lowercase(),
                field.to_lowercase()
            );
            wanted.insert(name, (ty.name.clone(), field.clone()));
        }
    }
    let existing: Vec<Index> = crate::on_backend!(conn,
        postgres: |c| diesel::sql_query(
            "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'records' \
             AND indexname LIKE 'records_unique_%'",
        )
        .load(c),
        sqlite: |c| diesel::sql_query(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' \
             AND name LIKE 'records_unique_%'",
        )
        .load(c),
    )?;
    for index in &existing {
        if !wanted.contains_key(&index.name) {
            // Names are baton's own (`records_unique_…`), never a client's.
            conn.batch_execute(&format!("DROP INDEX IF EXISTS {}", index.name))?;
        }
    }
    for (name, (type_name, field)) in wanted {
        // Type and field names are declared ones (letters, digits, `_`).
        let sql = match conn {
            DbConn::Postgresql(_) => format!(
                "CREATE UNIQUE INDEX IF NOT EXISTS {name} ON records \
                 (case_id, ((fields::jsonb) -> '{field}')) WHERE record_type = '{type_name}'"
            ),
            DbConn::Sqlite(_) => format!(
                "CREATE UNIQUE INDEX IF NOT EXISTS {name} ON records \
                 (case_id, json_extract(fields, '$.{field}')) WHERE record_type = '{type_name}'"
            ),
        };
        conn.batch_execute(&sql)?;
    }
    Ok(())
}

/// How many records of each type the database holds, for the start-up
/// comparison of the schema with the data.
fn counts_by_type(conn: &mut DbConn) -> QueryResult<Vec<(String, i64)>> {
    use diesel::dsl::count_star;
    records::table
        .group_by(records::record_type)
        .select((records::record_type, count_star()))
        .order(records::record_type.asc())
        .load(conn)
}

/// Every stored `(case, parent_type, fields)` of one type, for the start-up
/// comparison (fields as stored JSON text).
fn stored_of_type(
    conn: &mut DbConn,
    type_name: &str,
) -> QueryResult<Vec<(CaseId, Option<String>, String)>> {
    records::table
        .filter(records::record_type.eq(type_name))
        .select((records::case_id, records::parent_type, records::fields))
        .load(conn)
}

/// The ids of the parent rows that a `parent_id` names and that do not
/// exist (orphans), for the start-up check. Rarely non-empty.
fn orphans(conn: &mut DbConn, type_name: &str) -> QueryResult<i64> {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    const ORPHANS: &str = "SELECT COUNT(*) AS n FROM records r WHERE r.record_type = $1 \
         AND r.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM records p \
         WHERE p.record_type = r.parent_type AND p.id = r.parent_id)";
    let found: Count = crate::on_backend!(conn, |c| diesel::sql_query(ORPHANS)
        .bind::<Text, _>(type_name)
        .get_result(c))?;
    Ok(found.n)
}
