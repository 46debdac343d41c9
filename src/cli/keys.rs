//! `baton key`: the API keys with which a team's own backend calls baton.

use clap::{Args, Subcommand};

use super::{open, CliError};
use crate::auth::api_keys;
use crate::config::DatabaseSettings;
use crate::error::AppError;
use crate::models::ApiKey;

#[derive(Subcommand)]
pub(super) enum KeyCommand {
    /// Make a new key and print it, once: only its hash is kept.
    Add(KeyAddArgs),
    /// One line per live key: its name, when it was made and last used.
    List(DatabaseSettings),
    /// End a key at once, on every instance.
    Revoke(KeyRevokeArgs),
}

#[derive(Args)]
pub(super) struct KeyAddArgs {
    /// `[a-z0-9_-]{1,64}`, unique among live keys.
    #[arg(long)]
    name: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

#[derive(Args)]
pub(super) struct KeyRevokeArgs {
    /// The key's name.
    name: String,
    #[command(flatten)]
    database: DatabaseSettings,
}

pub(super) async fn run(command: KeyCommand) -> Result<(), CliError> {
    match command {
        KeyCommand::Add(args) => add(args).await,
        KeyCommand::List(database) => list(database).await,
        KeyCommand::Revoke(args) => revoke(args).await,
    }
}

/// `baton key add --name NAME`: the key alone on one line.
async fn add(args: KeyAddArgs) -> Result<(), CliError> {
    let name = args.name;
    if !api_keys::valid_name(&name) {
        return Err(CliError::Refused(format!(
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
        .await?;
    if added.is_none() {
        return Err(CliError::Refused(format!(
            "a live key is named {name} already; revoke it first or choose another name"
        )));
    }
    println!("{key}");
    Ok(())
}

/// `baton key list`: name, created, last used; never the key.
async fn list(database: DatabaseSettings) -> Result<(), CliError> {
    let db = open(&database)?;
    let keys = db
        .read(|conn| ApiKey::live(conn).map_err(AppError::from))
        .await?;
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
async fn revoke(args: KeyRevokeArgs) -> Result<(), CliError> {
    let db = open(&args.database)?;
    let name = args.name;
    let revoked = db
        .write(None, {
            let name = name.clone();
            move |tx| ApiKey::revoke(tx.conn, &name, tx.now).map_err(AppError::from)
        })
        .await?;
    if !revoked {
        return Err(CliError::Refused(format!("no live key is named {name}")));
    }
    println!("revoked {name}: it is refused from now on");
    Ok(())
}
