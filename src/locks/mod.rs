//! The lock engine: which records are lockable, acquiring, renewing,
//! releasing and overriding locks, the guard every lockable write goes
//! through, the reaper that ends expired and idle locks, and the audit
//! trail's retention.
//!
//! Row-lock order (PostgreSQL): a transaction that writes several of these
//! rows takes them as record (`FOR NO KEY UPDATE`, which lets the foreign-key
//! checks of inserts into the case go by; a case or page delete then takes
//! the record's strongest lock so that nothing new is cascaded away
//! unaudited), then `locks` rows, then `lock_waiters` rows, then
//! `presences` rows, each in id order. Paths that end several locks walk
//! them by id (a delete's own record lock, read by the guard, comes first);
//! multi-row UPDATEs first lock their rows with [`crate::lock_rows_in_order`].
//! Two transactions taking rows in opposite orders — a heartbeat renewing a
//! tab's lock while that tab's close deletes its presence, say — would
//! otherwise deadlock, and PostgreSQL would abort one.
//!
//! Deep locks (`subtree`): a deep acquire holds the `locks` table in SHARE
//! ROW EXCLUSIVE mode from its first statement, every other acquire in ROW
//! EXCLUSIVE before it reads what covers its record
//! (`Lock::order_with_deep_acquires`), so the two never both see nothing.

mod counting;
pub mod engine;
mod fast_path;
mod guard;
mod holding;
mod lease;
mod line;
mod naming;
mod policy;
pub mod render;
pub mod rules;
mod subtree;
mod target;
