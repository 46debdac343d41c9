//! What a database call can fail with, in words a person can act on.

use std::time::Duration;

use diesel::ConnectionError;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to the database: {0}")]
    Connection(#[from] ConnectionError),
    #[error("no database connection available: {0}")]
    Pool(#[from] r2d2::Error),
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    #[error("database migration failed: {0}")]
    Migration(String),
    #[error("the database worker was cancelled")]
    Cancelled,
    /// SQLite's writer or checkpointer thread could not start.
    #[error("cannot start SQLite's {0} thread: {1}")]
    Thread(&'static str, String),
    /// The call did not finish within `BATON_DB_TIMEOUT`.
    #[error("{}", timeout_message(*.limit, *.outcome))]
    Timeout {
        limit: Duration,
        outcome: TimeoutOutcome,
    },
    /// The connection died under a statement (PostgreSQL restarted, the
    /// network cut it). A transaction on it did not commit.
    #[error("the connection to the database was lost: {0}")]
    Lost(String),
    /// The connection died while a COMMIT was in flight: it may have
    /// committed or not.
    #[error("the connection to the database was lost during a commit: {0}")]
    CommitUnknown(String),
}

/// What a call that gave up left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutOutcome {
    /// Nothing was changed: a read, or a write given up before its commit
    /// (it is rolled back, or never starts).
    NotApplied,
    /// A commit had been sent and not yet confirmed: it may have happened.
    Unknown,
}

fn timeout_message(limit: Duration, outcome: TimeoutOutcome) -> String {
    let limit = humantime::format_duration(limit);
    match outcome {
        TimeoutOutcome::NotApplied => {
            format!("The database did not answer within {limit}; nothing was changed. Try again.")
        }
        TimeoutOutcome::Unknown => format!(
            "The database did not confirm the change within {limit}; it may have been saved. \
             Reload before you try again (a retry with If-Match or Lock-Token is refused \
             with 412 if it was)."
        ),
    }
}

/// Whether PostgreSQL refused a value because it holds U+0000, which
/// neither its `text` nor its `jsonb` can hold (SQLSTATE 22P05 and 22021;
/// diesel passes on the message only).
pub fn cannot_hold_nul(message: &str) -> bool {
    message.contains("unsupported Unicode escape sequence")
        || message.contains("invalid byte sequence for encoding \"UTF8\": 0x00")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_messages_say_whether_anything_changed() {
        let not_applied = DbError::Timeout {
            limit: Duration::from_secs(5),
            outcome: TimeoutOutcome::NotApplied,
        };
        assert_eq!(
            not_applied.to_string(),
            "The database did not answer within 5s; nothing was changed. Try again."
        );
        let unknown = DbError::Timeout {
            limit: Duration::from_millis(1500),
            outcome: TimeoutOutcome::Unknown,
        };
        assert!(unknown
            .to_string()
            .contains("within 1s 500ms; it may have been saved"));
    }
}
