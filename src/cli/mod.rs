//! The `baton` command: parsing its arguments, one module per group of
//! subcommands, and one error type whose variant is the exit status.

mod database;
mod keys;
mod schema;
mod serve;
mod users;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::backup::BackupError;
use crate::config::DatabaseSettings;
use crate::db::{Backend, Database, EventBus};
use crate::error::AppError;
use crate::realtime::pg_bus::PgBus;
use crate::realtime::relay::CommandBus;
use crate::server::{self, StartError};

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "Edit locks, guarded writes and live presence for collaborative web apps"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: serve::ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (the default).
    Serve(Box<serve::ServeArgs>),
    /// Apply pending database migrations and exit (`--status`: list them).
    Migrate(database::MigrateArgs),
    /// Manage users.
    #[command(subcommand)]
    User(users::UserCommand),
    /// Print a login token for a user (for scripts).
    Token(users::TokenArgs),
    /// The schema file that declares the record types.
    #[command(subcommand)]
    Schema(schema::SchemaCommand),
    /// API keys, with which a team's own backend calls baton.
    #[command(subcommand)]
    Key(keys::KeyCommand),
    /// Write a consistent copy of the SQLite database to FILE, while baton
    /// serves it (PostgreSQL: use pg_dump and continuous archiving).
    Backup(database::BackupArgs),
    /// The audit trail.
    #[command(subcommand)]
    Audit(database::AuditCommand),
}

/// Why a command failed; its variant is the exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Anything that went wrong on the way (a database, a file): exit 1.
    #[error("{0}")]
    Failed(String),
    /// What the command was given cannot be right (a bad schema file, a
    /// setting, a key's name): exit 2.
    #[error("{0}")]
    Refused(String),
    /// The schema does not fit the records already stored: exit 3.
    #[error("{0}")]
    DoesNotFit(String),
}

impl CliError {
    pub fn failed(e: impl std::fmt::Display) -> CliError {
        CliError::Failed(e.to_string())
    }

    fn exit_status(&self) -> u8 {
        match self {
            CliError::Failed(_) => 1,
            CliError::Refused(_) => 2,
            CliError::DoesNotFit(_) => 3,
        }
    }
}

impl From<StartError> for CliError {
    fn from(e: StartError) -> CliError {
        match e {
            StartError::Schema(_) | StartError::Setting(_) => CliError::Refused(e.to_string()),
            StartError::SchemaMismatch(_) => CliError::DoesNotFit(e.to_string()),
            _ => CliError::failed(e),
        }
    }
}

impl From<AppError> for CliError {
    fn from(e: AppError) -> CliError {
        CliError::failed(e)
    }
}

impl From<BackupError> for CliError {
    fn from(e: BackupError) -> CliError {
        match e {
            BackupError::Copy(_) => CliError::failed(e),
            // The place, the file or the database cannot take a copy.
            _ => CliError::Refused(e.to_string()),
        }
    }
}

/// Runs the command line; what `baton` exits with.
pub fn main() -> ExitCode {
    dotenvy::dotenv().ok();
    if let Err(message) = init_logging() {
        eprintln!("baton: {message}");
        return ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    let result = actix_web::rt::System::new().block_on(async move {
        match cli.command {
            None => serve::serve(cli.serve).await,
            Some(Command::Serve(args)) => serve::serve(*args).await,
            Some(Command::Migrate(args)) => database::migrate(args),
            Some(Command::User(command)) => users::run(command).await,
            Some(Command::Token(args)) => users::token(args).await,
            Some(Command::Schema(command)) => schema::run(command).await,
            Some(Command::Key(command)) => keys::run(command).await,
            Some(Command::Backup(args)) => database::backup(args),
            Some(Command::Audit(command)) => database::audit(command).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baton: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

/// Logs go to stderr: human-readable, or JSON lines with `BATON_LOG_FORMAT=json`.
fn init_logging() -> Result<(), String> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match std::env::var("BATON_LOG_FORMAT").as_deref() {
        Ok("json") => logs.json().flatten_event(true).init(),
        Ok("text") | Err(_) => logs.init(),
        Ok(other) => {
            return Err(format!(
                "BATON_LOG_FORMAT must be `text` or `json`, not `{other}`"
            ))
        }
    }
    Ok(())
}

/// The database for a command. What a command publishes (a removed user's
/// locks ending, their tabs closing) reaches every running server: on
/// PostgreSQL through the bus, on SQLite through the event rows the server
/// reads every reaper interval (`crate::realtime::relay`).
fn open(database: &DatabaseSettings) -> Result<Database, CliError> {
    let schema = server::load_schema(database)?;
    crate::schema::install(schema).map_err(CliError::failed)?;
    let bus: Arc<dyn EventBus> = match Backend::of_url(&database.database_url) {
        Backend::Postgres => Arc::new(PgBus::for_command()),
        Backend::Sqlite => Arc::new(CommandBus),
    };
    Database::open(&database.database_url, 2, database.db_timeout, bus).map_err(CliError::failed)
}

/// A connection alone, for the commands that need no bus or schema.
fn connect(database: &DatabaseSettings) -> Result<crate::db::DbConn, CliError> {
    crate::db::connect(&database.database_url)
        .map_err(|e| CliError::Failed(format!("cannot open the database: {e}")))
}
