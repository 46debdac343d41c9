//! `baton user` and `baton token`: people, from the command line.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::{open, CliError};
use crate::accounts;
use crate::auth::{check_secret, password, tokens, JwtKeys};
use crate::config::DatabaseSettings;
use crate::db::Tx;
use crate::error::AppError;
use crate::http::params;
use crate::models::{User, UserId};

#[derive(Subcommand)]
pub(super) enum UserCommand {
    /// Create a user and print it as JSON.
    Add(UserAddArgs),
    /// Set a user's password; every token of theirs ends at once.
    Passwd(UserPasswdArgs),
    /// Remove (deactivate) a user: their tokens end, their locks are
    /// released and their tabs closed; their audit history stays.
    Remove(UserRemoveArgs),
}

/// Where a new password comes from: a prompt (the default), standard
/// input, or the command line.
#[derive(Args)]
struct PasswordArgs {
    /// The password itself, for scripts that cannot do otherwise: a
    /// command line shows in `ps` to every user of the machine and stays in
    /// the shell's history. Prefer the prompt, or --password-stdin.
    #[arg(long, conflicts_with = "password_stdin")]
    password: Option<String>,
    /// Read the password from the first line of standard input.
    #[arg(long)]
    password_stdin: bool,
}

impl PasswordArgs {
    fn read(self) -> Result<String, CliError> {
        if let Some(password) = self.password {
            return Ok(password);
        }
        if self.password_stdin {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map_err(|e| {
                CliError::Failed(format!("cannot read the password from standard input: {e}"))
            })?;
            return Ok(line.trim_end_matches(['\n', '\r']).to_owned());
        }
        let prompt = |label: &str| {
            rpassword::prompt_password(label).map_err(|e| {
                CliError::Refused(format!(
                    "cannot prompt for the password ({e}): give it on standard input \
                     with --password-stdin"
                ))
            })
        };
        let password = prompt("Password: ")?;
        if prompt("Password again: ")? != password {
            return Err(CliError::Refused(
                "the two passwords differ; nothing was changed".to_owned(),
            ));
        }
        Ok(password)
    }
}

#[derive(Args)]
pub(super) struct UserAddArgs {
    #[arg(long)]
    email: String,
    #[arg(long)]
    name: String,
    #[command(flatten)]
    password: PasswordArgs,
    /// Make the user a site admin.
    #[arg(long)]
    admin: bool,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct UserPasswdArgs {
    #[arg(long)]
    email: String,
    #[command(flatten)]
    password: PasswordArgs,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct UserRemoveArgs {
    #[arg(long)]
    email: String,
    /// The lease of a lock handed to the next waiter in line when the user's
    /// locks are released (as the server's `BATON_LOCK_TTL`).
    #[arg(long, env = "BATON_LOCK_TTL", default_value = "30s", value_parser = crate::config::duration)]
    lock_ttl: Duration,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct TokenArgs {
    #[arg(long)]
    email: String,
    #[arg(long, env = "BATON_JWT_SECRET", hide_env_values = true)]
    jwt_secret: String,
    #[arg(long, env = "BATON_TOKEN_TTL", default_value = "12h", value_parser = humantime::parse_duration)]
    token_ttl: Duration,
    #[command(flatten)]
    database: DatabaseSettings,
}

pub(super) async fn run(command: UserCommand) -> Result<(), CliError> {
    match command {
        UserCommand::Add(args) => add(args).await,
        UserCommand::Passwd(args) => passwd(args).await,
        UserCommand::Remove(args) => remove(args).await,
    }
}

/// `baton user add`: the new user as JSON.
async fn add(args: UserAddArgs) -> Result<(), CliError> {
    let email = params::email(Some(args.email))?;
    let name = params::required_text("name", Some(args.name), params::MAX_TITLE)?;
    let pw = params::password(Some(args.password.read()?))?;
    let db = open(&args.database)?;
    let hash = password::hash(&pw).map_err(CliError::Failed)?;
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
        .await?;
    let view = crate::views::UserView::full(&user);
    println!(
        "{}",
        serde_json::to_string(&view).map_err(CliError::failed)?
    );
    Ok(())
}

/// `baton user passwd`: every token of theirs ends.
async fn passwd(args: UserPasswdArgs) -> Result<(), CliError> {
    let pw = params::password(Some(args.password.read()?))?;
    let db = open(&args.database)?;
    let hash = password::hash(&pw).map_err(CliError::Failed)?;
    let email = args.email;
    let user = db
        .write(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            accounts::change_password(tx, id, hash)
        })
        .await?;
    println!(
        "password changed for {}; their tokens have ended",
        user.email.unwrap_or(user.name)
    );
    Ok(())
}

/// `baton user remove`: tokens end, locks are released, tabs closed.
async fn remove(args: UserRemoveArgs) -> Result<(), CliError> {
    let db = open(&args.database)?;
    let email = args.email;
    let policy = crate::locks::engine::LockPolicy {
        ttl: args.lock_ttl,
        // Only the hand-off's lease matters here.
        idle_timeout: args.lock_ttl,
    };
    let user = db
        .write_retrying(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            accounts::remove_user(tx, id, None, &policy)
        })
        .await?;
    println!(
        "removed {}: their tokens have ended, their locks are released",
        user.email.unwrap_or(user.name)
    );
    Ok(())
}

/// `baton token`: a login token for a user, for scripts.
pub(super) async fn token(args: TokenArgs) -> Result<(), CliError> {
    check_secret(args.jwt_secret.as_bytes()).map_err(|e| CliError::Refused(e.to_string()))?;
    let db = open(&args.database)?;
    let keys = JwtKeys::new(args.jwt_secret.as_bytes(), args.token_ttl);
    let email = args.email;
    let token = db
        .write(None, move |tx| {
            let id = user_id_by_email(tx, &email)?;
            tokens::issue(tx.conn, &keys, id, tx.now)
        })
        .await?;
    println!("{token}");
    Ok(())
}

/// The id of the active user with this email, inside a command's transaction.
fn user_id_by_email(tx: &mut Tx, email: &str) -> Result<UserId, AppError> {
    User::find_by_email(tx.conn, email)?
        .filter(User::is_active)
        .map(|u| u.id)
        .ok_or_else(|| AppError::not_found(format!("no user has the email {email}")))
}
