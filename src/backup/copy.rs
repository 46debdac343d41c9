//! One consistent copy of a SQLite database, taken while it is served.
//!
//! `VACUUM INTO` (SQLite 3.27+; diesel has no binding for the online backup
//! API, and this is plain SQL) copies the database as one read transaction
//! sees it: in WAL mode writers go on meanwhile, and every commit made
//! before it began is in the copy. The copy is a plain database file, with
//! no `-wal` beside it to carry.

use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diesel::sql_types::Text;
use diesel::RunQueryDsl;

use super::BackupError;
use crate::db::{self, Backend, DbConn};

/// A backup written.
#[derive(Clone, Debug)]
pub struct Copied {
    pub path: PathBuf,
    /// The copy's size in bytes.
    pub bytes: u64,
    /// How long the copy took.
    pub took: Duration,
}

/// Writes a consistent copy of the database at `database_url` to `target`,
/// which must not exist. The copy is written to a temporary file beside
/// `target`, flushed to disk, then linked into place (never over an
/// existing file); on any failure nothing is left behind.
pub fn write_copy(database_url: &str, target: &Path) -> Result<Copied, BackupError> {
    let started = Instant::now();
    if Backend::of_url(database_url) == Backend::Postgres {
        return Err(BackupError::Postgres);
    }
    let source = Path::new(db::sqlite_path(database_url));
    if !source.is_file() {
        return Err(BackupError::NoDatabase(source.to_path_buf()));
    }
    if fs::symlink_metadata(target).is_ok() {
        return Err(BackupError::Exists(target.to_path_buf()));
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(BackupError::NoDirectory(dir));
    }
    let file_name = target
        .file_name()
        .ok_or_else(|| BackupError::NoDirectory(target.to_path_buf()))?;
    let partial = Partial::create(dir.join(format!(
        ".{}.{}.partial",
        file_name.to_string_lossy(),
        std::process::id()
    )))
    .map_err(|source| BackupError::NotWritable {
        dir: dir.clone(),
        source,
    })?;
    vacuum_into(database_url, &partial.0)?;
    let written = |source| BackupError::NotWritable {
        dir: dir.clone(),
        source,
    };
    File::open(&partial.0)
        .and_then(|f| f.sync_all())
        .map_err(written)?;
    partial.publish(target)?;
    sync_dir(&dir);
    let bytes = fs::metadata(target).map_err(written)?.len();
    Ok(Copied {
        path: target.to_path_buf(),
        bytes,
        took: started.elapsed(),
    })
}

/// `VACUUM INTO` on a connection of its own (it cannot run inside a
/// transaction, and a served pool's connections are busy enough).
fn vacuum_into(database_url: &str, into: &Path) -> Result<(), BackupError> {
    let copy_failed = |e: String| BackupError::Copy(e);
    let mut conn = db::connect(database_url).map_err(|e| copy_failed(e.to_string()))?;
    let DbConn::Sqlite(sqlite) = &mut conn else {
        return Err(BackupError::Postgres);
    };
    let into = into
        .to_str()
        .ok_or_else(|| copy_failed(format!("{} is not UTF-8", into.display())))?;
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(into)
        .execute(sqlite)
        .map_err(|e| copy_failed(e.to_string()))?;
    Ok(())
}

/// The temporary file a copy is written to; removed unless published.
struct Partial(PathBuf);

impl Partial {
    /// An empty file (which `VACUUM INTO` accepts): creating it is also the
    /// check that the directory can be written.
    fn create(path: PathBuf) -> std::io::Result<Partial> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Partial(path))
    }

    /// Puts the copy at `target`. A hard link fails if `target` appeared
    /// meanwhile, where a rename would replace it; a file system without
    /// hard links gets the rename.
    fn publish(self, target: &Path) -> Result<(), BackupError> {
        match fs::hard_link(&self.0, target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                Err(BackupError::Exists(target.to_path_buf()))
            }
            Err(_) if fs::symlink_metadata(target).is_err() => {
                fs::rename(&self.0, target).map_err(|source| BackupError::NotWritable {
                    dir: target.parent().unwrap_or(Path::new(".")).to_path_buf(),
                    source,
                })
            }
            Err(_) => Err(BackupError::Exists(target.to_path_buf())),
        }
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        // Gone already after a rename; after a hard link, the second name.
        let _ = fs::remove_file(&self.0);
    }
}

/// Makes the new name durable. Best effort: not every platform can open a
/// directory, and the copy itself is already on disk.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
