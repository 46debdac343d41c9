//! The `baton` command: a thin CLI over the library.

use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use baton::auth::{password, JwtKeys};
use baton::config::{DatabaseSettings, Settings};
use baton::db::Database;
use baton::http::params;
use baton::models::User;
use baton::realtime::hub::{Hub, LocalBus};
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
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate(DatabaseSettings),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Print a login token for a user (for scripts).
    Token(TokenArgs),
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

fn main() -> ExitCode {
    dotenvy::dotenv().ok();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = actix_web::rt::System::new().block_on(async move {
        match cli.command {
            None => serve(cli.serve).await,
            Some(Command::Serve(args)) => serve(args).await,
            Some(Command::Migrate(db)) => migrate(db),
            Some(Command::User(UserCommand::Add(args))) => user_add(args).await,
            Some(Command::Token(args)) => token(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("baton: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
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
            return Err(
                "BATON_JWT_SECRET is not set. Set it (any long random string), \
                 or run `baton serve --dev` to try baton with a throwaway secret."
                    .into(),
            )
        }
    };
    let bind = args.settings.bind.clone();
    let mut settings = args.settings;
    settings.demo = args.demo;
    let state = server::build_state(settings, &secret).map_err(|e| e.to_string())?;
    if args.demo {
        baton::demo::seed(&state.db)
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
    server::start(state, listener)
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())
}

fn open(database: &DatabaseSettings) -> Result<Database, String> {
    let bus = Arc::new(LocalBus {
        hub: Arc::new(Hub::default()),
    });
    Database::open(&database.database_url, 2, bus).map_err(|e| e.to_string())
}

fn migrate(database: DatabaseSettings) -> Result<(), String> {
    open(&database)?;
    println!("migrations applied to {}", database.database_url);
    Ok(())
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
                return Err(baton::error::AppError::invalid(format!(
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

async fn token(args: TokenArgs) -> Result<(), String> {
    let db = open(&args.database)?;
    let email = args.email.clone();
    let user = db
        .read(move |conn| User::find_by_email(conn, &email).map_err(baton::error::AppError::from))
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no user has the email {}", args.email))?;
    let keys = JwtKeys::new(args.jwt_secret.as_bytes(), args.token_ttl);
    println!("{}", keys.issue(user.id).map_err(|e| e.to_string())?);
    Ok(())
}
