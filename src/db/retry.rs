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

use super::{Database, DbError, Editor, Tx};

/// An error that may say PostgreSQL aborted the transaction to break a
/// deadlock (40P01) or as a serialization failure (40001): it changed
/// nothing, and the transaction may run again.
pub trait TransientConflict {
    fn is_transient_conflict(&self) -> bool;
}

impl TransientConflict for DbError {
    fn is_transient_conflict(&self) -> bool {
        use diesel::result::{DatabaseErrorKind, Error};
        match self {
            // diesel names only the second; the first is known by its message.
            DbError::Query(Error::DatabaseError(kind, info)) => {
                matches!(kind, DatabaseErrorKind::SerializationFailure)
                    || info.message().starts_with("deadlock detected")
            }
            _ => false,
        }
    }
}

/// Tries of a write that keeps being chosen as the deadlock victim.
const ATTEMPTS: usize = 3;

impl Database {
    /// [`Database::write`], run again (up to three times in all) when
    /// PostgreSQL aborts it as a deadlock victim or a serialization failure.
    /// `f` must be safe to run again: everything it does is in `tx`.
    pub async fn write_retrying<T, E, F>(&self, editor: Option<Editor>, f: F) -> Result<T, E>
    where
        F: Fn(&mut Tx) -> Result<T, E> + Send + Sync + 'static,
        T: Send + 'static,
        E: From<DbError> + TransientConflict + std::fmt::Display + Send + 'static,
    {
        let f = Arc::new(f);
        let mut attempt = 1;
        loop {
            let run = Arc::clone(&f);
            match self.write(editor.clone(), move |tx| run(tx)).await {
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

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error};

    use super::*;

    fn database_error(kind: DatabaseErrorKind, message: &str) -> DbError {
        DbError::Query(Error::DatabaseError(kind, Box::new(message.to_owned())))
    }

    #[test]
    fn deadlocks_and_serialization_failures_run_again_and_nothing_else_does() {
        let deadlock = database_error(
            DatabaseErrorKind::Unknown,
            "deadlock detected\nDETAIL: Process 1 waits for ShareLock on transaction 2",
        );
        assert!(deadlock.is_transient_conflict());
        let serialization = database_error(
            DatabaseErrorKind::SerializationFailure,
            "could not serialize access due to concurrent update",
        );
        assert!(serialization.is_transient_conflict());
        let unique = database_error(DatabaseErrorKind::UniqueViolation, "duplicate key value");
        assert!(!unique.is_transient_conflict());
        assert!(!DbError::Query(Error::NotFound).is_transient_conflict());
    }
}
