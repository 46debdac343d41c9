//! Writes that PostgreSQL may abort to break a deadlock, run again.
//!
//! A transaction that ends a tab's locks also takes other tabs' places in
//! line (the hand-off) while leaving its own: two tabs waiting for each
//! other's records and closing at once take the same `lock_waiters` rows in
//! opposite orders, and no fixed order avoids that without reading every
//! line first. PostgreSQL aborts one of them (SQLSTATE 40P01); the aborted
//! transaction changed nothing, so it runs again, and then sees what the
//! other committed.

use std::sync::Arc;

use super::{Database, Tx};
use crate::error::AppResult;

/// Tries of a write that keeps being chosen as the deadlock victim.
const ATTEMPTS: usize = 3;

impl Database {
    /// [`Database::write`], run again (up to three times in all) when
    /// PostgreSQL aborts it as a deadlock victim or a serialization failure.
    /// `f` must be safe to run again: everything it does is in `tx`.
    pub async fn write_retrying<T, F>(
        &self,
        editor_session_id: Option<String>,
        f: F,
    ) -> AppResult<T>
    where
        F: Fn(&mut Tx) -> AppResult<T> + Send + Sync + 'static,
        T: Send + 'static,
    {
        let f = Arc::new(f);
        let mut attempt = 1;
        loop {
            let run = Arc::clone(&f);
            match self
                .write(editor_session_id.clone(), move |tx| run(tx))
                .await
            {
                Err(e) if attempt < ATTEMPTS && e.is_transient_conflict() => {
                    attempt += 1;
                    metrics::counter!("baton_write_retries_total").increment(1);
                    tracing::debug!("write aborted by the database ({e}); running it again");
                }
                outcome => return outcome,
            }
        }
    }
}
