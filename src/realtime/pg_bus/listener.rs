//! The listener: one dedicated connection per instance that reads the
//! stream whenever a commit wakes it (its own instance directly, the others
//! through one `NOTIFY`), and delivers the rows to the hub in id order.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_postgres::Client;

use super::connection::{connect, within, Connected, ListenError};
use super::cursor::{Cursor, READ_ROWS};
use super::{Wakeups, CHANNEL, OUTBOX_RETENTION};
use crate::realtime::hub::Hub;

/// While the reader waits at a gap (or has more to read), it looks again
/// after this, doubling up to [`RECHECK_MAX`].
const RECHECK_MIN: Duration = Duration::from_millis(1);
const RECHECK_MAX: Duration = Duration::from_millis(50);
/// With nothing pending and nobody waking it, the listener still looks this
/// often (a lost wake-up costs at most this much delay).
const IDLE_RECHECK: Duration = Duration::from_secs(1);
/// The least time between two outbox reads, and between two wake-up
/// NOTIFYs: under load one read or one NOTIFY then serves every commit of
/// that millisecond, instead of each commit costing the database a
/// statement more. A wake-up after a quiet moment is served at once: the
/// window only spaces out reads (and NOTIFYs) that would follow one another
/// closer than this, it never delays the first.
const BATCH_WINDOW: Duration = Duration::from_millis(1);

/// Waits out what is left of [`BATCH_WINDOW`] since `last`, if anything.
async fn spaced_from(last: Instant) {
    let since = last.elapsed();
    if since < BATCH_WINDOW {
        tokio::time::sleep(BATCH_WINDOW - since).await;
    }
}

