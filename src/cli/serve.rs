//! `baton serve` (and `baton` alone): the HTTP server.

use std::net::TcpListener;

use clap::Args;
use rand::Rng;

use super::CliError;
use crate::config::Settings;
use crate::demo::SeedError;
use crate::server::{self, StartError};

#[derive(Args)]
pub(super) struct ServeArgs {
    #[command(flatten)]
    settings: Settings,
    /// Seed alice, bob and carol (password `demo`) and a sample case; implies
    /// --dev. Refused on a database that holds anyone else.
    #[arg(long)]
    demo: bool,
    /// Without BATON_JWT_SECRET, use a random one (tokens die with the
    /// process); a secret that is set must still be at least 32 bytes.
    #[arg(long)]
    dev: bool,
}

pub(super) async fn serve(args: ServeArgs) -> Result<(), CliError> {
    // Set but empty (a `.env` copied from `.env.example`) is not set.
    let given = args.settings.jwt_secret.as_ref().filter(|s| !s.is_empty());
    let secret = match (given, args.dev || args.demo) {
        (Some(secret), _) => secret.clone().into_bytes(),
        (None, true) => {
            tracing::warn!(
                "no BATON_JWT_SECRET: using a random secret; tokens end when baton stops"
            );
            let bytes: [u8; 32] = rand::rng().random();
            bytes.to_vec()
        }
        (None, false) => {
            return Err(CliError::Failed(
                "BATON_JWT_SECRET is not set. Set it (at least 32 random bytes: \
                 `openssl rand -hex 32`), or run `baton serve --dev` to try baton with a \
                 throwaway secret."
                    .to_owned(),
            ))
        }
    };
    #[cfg(unix)]
    raise_open_file_limit(args.settings.database.db_pool_size);
    let bind = args.settings.bind.clone();
    let mut settings = args.settings;
    settings.demo = args.demo;
    let demo_data = crate::demo::demo_data(settings.database.schema.as_deref());
    let state = server::build_state(settings, &secret)?;
    if args.demo {
        crate::demo::seed(&state.db, demo_data)
            .await
            .map_err(|e| match e {
                SeedError::NotItsOwn(_) => CliError::Refused(e.to_string()),
                SeedError::Failed(e) => CliError::Failed(format!("seeding the demo failed: {e}")),
            })?;
        tracing::info!("demo data ready: sign in as alice@example.com, bob@example.com or carol@example.com with password `demo`");
    }
    let listener = TcpListener::bind(&bind).map_err(|source| {
        CliError::failed(StartError::Bind {
            addr: bind.clone(),
            source,
        })
    })?;
    tracing::info!(
        "baton listening on http://{}",
        listener.local_addr().map_err(CliError::failed)?
    );
    server::run(state, listener).await.map_err(CliError::failed)
}

/// Each open tab is a socket: room for as many as the hard limit allows.
/// Serving goes on with the limit it has; tabs past it are refused.
#[cfg(unix)]
fn raise_open_file_limit(pool_size: u32) {
    match server::raise_open_file_limit(pool_size) {
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
        Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
    }
}
