//! Where a record sits among its siblings (ordered types): the end of the
//! line, and making room when one is put at a taken position.

use diesel::dsl::max;
use diesel::prelude::*;

use super::{Place, RecordRow, StoredRecord};
use crate::db::schema::records;
use crate::db::DbConn;
use crate::models::RecordId;
use crate::schema::RecordType;

/// The position after the last sibling at `place`.
pub(super) fn next_position(conn: &mut DbConn, ty: &RecordType, place: Place) -> QueryResult<i32> {
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
pub(super) fn make_room(
    conn: &mut DbConn,
    ty: &RecordType,
    place: Place,
    position: i32,
    except: Option<RecordId>,
) -> QueryResult<Vec<StoredRecord>> {
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
    let rows: Vec<RecordRow> = match place.parent_id {
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
        moved.extend(StoredRecord::read(conn, row)?);
    }
    moved.sort_by_key(|r| (r.position, r.id));
    Ok(moved)
}
