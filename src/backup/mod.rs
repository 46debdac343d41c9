//! Backups of a SQLite database while baton serves it: a consistent copy
//! written beside its target and renamed into place (`copy`), and the
//! scheduled ones `baton serve` takes with `BATON_BACKUP_EVERY`, keeping the
//! newest `BATON_BACKUP_KEEP` (`schedule`). PostgreSQL is backed up with its
//! own tools (`pg_dump`, continuous archiving).

mod copy;
mod schedule;

use std::path::PathBuf;

pub use copy::{write_copy, Copied};
pub use schedule::{default_dir, file_name, prune, run, Schedule};

/// Why a backup was not written. Nothing half-written is ever left at the
/// target: the copy goes to a temporary file beside it first.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error(
        "baton backup copies SQLite databases; back up PostgreSQL with its own tools: \
         pg_dump for a copy, continuous archiving (WAL archiving) for point-in-time recovery"
    )]
    Postgres,
    #[error("there is no database at {0}: check DATABASE_URL")]
    NoDatabase(PathBuf),
    #[error("{0} exists already; baton never overwrites a file: name a new one")]
    Exists(PathBuf),
    #[error("{0} is not a directory; a backup needs an existing directory to go in")]
    NoDirectory(PathBuf),
    #[error("cannot write in {dir}: {source}")]
    NotWritable {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the copy failed, nothing was written: {0}")]
    Copy(String),
}