/// Listens until the runtime stops: connects, reads the outbox whenever
/// woken, delivers to the hub. When the connection drops it reconnects and
/// resumes where it stopped; only after a gap too long for the outbox's
/// retention does it tell every tab here to resync.
///
/// `timeout` (`BATON_DB_TIMEOUT`) bounds connecting and every read: a
/// listener whose connection stalls gives it up and reconnects, as after a
/// cut.
///
/// `from` is where delivery starts: [`outbox_end`] read before the server
/// took its first request, so that a change committed after a tab joined is
/// delivered even if the listener connects later than the tab.
pub async fn listen(
    url: String,
    hub: Arc<Hub>,
    wakeups: Arc<Wakeups>,
    timeout: Duration,
    from: Option<i64>,
) {
    const FIRST_RETRY: Duration = Duration::from_millis(100);
    let mut backoff = FIRST_RETRY;
    let mut cursor: Option<Cursor> = from.map(|next_id| Cursor {
        next_id,
        gap: None,
        read_at: Instant::now(),
    });
    loop {
        let started = Instant::now();
        match listen_once(&url, &hub, &wakeups, &mut cursor, timeout).await {
            Ok(()) => tracing::warn!("event listener connection closed; reconnecting"),
            Err(e) => tracing::warn!(error = %e, "event listener failed; reconnecting"),
        }
        metrics::counter!("baton_bus_reconnects_total").increment(1);
        // Back off while connecting fails; a connection that served (read
        // the outbox) starts the backoff over.
        if cursor.as_ref().is_some_and(|c| c.read_at >= started) {
            backoff = FIRST_RETRY;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn listen_once(
    url: &str,
    hub: &Hub,
    wakeups: &Arc<Wakeups>,
    cursor: &mut Option<Cursor>,
    timeout: Duration,
) -> Result<(), ListenError> {
    let Connected {
        client,
        heard,
        own_pid,
        driver,
    } = connect(url, timeout).await?;
    let client = Arc::new(client);
    let outcome = read_until_closed(&client, hub, wakeups, &heard, &own_pid, cursor, timeout).await;
    driver.abort();
    outcome
}

async fn read_until_closed(
    client: &Arc<Client>,
    hub: &Hub,
    wakeups: &Arc<Wakeups>,
    heard: &Notify,
    own_pid: &AtomicI32,
    cursor: &mut Option<Cursor>,
    timeout: Duration,
) -> Result<(), ListenError> {
    let read = start_listening(client, own_pid, timeout).await?;
    let cursor = place_cursor(client, hub, cursor, timeout).await?;
    tracing::debug!("event listener ready");
    let poker = spawn_poker(client.clone(), wakeups.clone());
    let outcome = read_rows(client, &read, hub, wakeups, heard, cursor, timeout).await;
    poker.abort();
    outcome
}

/// LISTENs on this connection and prepares the read of the stream; the
/// connection's backend pid goes to `own_pid`.
async fn start_listening(
    client: &Client,
    own_pid: &AtomicI32,
    timeout: Duration,
) -> Result<tokio_postgres::Statement, ListenError> {
    // This connection only ever reads the stream by id from a cursor near
    // its end: an index scan is always right. The planner would pick a
    // sequential scan while the table's statistics are missing or stale (a
    // new database, a busy minute before autovacuum's ANALYZE), and keep it
    // in the prepared plan: every read then scans every row, audit trail
    // included.
    within(
        timeout,
        client.batch_execute(&format!("SET enable_seqscan = off; LISTEN {CHANNEL}")),
    )
    .await?;
    let pid: i32 = within(timeout, client.query_one("SELECT pg_backend_pid()", &[]))
        .await?
        .get(0);
    own_pid.store(pid, Ordering::Relaxed);
    within(timeout, client.prepare(READ_ROWS)).await
}

/// Where reading resumes: the last connection's cursor if it is recent
/// enough that no row it missed is gone; else every tab resyncs and reading
/// starts at what commits from now on.
async fn place_cursor<'c>(
    client: &Client,
    hub: &Hub,
    cursor: &'c mut Option<Cursor>,
    timeout: Duration,
) -> Result<&'c mut Cursor, ListenError> {
    let resumed = match cursor.take() {
        Some(c) if c.read_at.elapsed() < OUTBOX_RETENTION / 2 => Some(c),
        gone => {
            if gone.is_some() {
                hub.resync_all("The server lost its event feed for a moment; reload the case.");
            }
            None
        }
    };
    Ok(match resumed {
        Some(c) => cursor.insert(c),
        None => {
            // From now on: whatever commits from here is delivered.
            let row = within(
                timeout,
                client.query_one("SELECT coalesce(max(id), 0) + 1 FROM events", &[]),
            )
            .await?;
            cursor.insert(Cursor {
                next_id: row.get(0),
                gap: None,
                read_at: Instant::now(),
            })
        }
    })
}

/// NOTIFYs the other instances whenever this one published, spaced out.
fn spawn_poker(client: Arc<Client>, wakeups: Arc<Wakeups>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let notify = format!("NOTIFY {CHANNEL}");
        loop {
            wakeups.remote.notified().await;
            let sent = Instant::now();
            if client.batch_execute(&notify).await.is_err() {
                return;
            }
            spaced_from(sent).await;
        }
    })
}

/// Reads the stream from `cursor` whenever woken (a local publish, a
/// NOTIFY, or the recheck), until the connection closes or a read fails.
async fn read_rows(
    client: &Client,
    read: &tokio_postgres::Statement,
    hub: &Hub,
    wakeups: &Wakeups,
    heard: &Notify,
    cursor: &mut Cursor,
    timeout: Duration,
) -> Result<(), ListenError> {
    let mut recheck = RECHECK_MIN;
    loop {
        if client.is_closed() {
            return Ok(());
        }
        let read_started = Instant::now();
        let rows = within(timeout, client.query(read, &[&cursor.next_id])).await?;
        cursor.read_at = Instant::now();
        let pending = cursor.advance(&rows, hub);
        if let Some(gap) = cursor
            .gap
            .as_mut()
            .filter(|g| g.reads >= 2 && g.barrier.is_none())
        {
            // Any transaction id taken now is newer than the gap's holders'.
            let row = within(
                timeout,
                client.query_one("SELECT pg_current_xact_id()::text::bigint", &[]),
            )
            .await?;
            gap.barrier = Some(row.get(0));
        }
        let wait = if pending {
            let wait = recheck;
            recheck = (recheck * 2).min(RECHECK_MAX);
            wait
        } else {
            recheck = RECHECK_MIN;
            IDLE_RECHECK
        };
        tokio::select! {
            _ = wakeups.local.notified() => {}
            _ = heard.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        spaced_from(read_started).await;
    }
}
