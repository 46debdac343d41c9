//! Records of the declared types (the schema file): one table for every
//! type, a record's declared fields one JSON object. The type's descriptor
//! (`crate::schema::RecordType`) says what the fields are; this module only
//! stores and finds them, places them among their siblings and walks the
//! tree of parents.

use chrono::NaiveDateTime;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::db::schema::records;
use crate::db::DbConn;
use crate::models::{CaseId, RecordId};
use crate::schema::{self, RecordType};

/// A row of `records` as stored. (`Serialize`/`Deserialize`: the fast
/// save's event rows carry it as JSON.)
#[derive(
    Queryable, QueryableByName, Selectable, Clone, Debug, PartialEq, Serialize, Deserialize,
)]
#[diesel(table_name = records)]
pub struct StoredRecord {
    pub record_type: String,
    pub id: RecordId,
    pub case_id: CaseId,
    pub parent_type: Option<String>,
    pub parent_id: Option<i64>,
    pub position: Option<i32>,
    pub fields: String,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

/// A record of a declared type, its fields read.
#[derive(Clone, Debug)]
pub struct DeclaredRecord {
    pub ty: &'static RecordType,
    pub id: RecordId,
    pub case_id: CaseId,
    /// The parent record's id; `None` when its parent is the case.
    pub parent_id: Option<i64>,
    /// Its place among its siblings (ordered types only).
    pub position: Option<i32>,
    /// The declared fields, in declaration order.
    pub fields: Map<String, Value>,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// The records it sits in below its case, innermost first (a card's
    /// page): whose deep locks cover it.
    pub ancestors: Vec<(&'static str, i64)>,
}

/// What identifies a declared record: its type and id ("Ticket 12").
#[derive(Clone, Copy, Debug)]
pub struct RecordKey {
    pub ty: &'static RecordType,
    pub id: RecordId,
}

impl std::fmt::Display for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.ty.name, self.id)
    }
}

/// Where a record sits: its case and, below the case, its parent record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub case_id: CaseId,
    pub parent_id: Option<i64>,
}

/// The largest `position` a request may give: far below `i32::MAX`, so
/// that moving siblings up to make room never runs out of numbers.
pub const MAX_POSITION: i32 = 1_000_000_000;

/// A change to a record's own columns and fields.
#[derive(Clone, Debug, Default)]
pub struct RecordChanges {
    /// The declared fields given, validated.
    pub fields: Map<String, Value>,
    pub position: Option<i32>,
    /// A move: the new parent's id (movable types).
    pub parent_id: Option<i64>,
}

impl DeclaredRecord {
    pub fn key(&self) -> RecordKey {
        RecordKey {
            ty: self.ty,
            id: self.id,
        }
    }

    pub fn place(&self) -> Place {
        Place {
            case_id: self.case_id,
            parent_id: self.parent_id,
        }
    }

