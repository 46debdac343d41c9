//! The PostgreSQL event bus, for one or several instances on one database.
//!
//! A broadcast is a row of `events` (the event stream, whose rows with an
//! `action` are also the audit trail), written by the same transaction as
//! the change it announces: it exists if and only if the change committed. After the commit the writer wakes its own listener and sends
//! one `NOTIFY` (outside the transaction) to wake the others. `NOTIFY`
//! inside the write transaction would serialize every commit of the
//! database behind one lock, WAL flush included.
//!
//! Each instance reads the stream on one dedicated connection and hands the
//! rows to its hub strictly in id order. Two conflicting writes are ordered
//! by their row locks, and the second takes its event ids (just before its
//! commit) after the first committed; so every tab on every instance sees
//! conflicting changes in commit order. A missing id is a transaction that
//! has its id but has not committed yet: the reader waits for it. If the gap
//! outlasts a second read, the reader takes a fresh transaction id as a
//! barrier; it skips the missing ids once a snapshot's `xmin` has passed the
//! barrier (every transaction that could hold them has ended, so they rolled
//! back). This relies on every transaction having written something (and so
//! holding a transaction id) before it takes an event id, which every write
//! path does: it publishes what it wrote.

use std::borrow::Cow;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
#[cfg(not(feature = "postgres-tls"))]
use tokio_postgres::NoTls;
use tokio_postgres::{AsyncMessage, Client};

use super::hub::Hub;
use crate::clock;
use crate::db::schema::events;
use crate::db::{DbConn, Event, EventBus, Frame, Outgoing, Prepared};
use crate::locks::render;
use crate::models::lock_fast_path::LockNotice;
use crate::models::lock_fast_path::SavedRecord;

const CHANNEL: &str = "baton_events";
/// The listener connection's `application_name`.
pub const LISTENER_NAME: &str = "baton event listener";
/// How long rows that only carry a frame are kept (audit rows stay): a
/// listener that reconnects within half of this resumes where it stopped,
/// and misses nothing.
pub const OUTBOX_RETENTION: Duration = Duration::from_secs(60);
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
/// statement more.
const BATCH_WINDOW: Duration = Duration::from_millis(1);

/// Event rows from `$1` on, in id order, with the `xmin` of the snapshot
/// they were read in (every transaction below it has ended). Rows without a
/// frame (audit entries written where no bus reads them) are read too: a
/// missing id is a gap to wait at, so every id must be seen.
const READ_ROWS: &str = "\
    SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin, o.id, o.payload \
    FROM (SELECT 1) one LEFT JOIN LATERAL ( \
      SELECT id, payload FROM events WHERE id >= $1 ORDER BY id LIMIT 1000) o ON true \
    ORDER BY o.id";
/// The `LIMIT` above: a full batch means read again at once.
const READ_BATCH: usize = 1000;

/// One event row's payload: what the general path stages (`Frame`,
/// `Kick`) and what the lock fast path's SQL writes (`Lock`,
/// `crate::models::lock_sql`), read back by every listener. One type for
/// writing and reading; a test checks its round trip against the rows the
/// SQL writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "lowercase")]
pub enum OutboxPayload<'a> {
    Frame {
        case: i64,
        text: Cow<'a, str>,
        /// When the writer staged it (Unix microseconds): for the fan-out
        /// delay metric.
        #[serde(default)]
        at: i64,
    },
    Kick {
        session: Cow<'a, str>,
        reason: Cow<'a, str>,
    },
    /// A lock written by the fast path, rendered by the listener (boxed: it
    /// is much larger than the others).
    Lock(Box<LockNotice>),
    /// A record saved by the fast save, rendered by the listener.
    Record(Box<SavedRecord>),
}

impl OutboxPayload<'_> {
    /// What the general path stages for `outgoing`, borrowing its text.
    pub fn of(outgoing: &Outgoing) -> OutboxPayload<'_> {
        match outgoing {
            Outgoing::Kick { session_id, reason } => OutboxPayload::Kick {
                session: session_id.into(),
                reason: reason.into(),
            },
            Outgoing::Frame(frame) => OutboxPayload::Frame {
                case: frame.case_id,
                text: Cow::Borrowed(&frame.text),
                at: chrono::Utc::now().timestamp_micros(),
            },
        }
    }
}

