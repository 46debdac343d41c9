//! Keeping the stream small: where it ends, and what every listener has
//! read — rows that only carried a frame go, audit rows lose their frame.

use diesel::prelude::*;

use super::OUTBOX_RETENTION;
use crate::clock;
use crate::db::schema::events;
use crate::db::DbConn;

/// The id the next event row will have at the earliest: where a listener
/// starting now begins.
pub fn outbox_end(conn: &mut DbConn) -> QueryResult<i64> {
    let last: Option<i64> = events::table
        .select(diesel::dsl::max(events::id))
        .get_result(conn)?;
    Ok(last.unwrap_or(0) + 1)
}

/// Most audit rows whose frame one beat clears: small batches, so no beat
/// holds many rows.
const CLEAR_BATCH: i64 = 1000;

/// Once every listener has read them: deletes the rows that only carried a
/// frame, and clears the frame of audit rows (the trail keeps its own
/// columns only), a batch of the oldest at a time.
pub fn prune_outbox(conn: &mut DbConn, now: chrono::NaiveDateTime) -> QueryResult<usize> {
    let deleted = delete_delivered_frames(conn, now)?;
    let cleared = clear_delivered_audit_frames(conn, now)?;
    Ok(deleted + cleared)
}

/// Clears the frames of the oldest audit rows that every listener has read.
/// The partial index on the rows still carrying one finds them in id order.
fn clear_delivered_audit_frames(
    conn: &mut DbConn,
    now: chrono::NaiveDateTime,
) -> QueryResult<usize> {
    let cutoff = clock::before(now, OUTBOX_RETENTION);
    let oldest: Vec<i64> = events::table
        .select(events::id)
        .filter(events::action.is_not_null())
        .filter(events::payload.is_not_null())
        .filter(events::at.lt(cutoff))
        .order(events::id.asc())
        .limit(CLEAR_BATCH)
        .load(conn)?;
    if oldest.is_empty() {
        return Ok(0);
    }
    diesel::update(events::table.filter(events::id.eq_any(&oldest)))
        .set(events::payload.eq(None::<String>))
        .execute(conn)
}

/// Deletes the rows that only carried a frame, once every listener has read
/// them: every such row below the first one young enough to keep. Audit
/// rows stay. Ids grow with time, so the partial index on the frame rows'
/// ids finds them, reading only rows it deletes; `at` needs no index of its
/// own, which every write would pay for.
fn delete_delivered_frames(conn: &mut DbConn, now: chrono::NaiveDateTime) -> QueryResult<usize> {
    let cutoff = clock::before(now, OUTBOX_RETENTION);
    let first_kept: Option<i64> = events::table
        .select(events::id)
        .filter(events::action.is_null())
        .filter(events::at.ge(cutoff))
        .order(events::id.asc())
        .limit(1)
        .get_result(conn)
        .optional()?;
    let stale = events::action.is_null().and(events::at.lt(cutoff));
    match first_kept {
        // The index bounds the scan. The age is checked too: a row below
        // `id` may have committed since the query above (ids are taken
        // before commit), young as it is.
        Some(id) => {
            diesel::delete(events::table.filter(events::id.lt(id)).filter(stale)).execute(conn)
        }
        // Nothing young enough to keep: every stale row may go.
        None => diesel::delete(events::table.filter(stale)).execute(conn),
    }
}
