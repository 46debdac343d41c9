//! The embedded migrations: applying them, and what `baton migrate
//! --status` lists.
//!
//! Rolling upgrades (PostgreSQL): while instances of the previous release
//! may still serve the database, a release's migrations only add (tables,
//! nullable or defaulted columns, indexes, functions); what the previous
//! release reads is removed one release later. Instances starting together
//! apply each migration once, one after another under an advisory lock.

use diesel::connection::SimpleConnection;
use diesel::migration::{Migration, MigrationSource};
use diesel::{PgConnection, RunQueryDsl};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use super::{DbConn, DbError};

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// The advisory lock held while migrating (PostgreSQL).
const MIGRATING: i64 = 4_242_000;

/// Applies the embedded migrations of the connection's backend.
pub fn migrate(conn: &mut DbConn) -> Result<(), DbError> {
    let failed = |e: &dyn std::fmt::Display| DbError::Migration(e.to_string());
    match conn {
        DbConn::Postgresql(c) => {
            // The others wait here, then find nothing pending.
            advisory(c, "pg_advisory_lock").map_err(|e| failed(&e))?;
            let applied = c.run_pending_migrations(POSTGRES_MIGRATIONS).map(|_| ());
            // The lock is the session's: a pooled connection must not keep it.
            let unlocked = advisory(c, "pg_advisory_unlock");
            applied.map_err(|e| failed(&e))?;
            unlocked.map_err(|e| failed(&e))
        }
        DbConn::Sqlite(c) => {
            // WAL persists in the file; set it once here, before any pool exists.
            c.batch_execute("PRAGMA journal_mode = WAL;")
                .map_err(|e| failed(&e))?;
            c.run_pending_migrations(SQLITE_MIGRATIONS)
                .map(|_| ())
                .map_err(|e| failed(&e))
        }
    }
}

fn advisory(c: &mut PgConnection, function: &str) -> diesel::QueryResult<()> {
    diesel::sql_query(format!("SELECT {function}({MIGRATING})"))
        .execute(c)
        .map(|_| ())
}

/// Which of this release's migrations a database has, in order.
#[derive(Debug, Default)]
pub struct MigrationStatus {
    /// Migrations of this release the database has, by name.
    pub applied: Vec<String>,
    /// Migrations of this release it does not have yet.
    pub pending: Vec<String>,
    /// Versions the database has that this release does not know: applied
    /// by a newer release (during a rolling upgrade, or after a downgrade).
    pub newer: Vec<String>,
}

/// Reads the database's applied migrations; changes nothing but creating
/// diesel's bookkeeping table on a database that has never been migrated.
pub fn status(conn: &mut DbConn) -> Result<MigrationStatus, DbError> {
    match conn {
        DbConn::Postgresql(c) => status_of(c, POSTGRES_MIGRATIONS),
        DbConn::Sqlite(c) => status_of(c, SQLITE_MIGRATIONS),
    }
}

fn status_of<DB, C>(conn: &mut C, source: EmbeddedMigrations) -> Result<MigrationStatus, DbError>
where
    DB: diesel::backend::Backend,
    C: MigrationHarness<DB>,
    EmbeddedMigrations: MigrationSource<DB>,
{
    let failed = |e: &dyn std::fmt::Display| DbError::Migration(e.to_string());
    let applied_versions = conn.applied_migrations().map_err(|e| failed(&*e))?;
    let mut known: Vec<Box<dyn Migration<DB>>> = source.migrations().map_err(|e| failed(&*e))?;
    known.sort_by(|a, b| a.name().version().cmp(&b.name().version()));
    let mut status = MigrationStatus::default();
    for migration in &known {
        let name = migration.name().to_string();
        if applied_versions.contains(&migration.name().version()) {
            status.applied.push(name);
        } else {
            status.pending.push(name);
        }
    }
    let mut newer: Vec<String> = applied_versions
        .iter()
        .filter(|v| !known.iter().any(|m| m.name().version() == **v))
        .map(|v| v.to_string())
        .collect();
    newer.sort();
    status.newer = newer;
    Ok(status)
}
