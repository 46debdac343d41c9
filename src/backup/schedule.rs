//! Scheduled backups (`BATON_BACKUP_EVERY`): one copy each period into
//! `BATON_BACKUP_DIR`, named by when it was taken, keeping the newest
//! `BATON_BACKUP_KEEP`. Only files named as baton names its backups are
//! ever deleted there.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};

use super::write_copy;
use crate::config::Settings;
use crate::db::{self, Backend};

const PREFIX: &str = "baton-";
const SUFFIX: &str = ".sqlite3";
const STAMP: &str = "%Y%m%dT%H%M%S%.3fZ";

/// What `baton serve` backs up, where, and how many it keeps.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub database_url: String,
    pub every: Duration,
    pub dir: PathBuf,
    pub keep: usize,
}

impl Schedule {
    /// The schedule the settings ask for (`None` without
    /// `BATON_BACKUP_EVERY`), its directory made. Err: what to change,
    /// naming the setting.
    pub fn from_settings(settings: &Settings) -> Result<Option<Schedule>, String> {
        let Some(every) = settings.backup_every else {
            return Ok(None);
        };
        let database_url = settings.database.database_url.clone();
        if Backend::of_url(&database_url) == Backend::Postgres {
            return Err(
                "BATON_BACKUP_EVERY is for SQLite databases; back up PostgreSQL with pg_dump \
                 and continuous archiving (WAL archiving), PostgreSQL's own tools"
                    .to_owned(),
            );
        }
        let dir = settings
            .backup_dir
            .clone()
            .unwrap_or_else(|| default_dir(&database_url));
        writable(&dir).map_err(|e| {
            format!(
                "BATON_BACKUP_DIR {} cannot hold backups: {e}; name a directory baton can write",
                dir.display()
            )
        })?;
        Ok(Some(Schedule {
            database_url,
            every,
            dir,
            keep: settings.backup_keep.max(1) as usize,
        }))
    }
}

/// `backups/` beside the database file.
pub fn default_dir(database_url: &str) -> PathBuf {
    let database = Path::new(db::sqlite_path(database_url));
    match database.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("backups"),
        _ => PathBuf::from("backups"),
    }
}

/// Makes `dir` (and its parents) and checks a file can be created in it.
fn writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".baton-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// A scheduled backup's file name: `baton-20261127T034500.123Z.sqlite3`.
pub fn file_name(at: DateTime<Utc>) -> String {
    format!("{PREFIX}{}{SUFFIX}", at.format(STAMP))
}

/// When a scheduled backup was taken, from its name; `None` for any other file.
fn taken_at(name: &str) -> Option<NaiveDateTime> {
    let stamp = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    NaiveDateTime::parse_from_str(stamp, STAMP).ok()
}

/// The scheduled backups in `dir`, oldest first.
fn backups(dir: &Path) -> std::io::Result<Vec<(NaiveDateTime, PathBuf)>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if let Some(at) = name.to_str().and_then(taken_at) {
            if entry.file_type()?.is_file() {
                found.push((at, entry.path()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Deletes all but the newest `keep` scheduled backups in `dir`; the
/// deleted files.
pub fn prune(dir: &Path, keep: usize) -> std::io::Result<Vec<PathBuf>> {
    let found = backups(dir)?;
    let extra = found.len().saturating_sub(keep);
    let mut deleted = Vec::new();
    for (_, path) in found.into_iter().take(extra) {
        std::fs::remove_file(&path)?;
        deleted.push(path);
    }
    Ok(deleted)
}

/// Takes a backup every period until the runtime stops. The first is due a
/// period after the newest one already in the directory (at once when there
/// is none, or it is older), so restarts do not skip or bunch backups.
pub async fn run(schedule: Schedule) {
    let newest = backups(&schedule.dir)
        .ok()
        .and_then(|found| found.last().map(|(at, _)| *at));
    let mut due = match newest {
        Some(at) => crate::clock::after(at, schedule.every),
        None => crate::clock::now(),
    };
    loop {
        let wait = (due - crate::clock::now()).to_std().unwrap_or_default();
        tokio::time::sleep(wait).await;
        let job = schedule.clone();
        match tokio::task::spawn_blocking(move || take(&job)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("scheduled backup failed: {e}; next try in a period"),
            Err(e) => tracing::warn!("scheduled backup stopped: {e}; next try in a period"),
        }
        due = crate::clock::after(crate::clock::now(), schedule.every);
    }
}

/// One scheduled backup, then the oldest beyond `keep` deleted.
fn take(schedule: &Schedule) -> Result<(), String> {
    let target = schedule.dir.join(file_name(Utc::now()));
    let copied = write_copy(&schedule.database_url, &target).map_err(|e| e.to_string())?;
    tracing::info!(
        path = %copied.path.display(),
        bytes = copied.bytes,
        took_ms = copied.took.as_millis() as u64,
        "backup written"
    );
    let deleted = prune(&schedule.dir, schedule.keep).map_err(|e| {
        format!(
            "cannot delete old backups in {}: {e}",
            schedule.dir.display()
        )
    })?;
    for path in deleted {
        tracing::info!(path = %path.display(), "old backup deleted");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_time_they_were_taken() {
        let at = DateTime::parse_from_rfc3339("2026-11-27T03:45:00.123Z")
            .unwrap()
            .with_timezone(&Utc);
        let name = file_name(at);
        assert_eq!(name, "baton-20261127T034500.123Z.sqlite3");
        assert_eq!(taken_at(&name), Some(at.naive_utc()));
        assert_eq!(taken_at("baton.sqlite3"), None);
        assert_eq!(taken_at("baton-notes.sqlite3"), None);
    }

    #[test]
    fn the_default_directory_is_beside_the_database() {
        assert_eq!(
            default_dir("/var/lib/baton/baton.sqlite3"),
            PathBuf::from("/var/lib/baton/backups")
        );
        assert_eq!(default_dir("baton.sqlite3"), PathBuf::from("backups"));
        assert_eq!(
            default_dir("sqlite:///srv/b.sqlite3"),
            PathBuf::from("/srv/backups")
        );
    }
}
