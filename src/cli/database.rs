//! The database's upkeep: `baton migrate`, `baton backup` and
//! `baton audit prune`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{connect, open, CliError};
use crate::config::DatabaseSettings;

#[derive(Args)]
pub(super) struct MigrateArgs {
    /// List applied and pending migrations, and apply none: exit 0, or 1
    /// when some are pending.
    #[arg(long)]
    status: bool,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct BackupArgs {
    /// The new file (it must not exist).
    file: PathBuf,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Subcommand)]
pub(super) enum AuditCommand {
    /// Delete the audit rows older than a date, once; prints how many.
    Prune(AuditPruneArgs),
}

#[derive(Args)]
pub(super) struct AuditPruneArgs {
    /// An RFC 3339 date or date-time (`2026-08-01`, `2026-08-01T12:00:00Z`);
    /// UTC when it has no offset.
    #[arg(long)]
    before: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

/// `baton migrate`; with `--status`, only what is applied and pending.
pub(super) fn migrate(args: MigrateArgs) -> Result<(), CliError> {
    if args.status {
        return migrate_status(&args.database);
    }
    open(&args.database)?;
    println!("migrations applied to {}", args.database.database_url);
    Ok(())
}

/// `baton migrate --status`: one line per migration, applied or pending,
/// and any applied by a newer release. Exit 1 when some are pending.
fn migrate_status(database: &DatabaseSettings) -> Result<(), CliError> {
    let mut conn = connect(database)?;
    let status = crate::db::migration_status(&mut conn).map_err(CliError::failed)?;
    for name in &status.applied {
        println!("applied  {name}");
    }
    for name in &status.pending {
        println!("pending  {name}");
    }
    for version in &status.newer {
        println!("newer    {version} (applied by a newer release of baton)");
    }
    println!(
        "{} applied, {} pending",
        status.applied.len(),
        status.pending.len()
    );
    if status.pending.is_empty() {
        return Ok(());
    }
    Err(CliError::Failed(format!(
        "{} migration(s) pending: `baton migrate` or `baton serve` applies them",
        status.pending.len()
    )))
}

/// `baton backup FILE`: the copy's path and size. Exit 2 when it cannot be
/// written there (or the database is PostgreSQL's), with nothing left behind.
pub(super) fn backup(args: BackupArgs) -> Result<(), CliError> {
    let copied = crate::backup::write_copy(&args.database.database_url, &args.file)?;
    println!(
        "wrote {}: {} bytes ({:.1} MiB) in {:.2} s",
        copied.path.display(),
        copied.bytes,
        copied.bytes as f64 / (1024.0 * 1024.0),
        copied.took.as_secs_f64()
    );
    Ok(())
}

/// `baton audit prune --before DATE`: how many audit rows it deleted.
pub(super) async fn audit(command: AuditCommand) -> Result<(), CliError> {
    use crate::locks::engine::retention;
    let AuditCommand::Prune(args) = command;
    let before = retention::parse_before(&args.before)
        .map_err(|e| CliError::Refused(format!("--before: {e}")))?;
    let db = open(&args.database)?;
    let deleted = retention::prune_before(&db, before, crate::realtime::pg_bus::OUTBOX_RETENTION)
        .await
        .map_err(CliError::failed)?;
    println!(
        "deleted {deleted} audit row(s) from before {}",
        before.and_utc().format("%Y-%m-%dT%H:%M:%SZ")
    );
    Ok(())
}