/// A transaction's event rows, one statement: the columns bound as arrays,
/// in the order the rows were staged. A row with no audit entry takes the
/// database's clock.
const STAGE_EVENTS: &str = concat!(
    "INSERT INTO events (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, \
       action, at, payload) \
     SELECT lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, \
       coalesce(at, ",
    crate::db_now!(),
    "), payload \
     FROM unnest($1::int8[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], \
       $7::text[], $8::timestamp[], $9::text[]) WITH ORDINALITY \
       AS e(lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at, \
         payload, n) \
     ORDER BY n"
);

/// [`STAGE_EVENTS`]'s arrays.
#[derive(Default)]
struct EventColumns<'a> {
    lock_id: Vec<Option<i64>>,
    lockable_type: Vec<Option<&'a str>>,
    lockable_id: Vec<Option<i64>>,
    case_id: Vec<Option<i64>>,
    actor_id: Vec<Option<i64>>,
    holder_id: Vec<Option<i64>>,
    action: Vec<Option<&'a str>>,
    at: Vec<Option<chrono::NaiveDateTime>>,
    payload: Vec<Option<String>>,
}

impl<'a> EventColumns<'a> {
    fn of(staged: &'a [Event]) -> EventColumns<'a> {
        let mut rows = EventColumns::default();
        for event in staged {
            let audit = event.audit.as_ref();
            rows.lock_id.push(audit.map(|a| a.lock_id));
            rows.lockable_type
                .push(audit.map(|a| a.lockable_type.as_str()));
            rows.lockable_id.push(audit.map(|a| a.lockable_id));
            rows.case_id.push(audit.map(|a| a.case_id));
            rows.actor_id.push(audit.and_then(|a| a.actor_id));
            rows.holder_id.push(audit.map(|a| a.holder_id));
            rows.action.push(audit.map(|a| a.action));
            rows.at.push(audit.map(|a| a.at));
            rows.payload.push(event.outgoing.as_ref().map(|o| {
                // Serializing these plain structs cannot fail.
                serde_json::to_string(&OutboxPayload::of(o)).unwrap_or_default()
            }));
        }
        rows
    }
}

/// What a commit wakes: this instance's listener, and (through one `NOTIFY`
/// that the listener's connection sends) every other instance's.
#[derive(Default)]
pub struct Wakeups {
    local: Notify,
    remote: Notify,
}

pub struct PgBus {
    /// `None` for a command-line tool, which runs no listener: it sends its
    /// `NOTIFY` inside the transaction instead.
    wakeups: Option<Arc<Wakeups>>,
}

impl PgBus {
    /// The bus of a server; hand [`PgBus::wakeups`] to [`listen`].
    pub fn new() -> PgBus {
        PgBus {
            wakeups: Some(Arc::default()),
        }
    }

    /// The bus of a one-off command that publishes to running servers.
    pub fn for_command() -> PgBus {
        PgBus { wakeups: None }
    }

    pub fn wakeups(&self) -> Arc<Wakeups> {
        self.wakeups.clone().unwrap_or_default()
    }
}

impl Default for PgBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus for PgBus {
    /// Every event of the transaction is one row, its audit entry and its
    /// frame together: one statement for all, ids in the order given.
    fn stage(&self, conn: &mut DbConn, staged: &[Event]) -> QueryResult<()> {
        let DbConn::Postgresql(pg) = conn else {
            return Ok(());
        };
        if staged.is_empty() {
            return Ok(());
        }
        let rows = EventColumns::of(staged);
        Prepared::new(STAGE_EVENTS, |q| {
            q.bind::<Array<Nullable<BigInt>>, _>(rows.lock_id)
                .bind::<Array<Nullable<Text>>, _>(rows.lockable_type)
                .bind::<Array<Nullable<BigInt>>, _>(rows.lockable_id)
                .bind::<Array<Nullable<BigInt>>, _>(rows.case_id)
                .bind::<Array<Nullable<BigInt>>, _>(rows.actor_id)
                .bind::<Array<Nullable<BigInt>>, _>(rows.holder_id)
                .bind::<Array<Nullable<Text>>, _>(rows.action)
                .bind::<Array<Nullable<Timestamp>>, _>(rows.at)
                .bind::<Array<Nullable<Text>>, _>(rows.payload)
        })
        .execute(pg)?;
        if self.wakeups.is_none() {
            diesel::sql_query(format!("NOTIFY {CHANNEL}")).execute(pg)?;
        }
        Ok(())
    }