    /// A stored row of a type of the schema in force, without its
    /// ancestors beyond its parent (enough to render it). `None` for a type
    /// the schema does not declare.
    pub fn shallow(row: StoredRecord) -> Option<DeclaredRecord> {
        let ty = schema::in_force().get(&row.record_type)?;
        let fields = match serde_json::from_str::<Value>(&row.fields) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let ancestors = match (ty.parent.as_deref(), row.parent_id) {
            (Some(parent), Some(parent_id)) => schema::in_force()
                .get(parent)
                .map(|p| vec![(p.name.as_str(), parent_id)])
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        Some(DeclaredRecord {
            ty,
            id: row.id,
            case_id: row.case_id,
            parent_id: row.parent_id,
            position: row.position,
            fields: ty.with_every_field(fields),
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
            ancestors,
        })
    }

    /// A stored row with every record it sits in (one query per level past
    /// its parent: the parents' own parents are in their rows).
    pub fn read(conn: &mut DbConn, row: StoredRecord) -> QueryResult<Option<DeclaredRecord>> {
        let Some(mut record) = DeclaredRecord::shallow(row) else {
            return Ok(None);
        };
        let schema = schema::in_force();
        let mut level = record.ancestors.first().copied();
        while let Some((type_name, id)) = level {
            let Some(grand) = schema.get(type_name).and_then(|t| t.parent.as_deref()) else {
                break;
            };
            let up: Option<Option<i64>> = records::table
                .find((type_name, RecordId(id)))
                .select(records::parent_id)
                .get_result(conn)
                .optional()?;
            let (Some(grand_ty), Some(grand_id)) = (schema.get(grand), up.flatten()) else {
                break;
            };
            record.ancestors.push((grand_ty.name.as_str(), grand_id));
            level = Some((grand_ty.name.as_str(), grand_id));
        }
        Ok(Some(record))
    }

    pub fn find(conn: &mut DbConn, key: RecordKey) -> QueryResult<Option<DeclaredRecord>> {
        let row = records::table
            .find((key.ty.name.as_str(), key.id))
            .select(StoredRecord::as_select())
            .get_result(conn)
            .optional()?;
        match row {
            Some(row) => DeclaredRecord::read(conn, row),
            None => Ok(None),
        }
    }

    /// Like `find`, the row locked until the transaction ends (PostgreSQL;
    /// see "Row-lock order" in `crate::locks`).
    pub fn find_for_update(
        conn: &mut DbConn,
        key: RecordKey,
    ) -> QueryResult<Option<DeclaredRecord>> {
        let row: Option<StoredRecord> = crate::select_one_for_no_key_update!(
            conn,
            records::table
                .find((key.ty.name.as_str(), key.id))
                .select(StoredRecord::as_select())
        )?;
        match row {
            Some(row) => DeclaredRecord::read(conn, row),
            None => Ok(None),
        }
    }

    /// The records of one type with these ids, by id, in one query; with
    /// `for_update` their rows are locked in id order (PostgreSQL).
    pub fn find_all(
        conn: &mut DbConn,
        ty: &'static RecordType,
        ids: &[i64],
        for_update: bool,
    ) -> QueryResult<Vec<DeclaredRecord>> {
        let ids: Vec<RecordId> = ids.iter().map(|&id| RecordId(id)).collect();
        macro_rules! by_ids {
            () => {
                records::table
                    .filter(records::record_type.eq(ty.name.as_str()))
                    .filter(records::id.eq_any(ids.clone()))
                    .order(records::id.asc())
                    .select(StoredRecord::as_select())
            };
        }
        let rows: Vec<StoredRecord> = match conn {
            DbConn::Postgresql(c) if for_update => by_ids!().for_no_key_update().load(c)?,
            _ => by_ids!().load(conn)?,
        };
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            found.extend(DeclaredRecord::read(conn, row)?);
        }
        Ok(found)
    }

    /// Every record of a case, of every type in force, ordered types by
    /// position, the others by id: what `GET /cases/:slug` nests.
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<DeclaredRecord>> {
        let rows: Vec<StoredRecord> = records::table
            .filter(records::case_id.eq(case_id))
            .order((records::position.asc(), records::id.asc()))
            .select(StoredRecord::as_select())
            .load(conn)?;
        // Nesting needs no ancestors beyond the parent.
        Ok(rows
            .into_iter()
            .filter_map(DeclaredRecord::shallow)
            .collect())
    }

    /// Everything inside record `(type, id)` at any depth, as `(type, id)`,
    /// parents before their children; the record itself left out. One
    /// recursive query on either backend.
    pub fn descendants(
        conn: &mut DbConn,
        type_name: &str,
        id: i64,
    ) -> QueryResult<Vec<(String, i64)>> {
        #[derive(QueryableByName)]
        struct Inside {
            #[diesel(sql_type = Text)]
            record_type: String,
            #[diesel(sql_type = BigInt)]
            id: i64,
        }
        const INSIDE: &str = "WITH RECURSIVE inside(record_type, id, depth) AS ( \
               SELECT r.record_type, r.id, 1 FROM records r \
                WHERE r.parent_type = $1 AND r.parent_id = $2 \
               UNION ALL \
               SELECT r.record_type, r.id, i.depth + 1 FROM records r \
                 JOIN inside i ON r.parent_type = i.record_type AND r.parent_id = i.id) \
             SELECT record_type, id FROM inside ORDER BY depth, record_type, id";
        let rows: Vec<Inside> = crate::on_backend!(conn, |c| diesel::sql_query(INSIDE)
            .bind::<Text, _>(type_name)
            .bind::<BigInt, _>(id)
            .load(c))?;
        Ok(rows.into_iter().map(|r| (r.record_type, r.id)).collect())
    }

