//! The database before serving: the schema in force, migrations, the
//! comparison with the stored records, and SQLite's one-instance lock.

use crate::db::DbError;
use crate::locks::engine;

use super::StartError;

/// The schema in force: the file named by `--schema`, else the casebook.
pub fn load_schema(
    database: &crate::config::DatabaseSettings,
) -> Result<crate::schema::Schema, StartError> {
    Ok(match &database.schema {
        Some(path) => crate::schema::Schema::load(path)?,
        None => crate::schema::Schema::casebook(),
    })
}

/// Before serving: the schema is made the one in force, the database
/// migrated and compared with it (a schema that does not fit the stored
/// records is refused, naming each type, field and count), and what the
/// declared types need in the database made: unique indexes, and the fast
/// save on PostgreSQL.
pub(super) fn prepare_database(
    url: &str,
    database: &crate::config::DatabaseSettings,
) -> Result<(), StartError> {
    let schema = crate::schema::install(load_schema(database)?).map_err(StartError::Config)?;
    let mut conn = crate::db::connect(url).map_err(DbError::from)?;
    crate::db::migrate(&mut conn)?;
    let comparison =
        crate::models::stored_types::compare(&mut conn, schema).map_err(DbError::from)?;
    if !comparison.fits() {
        return Err(StartError::SchemaMismatch(mismatch_message(
            database.schema.as_deref(),
            url,
            &comparison,
        )));
    }
    crate::models::stored_types::apply_unique_indexes(&mut conn, schema).map_err(DbError::from)?;
    // Before the first lock is granted: every token of this run is greater
    // than every token of the runs before, even those a power cut took back.
    crate::models::Lock::begin_token_run(&mut conn).map_err(DbError::from)?;
    if let crate::db::DbConn::Postgresql(pg) = &mut conn {
        engine::install_fast_save(pg).map_err(DbError::from)?;
    }
    Ok(())
}

/// What `serve` and `baton schema check` say when a schema does not fit.
pub fn mismatch_message(
    file: Option<&std::path::Path>,
    database_url: &str,
    comparison: &crate::models::stored_types::Comparison,
) -> String {
    let file = file.map_or_else(
        || "the built-in schema".to_owned(),
        |p| p.display().to_string(),
    );
    let mut message = format!("{file} does not fit the records in the database:");
    for problem in &comparison.problems {
        message.push_str(&format!("\n  - {problem}"));
    }
    if !comparison.commands.is_empty() {
        message.push_str(
            "\nNothing was changed. To delete what no longer fits (this cannot be undone):",
        );
        let database = shown_url(database_url);
        for command in &comparison.commands {
            message.push_str(&format!("\n  {command} --database-url {database}"));
        }
    }
    message
}

/// A database URL as a command line may show it: a password left out, and
/// quoted for a shell where it needs to be.
fn shown_url(url: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/:@._-=%+,".contains(c);
    let shown = without_password(url);
    if shown.chars().all(plain) {
        shown
    } else {
        format!("'{}'", shown.replace('\'', "'\\''"))
    }
}

fn without_password(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(at)) if rest.contains(':') => {
            let credentials = &url[scheme.len() + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:PASSWORD{}", &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// SQLite serves one instance: a second `baton serve` on the same file would
/// keep its own tabs and locks' channel state apart from the first. Holding
/// an exclusive lock on a file beside the database makes it refuse to start.
pub(super) fn lock_sqlite_file(url: &str) -> Result<std::fs::File, StartError> {
    let path = format!("{}.instance-lock", crate::db::sqlite_path(url));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StartError::Config(format!("cannot open {path}: {e}")))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StartError::Config(format!(
            "another baton is already serving {}; SQLite supports one instance \
             (use PostgreSQL, DATABASE_URL=postgres://…, to run several)",
            crate::db::sqlite_path(url)
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(StartError::Config(format!("cannot lock {path}: {e}")))
        }
    }
}
