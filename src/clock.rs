//! Time as baton stores it: UTC, truncated to whole microseconds so that a
//! value read back from PostgreSQL equals the one written, and SQLite's text
//! timestamps keep comparing in time order.

use chrono::{DateTime, NaiveDateTime, SubsecRound, Utc};
use std::time::Duration;

/// The current UTC time as stored in the database.
pub fn now() -> NaiveDateTime {
    Utc::now().naive_utc().trunc_subsecs(6)
}

/// `t + d`, saturating far in the future instead of overflowing.
pub fn after(t: NaiveDateTime, d: Duration) -> NaiveDateTime {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(NaiveDateTime::MAX)
}

/// `t - d`, saturating far in the past.
pub fn before(t: NaiveDateTime, d: Duration) -> NaiveDateTime {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_sub_signed(d))
        .unwrap_or(NaiveDateTime::MIN)
}

/// A stored timestamp as it appears in JSON: RFC 3339 with a `Z`.
pub fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}