    fn committed(&self, outgoing: Vec<Outgoing>) {
        if !outgoing.is_empty() {
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(wakeups) = &self.wakeups {
            wakeups.local.notify_one();
            wakeups.remote.notify_one();
        }
    }
}

/// The id the next event row will have at the earliest: where a listener
/// starting now begins.
pub fn outbox_end(conn: &mut DbConn) -> QueryResult<i64> {
    let last: Option<i64> = events::table
        .select(diesel::dsl::max(events::id))
        .get_result(conn)?;
    Ok(last.unwrap_or(0) + 1)
}

/// Deletes the rows that only carried a frame, once every listener has read
/// them: every such row below the first one young enough to keep. Audit
/// rows stay. Ids grow with time, so the partial index on the frame rows'
/// ids finds them, reading only rows it deletes; `at` needs no index of its
/// own, which every write would pay for.
pub fn prune_outbox(conn: &mut DbConn, now: chrono::NaiveDateTime) -> QueryResult<usize> {
    let cutoff = clock::before(now, OUTBOX_RETENTION);
    let first_kept: Option<i64> = events::table
        .select(events::id)
        .filter(events::action.is_null())
        .filter(events::at.ge(cutoff))
        .order(events::id.asc())
        .limit(1)
        .get_result(conn)
        .optional()?;
    let stale = events::action.is_null().and(events::at.lt(cutoff));
    match first_kept {
        // The index bounds the scan. The age is checked too: a row below
        // `id` may have committed since the query above (ids are taken
        // before commit), young as it is.
        Some(id) => {
            diesel::delete(events::table.filter(events::id.lt(id)).filter(stale)).execute(conn)
        }
        // Nothing young enough to keep: every stale row may go.
        None => diesel::delete(events::table.filter(stale)).execute(conn),
    }
}

/// Where a listener is in the outbox: the next id to deliver, the gap it
/// waits at (if any), and when it last read.
struct Cursor {
    next_id: i64,
    gap: Option<Gap>,
    read_at: Instant,
}

/// Ids from `id` on are missing while later ones are visible: their
/// transactions have not committed yet, or rolled back. Once a snapshot's
/// `xmin` reaches `barrier` (a transaction id taken after the gap was seen),
/// every transaction that could hold them has ended, and the ids still
/// missing never will appear.
#[derive(Clone, Copy)]
struct Gap {
    id: i64,
    /// Reads that stopped here.
    reads: u32,
    barrier: Option<i64>,
}

impl Cursor {
    /// Delivers the rows of one read in id order, up to the first gap that
    /// may still fill. Returns whether to read again soon (waiting at a gap,
    /// or more rows than one read returns).
    fn advance(&mut self, rows: &[tokio_postgres::Row], hub: &Hub) -> bool {
        let Some(first) = rows.first() else {
            return false;
        };
        let xmin: i64 = first.get(0);
        for row in rows {
            let Some(id) = row.get::<_, Option<i64>>(1) else {
                continue;
            };
            if id > self.next_id {
                match &mut self.gap {
                    Some(gap) if gap.id == self.next_id => {
                        if gap.barrier.is_none_or(|barrier| xmin < barrier) {
                            gap.reads += 1;
                            return true;
                        }
                    }
                    _ => {
                        self.gap = Some(Gap {
                            id: self.next_id,
                            reads: 1,
                            barrier: None,
                        });
                        return true;
                    }
                }
            }
            self.gap = None;
            if let Some(payload) = row.get::<_, Option<&str>>(2) {
                deliver(hub, payload);
            }
            self.next_id = id + 1;
        }
        rows.len() >= READ_BATCH
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
enum ListenError {
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    #[error("the database did not answer within {0:?}")]
    Timeout(Duration),
    #[cfg(feature = "postgres-tls")]
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

async fn listen_once(
    url: &str,
    hub: &Hub,
    wakeups: &Arc<Wakeups>,
    cursor: &mut Option<Cursor>,
    timeout: Duration,
) -> Result<(), ListenError> {
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
    let client = Arc::new(client);
    let outcome = read_until_closed(&client, hub, wakeups, &heard, &own_pid, cursor, timeout).await;
    driver.abort();
    outcome
}

/// `call`, or [`ListenError::Timeout`] when it takes longer than `timeout`.
async fn within<T>(
    timeout: Duration,
    call: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, ListenError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(outcome) => Ok(outcome?),
        Err(_) => Err(ListenError::Timeout(timeout)),
    }
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
    let read = within(timeout, client.prepare(READ_ROWS)).await?;
    let resumed = match cursor.take() {
        Some(c) if c.read_at.elapsed() < OUTBOX_RETENTION / 2 => Some(c),
        gone => {
            if gone.is_some() {
                hub.resync_all("The server lost its event feed for a moment; reload the case.");
            }
            None
        }
    };
    let cursor = match resumed {
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
    };
    tracing::debug!("event listener ready");
    let poker = tokio::spawn({
        let client = client.clone();
        let wakeups = wakeups.clone();
        async move {
            loop {
                wakeups.remote.notified().await;
                if client
                    .batch_execute(&format!("NOTIFY {CHANNEL}"))
                    .await
                    .is_err()
                {
                    return;
                }
                tokio::time::sleep(BATCH_WINDOW).await;
            }
        }
    });
    let mut recheck = RECHECK_MIN;
    let outcome = loop {
        if client.is_closed() {
            break Ok(());
        }
        let rows = match within(timeout, client.query(&read, &[&cursor.next_id])).await {
            Ok(rows) => rows,
            Err(e) => break Err(e),
        };
        cursor.read_at = Instant::now();
        let pending = cursor.advance(&rows, hub);
        if let Some(gap) = cursor
            .gap
            .as_mut()
            .filter(|g| g.reads >= 2 && g.barrier.is_none())
        {
            // Any transaction id taken now is newer than the gap's holders'.
            match within(
                timeout,
                client.query_one("SELECT pg_current_xact_id()::text::bigint", &[]),
            )
            .await
            {
                Ok(row) => gap.barrier = Some(row.get(0)),
                Err(e) => break Err(e),
            }
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
        tokio::time::sleep(BATCH_WINDOW).await;
    };
    poker.abort();
    outcome
}

fn deliver(hub: &Hub, payload: &str) {
    match serde_json::from_str::<OutboxPayload>(payload) {
        Ok(OutboxPayload::Frame { case, text, at }) => {
            record_delay(at);
            hub.publish(Frame {
                case_id: case,
                text: text.into_owned().into(),
            })
        }
        Ok(OutboxPayload::Lock(notice)) => {
            record_delay(notice.at);
            hub.publish(render::notice_frame(*notice))
        }
        Ok(OutboxPayload::Record(saved)) => {
            record_delay(saved.at);
            match render::saved_record_frame(*saved) {
                Some(frame) => hub.publish(frame),
                None => tracing::warn!("an outbox row names a type the schema does not declare"),
            }
        }
        Ok(OutboxPayload::Kick { session, reason }) => hub.kick(&session, &reason),
        Err(e) => tracing::warn!(error = %e, "unreadable outbox row"),
    }
}

/// The fan-out delay: from the writer's statement to this hub.
fn record_delay(at: i64) {
    if at > 0 {
        let delay = chrono::Utc::now().timestamp_micros().saturating_sub(at);
        metrics::histogram!("baton_fanout_delay_seconds").record(delay.max(0) as f64 / 1e6);
    }
}
