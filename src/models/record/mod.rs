//! Records of the declared types (the schema file): one table for every
//! type, a record's declared fields one JSON object. The type's descriptor
//! (`crate::schema::RecordType`) says what the fields are; this module only
//! stores and finds them; `ordering` places them among their siblings and
//! `tree` walks what is inside a record.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::db::schema::records;
use crate::db::DbConn;
use crate::models::{CaseId, RecordId, TargetId};
use crate::schema::{self, RecordType};

mod ordering;
mod tree;

use ordering::{make_room, next_position};

/// A row of `records` as stored. (`Serialize`/`Deserialize`: the fast
/// save's event rows carry it as JSON.)
#[derive(
    Queryable, QueryableByName, Selectable, Clone, Debug, PartialEq, Serialize, Deserialize,
)]
#[diesel(table_name = records)]
pub struct RecordRow {
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
pub struct StoredRecord {
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
    pub ancestors: Vec<TargetId>,
}

/// What identifies a stored record: its type and id ("Ticket 12").
#[derive(Clone, Copy, Debug)]
pub struct StoredKey {
    pub ty: &'static RecordType,
    pub id: RecordId,
}

impl std::fmt::Display for StoredKey {
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

pub use crate::schema::body::MAX_POSITION;

/// A change to a record's own columns and fields.
#[derive(Clone, Debug, Default)]
pub struct RecordChanges {
    /// The declared fields given, validated.
    pub fields: Map<String, Value>,
    pub position: Option<i32>,
    /// A move: the new parent's id (movable types).
    pub parent_id: Option<i64>,
}

impl StoredRecord {
    pub fn key(&self) -> StoredKey {
        StoredKey {
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
    pub fn shallow(row: RecordRow) -> Option<StoredRecord> {
        let ty = schema::in_force().get(&row.record_type)?;
        let fields = match serde_json::from_str::<Value>(&row.fields) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let ancestors = match (ty.parent.as_deref(), row.parent_id) {
            (Some(parent), Some(parent_id)) => schema::in_force()
                .get(parent)
                .map(|p| {
                    vec![TargetId {
                        type_name: p.name.as_str(),
                        id: parent_id,
                    }]
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        Some(StoredRecord {
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
    pub fn read(conn: &mut DbConn, row: RecordRow) -> QueryResult<Option<StoredRecord>> {
        let Some(mut record) = StoredRecord::shallow(row) else {
            return Ok(None);
        };
        let schema = schema::in_force();
        let mut level = record.ancestors.first().copied();
        while let Some(TargetId { type_name, id }) = level {
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
            let grand = TargetId {
                type_name: grand_ty.name.as_str(),
                id: grand_id,
            };
            record.ancestors.push(grand);
            level = Some(grand);
        }
        Ok(Some(record))
    }

    pub fn find(conn: &mut DbConn, key: StoredKey) -> QueryResult<Option<StoredRecord>> {
        let row = records::table
            .find((key.ty.name.as_str(), key.id))
            .select(RecordRow::as_select())
            .get_result(conn)
            .optional()?;
        match row {
            Some(row) => StoredRecord::read(conn, row),
            None => Ok(None),
        }
    }

    /// Like `find`, the row locked until the transaction ends (PostgreSQL;
    /// see "Row-lock order" in `crate::locks`).
    pub fn find_for_update(conn: &mut DbConn, key: StoredKey) -> QueryResult<Option<StoredRecord>> {
        let row: Option<RecordRow> = crate::select_one_for_no_key_update!(
            conn,
            records::table
                .find((key.ty.name.as_str(), key.id))
                .select(RecordRow::as_select())
        )?;
        match row {
            Some(row) => StoredRecord::read(conn, row),
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
    ) -> QueryResult<Vec<StoredRecord>> {
        let ids: Vec<RecordId> = ids.iter().map(|&id| RecordId(id)).collect();
        macro_rules! by_ids {
            () => {
                records::table
                    .filter(records::record_type.eq(ty.name.as_str()))
                    .filter(records::id.eq_any(ids.clone()))
                    .order(records::id.asc())
                    .select(RecordRow::as_select())
            };
        }
        let rows: Vec<RecordRow> = match conn {
            DbConn::Postgresql(c) if for_update => by_ids!().for_no_key_update().load(c)?,
            _ => by_ids!().load(conn)?,
        };
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            found.extend(StoredRecord::read(conn, row)?);
        }
        Ok(found)
    }

    /// Every record of a case, of every type in force, ordered types by
    /// position, the others by id: what `GET /cases/:slug` nests.
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<StoredRecord>> {
        let rows: Vec<RecordRow> = records::table
            .filter(records::case_id.eq(case_id))
            .order((records::position.asc(), records::id.asc()))
            .select(RecordRow::as_select())
            .load(conn)?;
        // Nesting needs no ancestors beyond the parent.
        Ok(rows.into_iter().filter_map(StoredRecord::shallow).collect())
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
    ) -> QueryResult<(StoredRecord, Vec<StoredRecord>)> {
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
            .get_result::<RecordRow>(conn)?;
        let record = StoredRecord::read(conn, row)?.ok_or(diesel::result::Error::NotFound)?;
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
    ) -> QueryResult<(StoredRecord, Vec<StoredRecord>)> {
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
            .get_result::<RecordRow>(conn)?;
        let record = StoredRecord::read(conn, row)?.ok_or(diesel::result::Error::NotFound)?;
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
