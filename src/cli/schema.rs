//! `baton schema`: print, check and drop what a schema file declares.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{connect, open, CliError};
use crate::config::DatabaseSettings;
use crate::error::AppError;
use crate::schema::Schema;
use crate::server::{self, StartError};

#[derive(Subcommand)]
pub(super) enum SchemaCommand {
    /// Print the schema in force as TOML (opens no database).
    Print(SchemaPrintArgs),
    /// Check a schema file, and what it would change in the database:
    /// exit 0 when all is well, 2 for a file that cannot be right, 3 for a
    /// schema that does not fit the stored records.
    Check(SchemaCheckArgs),
    /// Delete the stored records of a type (`Comment`), or a field's values
    /// from every record of its type (`Ticket.colour`). Cannot be undone.
    Drop(SchemaDropArgs),
}

#[derive(Args)]
pub(super) struct SchemaPrintArgs {
    /// The schema file (else the built-in casebook schema).
    #[arg(long, env = "BATON_SCHEMA")]
    schema: Option<PathBuf>,
}

#[derive(Args)]
pub(super) struct SchemaCheckArgs {
    /// The schema file to check.
    file: PathBuf,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct SchemaDropArgs {
    /// `TYPE` or `TYPE.FIELD`.
    what: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

pub(super) async fn run(command: SchemaCommand) -> Result<(), CliError> {
    match command {
        SchemaCommand::Print(args) => print(args),
        SchemaCommand::Check(args) => check(args),
        SchemaCommand::Drop(args) => drop(args).await,
    }
}

/// `baton schema print`: the schema in force as TOML.
fn print(args: SchemaPrintArgs) -> Result<(), CliError> {
    let schema = match &args.schema {
        Some(path) => Schema::load(path).map_err(StartError::from)?,
        None => Schema::casebook(),
    };
    print!("{}", schema.to_toml());
    Ok(())
}

/// `baton schema check FILE`: the file, then the database against it.
fn check(args: SchemaCheckArgs) -> Result<(), CliError> {
    let schema = Schema::load(&args.file).map_err(StartError::from)?;
    let mut conn = connect(&args.database)?;
    crate::db::migrate(&mut conn).map_err(CliError::failed)?;
    crate::schema::install(schema).map_err(CliError::failed)?;
    let comparison = crate::models::stored_types::compare(&mut conn, crate::schema::in_force())
        .map_err(CliError::failed)?;
    if !comparison.fits() {
        return Err(StartError::SchemaMismatch(server::mismatch_message(
            Some(&args.file),
            &args.database.database_url,
            &comparison,
        ))
        .into());
    }
    println!(
        "{}: the schema is valid and fits the database.",
        args.file.display()
    );
    if comparison.changes.is_empty() {
        println!("Nothing changes.");
    } else {
        println!("It adds:");
        for change in &comparison.changes {
            println!("  - {change}");
        }
    }
    Ok(())
}

/// `baton schema drop WHAT`: deletes what the command names. Each lock on
/// a record of a dropped type ends as any lock ends (`locks::engine::tabs::end_locks_of_type`):
/// audited as `kicked` and broadcast as its `destroy`, in the transaction
/// that deletes the records; on PostgreSQL running instances hear it
/// through the event stream, as they hear `baton user remove`.
async fn drop(args: SchemaDropArgs) -> Result<(), CliError> {
    let mut conn = connect(&args.database)?;
    crate::db::migrate(&mut conn).map_err(CliError::failed)?;
    let what = args.what.clone();
    let changed = match what.split_once('.') {
        Some(_) => crate::models::stored_types::drop(&mut conn, &what).map_err(CliError::failed)?,
        None => {
            std::mem::drop(conn);
            let db = open(&args.database)?;
            db.write_retrying(None, move |tx| {
                crate::locks::engine::tabs::end_locks_of_type(tx, &what)?;
                Ok::<_, AppError>(crate::models::stored_types::drop(tx.conn, &what)?)
            })
            .await?
        }
    };
    match args.what.split_once('.') {
        None => println!("deleted {changed} record(s) of {}", args.what),
        Some((type_name, field)) => {
            println!("removed {field} from {changed} record(s) of {type_name}")
        }
    }
    Ok(())
}
