//! The `baton` command: a thin CLI over the library.

use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use baton::accounts;
use baton::auth::{api_keys, password, tokens, JwtKeys};
use baton::config::{DatabaseSettings, Settings};
use baton::db::{Backend, Database, EventBus};
use baton::error::AppError;
use baton::http::params;
use baton::models::{ApiKey, User, UserChanges, UserId};
use baton::realtime::hub::{Hub, LocalBus};
use baton::realtime::pg_bus::PgBus;
use baton::server::{self, StartError};
use clap::{Args, Parser, Subcommand};
use rand::Rng;

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
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (the default).
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit (`--status`: list them).
    Migrate(MigrateArgs),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Print a login token for a user (for scripts).
    Token(TokenArgs),
    /// The schema file that declares the record types.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// API keys, with which a team's own backend calls baton.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Write a consistent copy of the SQLite database to FILE, while baton
    /// serves it (PostgreSQL: use pg_dump and continuous archiving).
    Backup(BackupArgs),
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
}

#[derive(Args)]
struct BackupArgs {
    /// The new file (it must not exist).
    file: std::path::PathBuf,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Delete the audit rows older than a date, once; prints how many.
    Prune(AuditPruneArgs),
}

#[derive(Args)]
struct AuditPruneArgs {
    /// An RFC 3339 date or date-time (`2026-08-01`, `2026-08-01T12:00:00Z`);
    /// UTC when it has no offset.
    #[arg(long)]
    before: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct MigrateArgs {
    /// List applied and pending migrations, and apply none: exit 0, or 1
    /// when some are pending.
    #[arg(long)]
    status: bool,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Make a new key and print it, once: only its hash is kept.
    Add(KeyAddArgs),
    /// One line per live key: its name, when it was made and last used.
    List(DatabaseSettings),
    /// End a key at once, on every instance.
    Revoke(KeyRevokeArgs),
}

#[derive(Args)]
struct KeyAddArgs {
    /// `[a-z0-9_-]{1,64}`, unique among live keys.
    #[arg(long)]
    name: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct KeyRevokeArgs {
    /// The key's name.
    name: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Subcommand)]
enum SchemaCommand {
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
struct SchemaPrintArgs {
    /// The schema file (else the built-in casebook schema).
    #[arg(long, env = "BATON_SCHEMA")]
    schema: Option<std::path::PathBuf>,
}

#[derive(Args)]
struct SchemaCheckArgs {
    /// The schema file to check.
    file: std::path::PathBuf,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct SchemaDropArgs {
    /// `TYPE` or `TYPE.FIELD`.
    what: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

/// A command's failure: what to print, and the exit status (1; 2 for a
/// schema file that cannot be right, 3 for one that does not fit the data).
struct Failure {
    message: String,
    status: u8,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, status: 1 }
    }
}

impl From<StartError> for Failure {
    fn from(e: StartError) -> Failure {
        let status = match e {
            StartError::Schema(_) | StartError::Setting(_) => 2,
            StartError::SchemaMismatch(_) => 3,
            _ => 1,
        };
        Failure {
            message: e.to_string(),
            status,
        }
    }
}

#[derive(Args)]
struct ServeArgs {
    #[command(flatten)]
    settings: Settings,
    /// Seed alice, bob and carol (password `demo`) and a sample case; implies --dev.
    #[arg(long)]
    demo: bool,
    /// Allow a random JWT secret (tokens die with the process).
    #[arg(long)]
    dev: bool,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user and print it as JSON.
    Add(UserAddArgs),
    /// Set a user's password; every token of theirs ends at once.
    Passwd(UserPasswdArgs),
    /// Remove (deactivate) a user: their tokens end, their locks are
    /// released and their tabs closed; their audit history stays.
    Remove(UserRemoveArgs),
}

#[derive(Args)]
struct UserPasswdArgs {
    #[arg(long)]
    email: String,
    #[arg(long)]
    password: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct UserRemoveArgs {
    #[arg(long)]
    email: String,
    /// The lease of a lock handed to the next waiter in line when the user's
    /// locks are released (as the server's `BATON_LOCK_TTL`).
    #[arg(long, env = "BATON_LOCK_TTL", default_value = "30s", value_parser = baton::config::duration)]
    lock_ttl: std::time::Duration,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct UserAddArgs {
    #[arg(long)]
    email: String,
    #[arg(long)]
    name: String,
    #[arg(long)]
    password: String,
    /// Make the user a site admin.
    #[arg(long)]
    admin: bool,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
struct TokenArgs {
    #[arg(long)]
    email: String,
    #[arg(long, env = "BATON_JWT_SECRET", hide_env_values = true)]
    jwt_secret: String,
    #[arg(long, env = "BATON_TOKEN_TTL", default_value = "12h", value_parser = humantime::parse_duration)]
    token_ttl: Duration,
    #[command(flatten)]
    database: DatabaseSettings,
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

fn main() -> ExitCode {
    dotenvy::dotenv().ok();
    if let Err(message) = init_logging() {
        eprintln!("baton: {message}");
        return ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    let result = actix_web::rt::System::new().block_on(async move {
        match cli.command {
            None => serve(cli.serve).await,
            Some(Command::Serve(args)) => serve(*args).await,
            Some(Command::Migrate(args)) if args.status => migrate_status(args.database),
            Some(Command::Migrate(args)) => migrate(args.database).map_err(Failure::from),
            Some(Command::User(UserCommand::Add(args))) => {
                user_add(args).await.map_err(Failure::from)
            }
            Some(Command::User(UserCommand::Passwd(args))) => {
                user_passwd(args).await.map_err(Failure::from)
            }
            Some(Command::User(UserCommand::Remove(args))) => {
                user_remove(args).await.map_err(Failure::from)
            }
            Some(Command::Token(args)) => token(args).await.map_err(Failure::from),
            Some(Command::Schema(SchemaCommand::Print(args))) => schema_print(args),
            Some(Command::Schema(SchemaCommand::Check(args))) => schema_check(args),
            Some(Command::Schema(SchemaCommand::Drop(args))) => schema_drop(args),
            Some(Command::Key(KeyCommand::Add(args))) => key_add(args).await,
            Some(Command::Key(KeyCommand::List(db))) => key_list(db).await,
            Some(Command::Key(KeyCommand::Revoke(args))) => key_revoke(args).await,
            Some(Command::Backup(args)) => backup(args),
            Some(Command::Audit(AuditCommand::Prune(args))) => audit_prune(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("baton: {}", failure.message);
            ExitCode::from(failure.status)
        }
    }
}

/// A refusal of a `baton key` command: exit 2, as for a bad schema file.
fn refused(message: String) -> Failure {
    Failure { message, status: 2 }
}

/// `baton key add --name NAME`: the key alone on one line.
async fn key_add(args: KeyAddArgs) -> Result<(), Failure> {
    let name = args.name;
    if !api_keys::valid_name(&name) {
        return Err(refused(format!(
            "a key's name is 1 to 64 of a-z, 0-9, _ and -; `{name}` is not"
        )));
    }
    let db = open(&args.database)?;
    let (key, hash) = api_keys::generate();
    let added = db
        .write(None, {
            let name = name.clone();
            move |tx| ApiKey::create(tx.conn, &name, &hash, tx.now).map_err(AppError::from)
        })
        .await
        .map_err(|e| e.to_string())?;
    if added.is_none() {
        return Err(refused(format!(
            "a live key is named {name} already; revoke it first or choose another name"
        )));
    }
    println!("{key}");
    Ok(())
}

/// `baton key list`: name, created, last used; never the key.
async fn key_list(database: DatabaseSettings) -> Result<(), Failure> {
    let db = open(&database)?;
    let keys = db
        .read(|conn| ApiKey::live(conn).map_err(AppError::from))
        .await
        .map_err(|e| e.to_string())?;
    let time = |t: chrono::NaiveDateTime| t.and_utc().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    for key in keys {
        let used = key.last_used_at.map_or_else(|| "never".to_owned(), time);
        println!(
            "{}\tcreated {}\tlast used {used}",
            key.name,
            time(key.created_at)
        );
    }
    Ok(())
}

/// `baton key revoke NAME`.
async fn key_revoke(args: KeyRevokeArgs) -> Result<(), Failure> {
    let db = open(&args.database)?;
    let name = args.name;
    let revoked = db
        .write(None, {
            let name = name.clone();
            move |tx| ApiKey::revoke(tx.conn, &name, tx.now).map_err(AppError::from)
        })
        .await
        .map_err(|e| e.to_string())?;
    if !revoked {
        return Err(refused(format!("no live key is named {name}")));
    }
    println!("revoked {name}: it is refused from now on");
    Ok(())
}

/// `baton backup FILE`: the copy's path and size. Exit 2 when it cannot be
/// written there (or the database is PostgreSQL's), with nothing left behind.
fn backup(args: BackupArgs) -> Result<(), Failure> {
    use baton::backup::BackupError;
    let copied =
        baton::backup::write_copy(&args.database.database_url, &args.file).map_err(|e| {
            let status = if matches!(e, BackupError::Copy(_)) {
                1
            } else {
                2
            };
            Failure {
                message: e.to_string(),
                status,
            }
        })?;
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
async fn audit_prune(args: AuditPruneArgs) -> Result<(), Failure> {
    use baton::locks::retention;
    let before =
        retention::parse_before(&args.before).map_err(|e| refused(format!("--before: {e}")))?;
    let db = open(&args.database)?;
    let deleted = retention::prune_before(&db, before, baton::realtime::pg_bus::OUTBOX_RETENTION)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "deleted {deleted} audit row(s) from before {}",
        before.and_utc().format("%Y-%m-%dT%H:%M:%SZ")
    );
    Ok(())
}

/// `baton schema print`: the schema in force as TOML.
fn schema_print(args: SchemaPrintArgs) -> Result<(), Failure> {
    let schema = match &args.schema {
        Some(path) => baton::schema::Schema::load(path).map_err(StartError::from)?,
        None => baton::schema::Schema::casebook(),
    };
    print!("{}", schema.to_toml());
    Ok(())
}

/// `baton schema check FILE`: the file, then the database against it.
fn schema_check(args: SchemaCheckArgs) -> Result<(), Failure> {
    let schema = baton::schema::Schema::load(&args.file).map_err(StartError::from)?;
    let mut conn = baton::db::connect(&args.database.database_url)
        .map_err(|e| format!("cannot open the database: {e}"))?;
    baton::db::migrate(&mut conn).map_err(|e| e.to_string())?;
    baton::schema::install(schema).map_err(Failure::from)?;
    let comparison = baton::models::stored_types::compare(&mut conn, baton::schema::in_force())
        .map_err(|e| e.to_string())?;
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

/// `baton schema drop WHAT`: deletes what the command names.
fn schema_drop(args: SchemaDropArgs) -> Result<(), Failure> {
    let mut conn = baton::db::connect(&args.database.database_url)
        .map_err(|e| format!("cannot open the database: {e}"))?;
    baton::db::migrate(&mut conn).map_err(|e| e.to_string())?;
    let changed =
        baton::models::stored_types::drop(&mut conn, &args.what).map_err(|e| e.to_string())?;
    match args.what.split_once('.') {
        None => println!("deleted {changed} record(s) of {}", args.what),
        Some((type_name, field)) => {
            println!("removed {field} from {changed} record(s) of {type_name}")
        }
    }
    Ok(())
}

async fn serve(args: ServeArgs) -> Result<(), Failure> {
    let secret = match (&args.settings.jwt_secret, args.dev || args.demo) {
        (Some(secret), _) => secret.clone().into_bytes(),
        (None, true) => {
            tracing::warn!(
                "no BATON_JWT_SECRET: using a random secret; tokens end when baton stops"
            );
            let bytes: [u8; 32] = rand::rng().random();
            bytes.to_vec()
        }
        (None, false) => {
            return Err(Failure::from(
                "BATON_JWT_SECRET is not set. Set it (any long random string), \
                 or run `baton serve --dev` to try baton with a throwaway secret."
                    .to_owned(),
            ))
        }
    };
    #[cfg(unix)]
    match server::raise_open_file_limit(args.settings.database.db_pool_size) {
        Ok(files) => {
            tracing::info!(
                "open-file limit {} (started with {}): room for about {} open tabs",
                files.limit,
                files.started_with,
                files.tabs
            );
            if files.tabs < 10_000 {
                tracing::warn!(
                    "the hard open-file limit is {}: raise it (LimitNOFILE= in a systemd \
                     unit, `ulimit -Hn` as root) for more open tabs",
                    files.limit
                );
            }
        }
        // Serving goes on with the limit it has; tabs past it are refused.
        Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
    }
    let bind = args.settings.bind.clone();
    let mut settings = args.settings;
    settings.demo = args.demo;
    let demo_data = baton::demo::demo_data(settings.database.schema.as_deref());
    let state = server::build_state(settings, &secret)?;
    if args.demo {
        baton::demo::seed(&state.db, demo_data)
            .await
            .map_err(|e| format!("seeding the demo failed: {e}"))?;
        tracing::info!("demo data ready: sign in as alice@example.com, bob@example.com or carol@example.com with password `demo`");
    }
    let listener = TcpListener::bind(&bind).map_err(|source| {
        StartError::Bind {
            addr: bind.clone(),
            source,
        }
        .to_string()
    })?;
    tracing::info!(
        "baton listening on http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    Ok(server::run(state, listener)
        .await
        .map_err(|e| e.to_string())?)
}

/// The database for a command. On PostgreSQL what a command publishes (a
/// removed user's locks ending, their tabs closing) reaches every running
/// instance through the bus; a SQLite server, in another process, does not
/// hear it (the ended tokens are refused all the same).
fn open(database: &DatabaseSettings) -> Result<Database, String> {
    let schema = server::load_schema(database).map_err(|e| e.to_string())?;
    baton::schema::install(schema)?;
    let bus: Arc<dyn EventBus> = match Backend::of_url(&database.database_url) {
        Backend::Postgres => Arc::new(PgBus::for_command()),
        Backend::Sqlite => Arc::new(LocalBus {
            hub: Arc::new(Hub::default()),
        }),
    };
    Database::open(&database.database_url, 2, database.db_timeout, bus).map_err(|e| e.to_string())
}

fn migrate(database: DatabaseSettings) -> Result<(), String> {
    open(&database)?;
    println!("migrations applied to {}", database.database_url);
    Ok(())
}

/// `baton migrate --status`: one line per migration, applied or pending,
/// and any applied by a newer release.
fn migrate_status(database: DatabaseSettings) -> Result<(), Failure> {
    let mut conn = baton::db::connect(&database.database_url)
        .map_err(|e| format!("cannot open the database: {e}"))?;
    let status = baton::db::migration_status(&mut conn).map_err(|e| e.to_string())?;
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
    Err(Failure {
        message: format!(
            "{} migration(s) pending: `baton migrate` or `baton serve` applies them",
            status.pending.len()
        ),
        status: 1,
    })
}

async fn user_add(args: UserAddArgs) -> Result<(), String> {
    let email = params::email(Some(args.email)).map_err(|e| e.to_string())?;
    let name = params::required_text("name", Some(args.name), params::MAX_TITLE)
        .map_err(|e| e.to_string())?;
    let pw = params::password(Some(args.password)).map_err(|e| e.to_string())?;
    let db = open(&args.database)?;
    let hash = password::hash(&pw)?;
    let admin = args.admin;
    let user = db
        .write(None, move |tx| {
            if User::find_by_email(tx.conn, &email)?.is_some() {
                return Err(AppError::invalid(format!(
                    "a user with email {email} already exists"
                )));
            }
            Ok(User::create(tx.conn, &email, &name, &hash, admin, tx.now)?)
        })
        .await
        .map_err(|e| e.to_string())?;
    let view = baton::views::UserView::full(&user);
    println!(
        "{}",
        serde_json::to_string(&view).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// The id of the active user with this email, inside a command's transaction.
fn user_id_by_email(tx: &mut baton::db::Tx, email: &str) -> Result<UserId, AppError> {
    User::find_by_email(tx.conn, email)?
        .filter(User::is_active)
        .map(|u| u.id)
        .ok_or_else(|| AppError::not_found(format!("no user has the email {email}")))
}

async fn user_passwd(args: UserPasswdArgs) -> Result<(), String> {
    let pw = params::password(Some(args.password)).map_err(|e| e.to_string())?;
    let db = open(&args.database)?;
    let hash = password::hash(&pw)?;
    let email = args.email;
    let user = db
        .write(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            let changes = UserChanges {
                password_hash: Some(hash),
                ..UserChanges::default()
            };
            accounts::update_user(tx, id, changes, None)
        })
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "password changed for {}; their tokens have ended",
        user.email.unwrap_or(user.name)
    );
    Ok(())
}

async fn user_remove(args: UserRemoveArgs) -> Result<(), String> {
    let db = open(&args.database)?;
    let email = args.email;
    let policy = baton::locks::LockPolicy {
        ttl: args.lock_ttl,
        // Only the hand-off's lease matters here.
        idle_timeout: args.lock_ttl,
    };
    let user = db
        .write_retrying(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            accounts::remove_user(tx, id, None, &policy)
        })
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "removed {}: their tokens have ended, their locks are released",
        user.email.unwrap_or(user.name)
    );
    Ok(())
}

async fn token(args: TokenArgs) -> Result<(), String> {
    let db = open(&args.database)?;
    let keys = JwtKeys::new(args.jwt_secret.as_bytes(), args.token_ttl);
    let email = args.email;
    let token = db
        .write(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            tokens::issue(tx.conn, &keys, id, tx.now)
        })
        .await
        .map_err(|e| e.to_string())?;
    println!("{token}");
    Ok(())
}