    /// Before record `(type, id)` is deleted with everything inside it:
    /// takes its row and every descendant's `FOR UPDATE` (PostgreSQL), a
    /// level at a time until no new one appeared, so that a record being
    /// added inside meanwhile either lands before (and is found) or waits
    /// and then finds its parent gone. Returns the descendants.
    pub fn lock_subtree(
        conn: &mut DbConn,
        type_name: &str,
        id: i64,
    ) -> QueryResult<Vec<(String, i64)>> {
        DeclaredRecord::lock_rows(conn, &[(type_name.to_owned(), id)])?;
        let mut locked: Vec<(String, i64)> = Vec::new();
        loop {
            let inside = DeclaredRecord::descendants(conn, type_name, id)?;
            let new: Vec<(String, i64)> = inside
                .iter()
                .filter(|key| !locked.contains(key))
                .cloned()
                .collect();
            if new.is_empty() || !matches!(conn, DbConn::Postgresql(_)) {
                return Ok(inside);
            }
            DeclaredRecord::lock_rows(conn, &new)?;
            locked.extend(new);
        }
    }

    /// Like `find`, the row read `FOR KEY SHARE` (PostgreSQL): a parent a
    /// record is added to, which its delete (`FOR UPDATE`) waits for.
    pub fn find_for_key_share(
        conn: &mut DbConn,
        key: RecordKey,
    ) -> QueryResult<Option<DeclaredRecord>> {
        macro_rules! by_key {
            () => {
                records::table
                    .find((key.ty.name.as_str(), key.id))
                    .select(StoredRecord::as_select())
            };
        }
        let row: Option<StoredRecord> = crate::on_backend!(conn,
            postgres: |c| by_key!().for_key_share().get_result(c).optional(),
            sqlite: |c| by_key!().get_result(c).optional(),
        )?;
        match row {
            Some(row) => DeclaredRecord::read(conn, row),
            None => Ok(None),
        }
    }

    /// Locks the rows of these records in (type, id) order (PostgreSQL).
    fn lock_rows(conn: &mut DbConn, keys: &[(String, i64)]) -> QueryResult<()> {
        let DbConn::Postgresql(pg) = conn else {
            return Ok(());
        };
        let mut sorted: Vec<&(String, i64)> = keys.iter().collect();
        sorted.sort();
        for (type_name, id) in sorted {
            records::table
                .find((type_name.as_str(), RecordId(*id)))
                .select(records::id)
                .for_update()
                .execute(pg)?;
        }
        Ok(())
    }

    /// Deletes these records (a deleted record's descendants).
    pub fn delete_all(conn: &mut DbConn, keys: &[(String, i64)]) -> QueryResult<()> {
        for (type_name, id) in keys {
            diesel::delete(records::table.find((type_name.as_str(), RecordId(*id))))
                .execute(conn)?;
        }
        Ok(())
    }

    pub fn delete(&self, conn: &mut DbConn) -> QueryResult<()> {
        diesel::delete(records::table.find((self.ty.name.as_str(), self.id)))
            .execute(conn)
            .map(|_| ())
    }

