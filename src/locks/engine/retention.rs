//! How long the audit trail is kept: `BATON_AUDIT_RETENTION` (the reaper
//! deletes what is older, a small batch a tick) and `baton audit prune
//! --before DATE` (all of it once, batch by batch).
//!
//! Each batch is its own short transaction: deleting a long trail never
//! holds SQLite's single writer, or PostgreSQL's row locks, for long.

use std::time::Duration;

use chrono::NaiveDateTime;

use crate::clock;
use crate::db::{Database, Tx};
use crate::error::AppResult;
use crate::models::LockEvent;

/// Audit rows looked at (and at most deleted) per transaction.
pub const BATCH: i64 = 500;

/// What the trail keeps.
#[derive(Clone, Copy, Debug)]
pub struct AuditRetention {
    /// Rows older than this go.
    pub keep: Duration,
    /// A row younger than this may still carry a frame a listener has not
    /// read (PostgreSQL's outbox): it stays until it is older.
    pub frames_live: Duration,
}

/// One batch of rows older than the retention; how many were deleted.
pub fn prune_due(tx: &mut Tx, retention: &AuditRetention) -> AppResult<usize> {
    let before = clock::before(tx.now, retention.keep);
    prune_batch(tx, before, retention.frames_live)
}

/// One batch of rows older than `before`; how many were deleted.
pub fn prune_batch(tx: &mut Tx, before: NaiveDateTime, frames_live: Duration) -> AppResult<usize> {
    let delivered_before = clock::before(tx.now, frames_live);
    Ok(LockEvent::delete_oldest_before(
        tx.conn,
        before,
        delivered_before,
        BATCH,
    )?)
}

/// Deletes every audit row older than `before`, batch by batch; how many.
pub async fn prune_before(
    db: &Database,
    before: NaiveDateTime,
    frames_live: Duration,
) -> AppResult<u64> {
    let mut deleted = 0u64;
    loop {
        let n = db
            .write(None, move |tx| prune_batch(tx, before, frames_live))
            .await?;
        if n == 0 {
            return Ok(deleted);
        }
        deleted += n as u64;
    }
}

/// `--before DATE`: an RFC 3339 date (`2026-08-01`, midnight UTC) or
/// date-time (`2026-08-01T12:00:00+02:00`); a date-time without an offset
/// is UTC.
pub fn parse_before(text: &str) -> Result<NaiveDateTime, String> {
    let text = text.trim();
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(at.naive_utc());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(at);
        }
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(day.and_time(chrono::NaiveTime::MIN));
    }
    Err(format!(
        "`{text}` is not a date: write an RFC 3339 date or date-time, like 2026-08-01 \
         or 2026-08-01T12:00:00Z (UTC when it has no offset)"
    ))
}

#[cfg(test)]
mod tests {
    use super::parse_before;

    #[test]
    fn dates_and_date_times_parse_as_utc() {
        let at = |s: &str| parse_before(s).unwrap().to_string();
        assert_eq!(at("2026-08-01"), "2026-08-01 00:00:00");
        assert_eq!(at("2026-08-01T12:30:00Z"), "2026-08-01 12:30:00");
        assert_eq!(at("2026-08-01T12:30:00+02:00"), "2026-08-01 10:30:00");
        assert_eq!(at("2026-08-01T12:30:00"), "2026-08-01 12:30:00");
        assert_eq!(at("2026-08-01 12:30:00.5"), "2026-08-01 12:30:00.500");
    }

    #[test]
    fn what_is_not_a_date_is_refused_with_an_example() {
        for bad in ["", "yesterday", "2026-13-01", "2026-08-01T25:00:00Z", "90d"] {
            let e = parse_before(bad).unwrap_err();
            assert!(e.contains("2026-08-01"), "{bad}: {e}");
        }
    }
}
