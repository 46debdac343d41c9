//! Counting lock events (the `baton_lock_events_total` metric) once their
//! audit rows have committed.

use crate::db::Tx;
use crate::models::LockAction;

/// Counts a lock event (its audit row is written) once it has committed.
pub fn count_after_commit(tx: &mut Tx, action: LockAction) {
    tx.after_commit(move || count_event(action));
}

/// Counts a committed lock event.
pub fn count_event(action: LockAction) {
    metrics::counter!("baton_lock_events_total", "action" => action.as_str()).increment(1)
}