    /// Whether another record of the type in `case_id` has `value` in field
    /// `field` (declared `unique`). The field name is a declared one, never
    /// a client's string.
    pub fn value_taken(
        conn: &mut DbConn,
        ty: &RecordType,
        case_id: CaseId,
        field: &str,
        value: &Value,
        except: Option<RecordId>,
    ) -> QueryResult<bool> {
        #[derive(QueryableByName)]
        struct Found {
            #[diesel(sql_type = BigInt)]
            id: i64,
        }
        let json = value.to_string();
        let except = except.map_or(-1, RecordId::get);
        let found: Vec<Found> = crate::on_backend!(conn,
            postgres: |c| diesel::sql_query(format!(
                "SELECT id FROM records WHERE record_type = $1 AND case_id = $2 \
                 AND (fields::jsonb -> '{field}') = $3::jsonb AND id <> $4 LIMIT 1"
            ))
            .bind::<Text, _>(&ty.name)
            .bind::<BigInt, _>(case_id)
            .bind::<Text, _>(&json)
            .bind::<BigInt, _>(except)
            .load(c),
            sqlite: |c| diesel::sql_query(format!(
                "SELECT id FROM records WHERE record_type = ? AND case_id = ? \
                 AND json_extract(fields, '$.{field}') = json_extract(?, '$') AND id <> ? LIMIT 1"
            ))
            .bind::<Text, _>(&ty.name)
            .bind::<BigInt, _>(case_id)
            .bind::<Text, _>(&json)
            .bind::<BigInt, _>(except)
            .load(c),
        )?;
        Ok(found.first().is_some_and(|f| f.id != except))
    }

    /// Creates a record at `place`: the next id of its type, the end of its
    /// siblings unless `position` is given (a sibling there moves up, with
    /// the ones after it). Returns it and the siblings that moved.
    pub fn create(
        conn: &mut DbConn,
        ty: &'static RecordType,
        place: Place,
        fields: Map<String, Value>,
        position: Option<i32>,
        now: NaiveDateTime,
    ) -> QueryResult<(DeclaredRecord, Vec<DeclaredRecord>)> {
        let id = next_id(conn, &ty.name)?;
        let (position, moved) = if ty.ordered {
            let moved = match position {
                Some(p) => make_room(conn, ty, place, p, None)?,
                None => Vec::new(),
            };
            let position = match position {
                Some(p) => p,
                None => next_position(conn, ty, place)?,
            };
            (Some(position), moved)
        } else {
            (None, Vec::new())
        };
        let row = diesel::insert_into(records::table)
            .values((
                records::record_type.eq(ty.name.as_str()),
                records::id.eq(RecordId(id)),
                records::case_id.eq(place.case_id),
                records::parent_type.eq(ty.parent.as_deref()),
                records::parent_id.eq(place.parent_id),
                records::position.eq(position),
                records::fields.eq(Value::Object(fields).to_string()),
                records::version.eq(1),
                records::created_at.eq(now),
                records::updated_at.eq(now),
            ))
            .returning(records::all_columns)
            .get_result::<StoredRecord>(conn)?;
        let record = DeclaredRecord::read(conn, row)?.ok_or(diesel::result::Error::NotFound)?;
        Ok((record, moved))
    }

    /// Applies `changes` and increments `version`; a move goes to the end
    /// of its new siblings unless a position is given. The caller has read
    /// the row for update, so `self.version` is current. Returns the record
    /// and the siblings that moved up to make room.
    pub fn update(
        &self,
        conn: &mut DbConn,
        changes: RecordChanges,
        now: NaiveDateTime,
    ) -> QueryResult<(DeclaredRecord, Vec<DeclaredRecord>)> {
        let mut fields = self.fields.clone();
        fields.extend(changes.fields);
        let place = Place {
            case_id: self.case_id,
            parent_id: changes.parent_id.or(self.parent_id),
        };
        let moving = place != self.place();
        let mut moved = Vec::new();
        let position = if self.ty.ordered {
            match changes.position {
                Some(p) => {
                    moved = make_room(conn, self.ty, place, p, Some(self.id))?;
                    Some(p)
                }
                None if moving => Some(next_position(conn, self.ty, place)?),
                None => self.position,
            }
        } else {
            None
        };
        let row = diesel::update(records::table.find((self.ty.name.as_str(), self.id)))
            .set((
                records::parent_id.eq(place.parent_id),
                records::position.eq(position),
                records::fields.eq(Value::Object(fields).to_string()),
                records::version.eq(self.version + 1),
                records::updated_at.eq(now),
            ))
            .returning(records::all_columns)
            .get_result::<StoredRecord>(conn)?;
        let record = DeclaredRecord::read(conn, row)?.ok_or(diesel::result::Error::NotFound)?;
        Ok((record, moved))
    }
}

