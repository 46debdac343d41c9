//! The listener's own connection (tokio-postgres, not the pool's): set up
//! so that a stalled peer is given up on, with TLS where the build has it,
//! and a task that turns other instances' `NOTIFY`s into wake-ups.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
#[cfg(not(feature = "postgres-tls"))]
use tokio_postgres::NoTls;
use tokio_postgres::{AsyncMessage, Client};

use super::LISTENER_NAME;

/// Refuses, with what to do instead, a `DATABASE_URL` the event listener
/// cannot use: one tokio-postgres cannot read, or `sslmode=require` in a
/// build without TLS (feature `postgres-tls`). Checked before the server
/// starts, so that the listener never retries a hopeless connection.
pub fn check_listener_url(url: &str) -> Result<(), String> {
    let config: tokio_postgres::Config = url.parse().map_err(|e| {
        format!(
            "DATABASE_URL cannot be used for the event listener ({e}); it takes \
             postgres:// URLs with sslmode disable, prefer or require."
        )
    })?;
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require
        && !cfg!(feature = "postgres-tls")
    {
        return Err(
            "DATABASE_URL asks for sslmode=require, but this baton was built without \
             TLS for PostgreSQL: build it with `cargo build --release --features postgres-tls` \
             (needs OpenSSL headers), or drop sslmode=require."
                .into(),
        );
    }
    Ok(())
}

/// The listener's TLS connector (feature `postgres-tls`). Like libpq's
/// `sslmode=require`, it encrypts without verifying the server's
/// certificate; `prefer` uses it when the server offers TLS.
#[cfg(feature = "postgres-tls")]
fn tls() -> Result<postgres_native_tls::MakeTlsConnector, ListenError> {
    let connector = native_tls::TlsConnector::builder()
        .danger_accept_invalid_certs(true)
        .danger_accept_invalid_hostnames(true)
        .build()
        .map_err(|e| ListenError::Tls(e.to_string()))?;
    Ok(postgres_native_tls::MakeTlsConnector::new(connector))
}

/// Why the listener's connection ended.
#[derive(Debug, thiserror::Error)]
pub(super) enum ListenError {
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    #[error("the database did not answer within {0:?}")]
    Timeout(Duration),
    #[cfg(feature = "postgres-tls")]
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

/// A connected listener: the client, what wakes the reader (another
/// instance's `NOTIFY`, or the connection ending), this connection's own
/// backend pid (whose `NOTIFY`s are not another instance's), and the task
/// that drives the connection.
pub(super) struct Connected {
    pub client: Client,
    pub heard: Arc<Notify>,
    pub own_pid: Arc<AtomicI32>,
    pub driver: JoinHandle<()>,
}

/// Connects the listener, bounded by `timeout`.
pub(super) async fn connect(url: &str, timeout: Duration) -> Result<Connected, ListenError> {
    let mut config: tokio_postgres::Config = url.parse()?;
    // So operators (and tests) can tell this connection apart in pg_stat_activity.
    config.application_name(LISTENER_NAME);
    // A peer that stops acknowledging is given up on like the pool's
    // connections are (see `crate::db::connect_bounded`).
    config.connect_timeout(timeout);
    config.keepalives(true);
    config.keepalives_idle(timeout.max(Duration::from_secs(1)));
    #[cfg(target_os = "linux")]
    config.tcp_user_timeout(timeout);
    #[cfg(feature = "postgres-tls")]
    let (client, mut connection) = config.connect(tls()?).await?;
    #[cfg(not(feature = "postgres-tls"))]
    let (client, mut connection) = config.connect(NoTls).await?;
    // Other instances' NOTIFYs wake the reader; this connection's own do not
    // (its instance woke the reader directly).
    let heard = Arc::new(Notify::new());
    let own_pid = Arc::new(AtomicI32::new(0));
    let driver = tokio::spawn({
        let heard = heard.clone();
        let own_pid = own_pid.clone();
        async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(n))) => {
                        if n.process_id() != own_pid.load(Ordering::Relaxed) {
                            heard.notify_one();
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "event listener connection error");
                        break;
                    }
                    None => break,
                }
            }
            heard.notify_one();
        }
    });
    Ok(Connected {
        client,
        heard,
        own_pid,
        driver,
    })
}

/// `call`, or [`ListenError::Timeout`] when it takes longer than `timeout`.
pub(super) async fn within<T>(
    timeout: Duration,
    call: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, ListenError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(outcome) => Ok(outcome?),
        Err(_) => Err(ListenError::Timeout(timeout)),
    }
}