/// The next id of a type: one more than any it ever had (`record_ids`).
fn next_id(conn: &mut DbConn, type_name: &str) -> QueryResult<i64> {
    #[derive(QueryableByName)]
    struct Next {
        #[diesel(sql_type = BigInt)]
        last_id: i64,
    }
    const NEXT: &str = "INSERT INTO record_ids (record_type, last_id) VALUES ($1, 1) \
         ON CONFLICT (record_type) DO UPDATE SET last_id = record_ids.last_id + 1 \
         RETURNING last_id";
    let next: Next = crate::on_backend!(conn, |c| diesel::sql_query(NEXT)
        .bind::<Text, _>(type_name)
        .get_result(c))?;
    Ok(next.last_id)
}

/// The position after the last sibling at `place`.
fn next_position(conn: &mut DbConn, ty: &RecordType, place: Place) -> QueryResult<i32> {
    let last: Option<i32> = match place.parent_id {
        Some(parent_id) => records::table
            .filter(records::record_type.eq(ty.name.as_str()))
            .filter(records::parent_id.eq(parent_id))
            .select(max(records::position))
            .get_result(conn)?,
        None => records::table
            .filter(records::record_type.eq(ty.name.as_str()))
            .filter(records::case_id.eq(place.case_id))
            .select(max(records::position))
            .get_result(conn)?,
    };
    Ok(last.map_or(0, |p| p.saturating_add(1)))
}

/// Siblings never share a position: when one at `place` holds `position`,
/// it and every sibling after it move up by one. Returns those that moved.
fn make_room(
    conn: &mut DbConn,
    ty: &RecordType,
    place: Place,
    position: i32,
    except: Option<RecordId>,
) -> QueryResult<Vec<DeclaredRecord>> {
    let except = except.unwrap_or(RecordId(-1));
    macro_rules! siblings {
        () => {
            records::table
                .filter(records::record_type.eq(ty.name.as_str()))
                .filter(records::case_id.eq(place.case_id))
                .filter(records::id.ne(except))
        };
    }
    let taken: i64 = match place.parent_id {
        Some(parent_id) => siblings!()
            .filter(records::parent_id.eq(parent_id))
            .filter(records::position.eq(position))
            .count()
            .get_result(conn)?,
        None => siblings!()
            .filter(records::parent_id.is_null())
            .filter(records::position.eq(position))
            .count()
            .get_result(conn)?,
    };
    if taken == 0 {
        return Ok(Vec::new());
    }
    let rows: Vec<StoredRecord> = match place.parent_id {
        Some(parent_id) => diesel::update(
            siblings!()
                .filter(records::parent_id.eq(parent_id))
                .filter(records::position.ge(position)),
        )
        .set(records::position.eq(records::position + 1))
        .returning(records::all_columns)
        .load(conn)?,
        None => diesel::update(
            siblings!()
                .filter(records::parent_id.is_null())
                .filter(records::position.ge(position)),
        )
        .set(records::position.eq(records::position + 1))
        .returning(records::all_columns)
        .load(conn)?,
    };
    let mut moved = Vec::with_capacity(rows.len());
    for row in rows {
        moved.extend(DeclaredRecord::read(conn, row)?);
    }
    moved.sort_by_key(|r| (r.position, r.id));
    Ok(moved)
}

/// How many records of each type the database holds, for the start-up
/// comparison of the schema with the data.
pub fn counts_by_type(conn: &mut DbConn) -> QueryResult<Vec<(String, i64)>> {
    use diesel::dsl::count_star;
    records::table
        .group_by(records::record_type)
        .select((records::record_type, count_star()))
        .order(records::record_type.asc())
        .load(conn)
}

/// Every stored `(case, parent_type, fields)` of one type, for the start-up
/// comparison (fields as stored JSON text).
pub fn stored_of_type(
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
pub fn orphans(conn: &mut DbConn, type_name: &str) -> QueryResult<i64> {
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
