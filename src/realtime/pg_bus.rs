//! The PostgreSQL event bus, for one or several instances on one database.
//! Each broadcast is sent with `NOTIFY` inside the writing transaction, so it
//! is delivered if and only if the write commits, and to every instance in
//! commit order. Each instance `LISTEN`s on a dedicated connection and hands
//! what arrives to its own hub — its own broadcasts included, so that all
//! tabs see one order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Array, Text};
use serde::{Deserialize, Serialize};
use tokio_postgres::{AsyncMessage, NoTls};

use super::hub::Hub;
use crate::clock;
use crate::db::schema::event_outbox;
use crate::db::{Database, DbConn, DbError, EventBus, Frame, Outgoing};

const CHANNEL: &str = "baton_events";
/// NOTIFY payloads must stay under 8000 bytes; larger ones go by reference.
const MAX_INLINE: usize = 7_900;
/// How long a by-reference payload is kept for listeners to read.
pub const OUTBOX_RETENTION: Duration = Duration::from_secs(60);

/// What travels in one notification. `n` makes every payload distinct:
/// PostgreSQL merges identical notifications of one transaction.
#[derive(Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "lowercase")]
enum Wire {
    Frame {
        n: u64,
        case: i64,
        text: String,
        /// When the writer staged it (Unix microseconds): for the fan-out
        /// delay metric. Absent from older instances' payloads.
        #[serde(default)]
        at: i64,
    },
    Kick {
        n: u64,
        session: String,
        reason: String,
    },
    Ref {
        n: u64,
        id: i64,
    },
}

pub struct PgBus {
    sequence: AtomicU64,
}

impl PgBus {
    pub fn new() -> PgBus {
        PgBus {
            sequence: AtomicU64::new(0),
        }
    }

    fn wire(&self, outgoing: &Outgoing) -> Wire {
        let n = self.sequence.fetch_add(1, Ordering::Relaxed);
        match outgoing {
            Outgoing::Kick { session_id, reason } => Wire::Kick {
                n,
                session: session_id.clone(),
                reason: reason.clone(),
            },
            Outgoing::Frame(frame) => Wire::Frame {
                n,
                case: frame.case_id,
                text: frame.text.to_string(),
                at: chrono::Utc::now().timestamp_micros(),
            },
        }
    }
}

impl Default for PgBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus for PgBus {
    fn stage(&self, conn: &mut DbConn, outgoing: &[Outgoing]) -> QueryResult<()> {
        let DbConn::Postgresql(pg) = conn else {
            return Ok(());
        };
        if outgoing.is_empty() {
            return Ok(());
        }
        let now = clock::now();
        let mut payloads = Vec::with_capacity(outgoing.len());
        for wire in outgoing.iter().map(|o| self.wire(o)) {
            let payload = serde_json::to_string(&wire).unwrap_or_default();
            if payload.len() <= MAX_INLINE {
                payloads.push(payload);
                continue;
            }
            let id: i64 = diesel::insert_into(event_outbox::table)
                .values((
                    event_outbox::payload.eq(&payload),
                    event_outbox::created_at.eq(now),
                ))
                .returning(event_outbox::id)
                .get_result(pg)?;
            let n = self.sequence.fetch_add(1, Ordering::Relaxed);
            payloads.push(serde_json::to_string(&Wire::Ref { n, id }).unwrap_or_default());
        }
        // One round trip for all of them, queued in order.
        diesel::sql_query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload")
            .bind::<Text, _>(CHANNEL)
            .bind::<Array<Text>, _>(payloads)
            .execute(pg)?;
        Ok(())
    }

    fn committed(&self, _outgoing: Vec<Outgoing>) {
        // Delivered by the listener, in commit order across instances.
    }
}

/// Deletes by-reference payloads old enough that every listener has read them.
pub fn prune_outbox(conn: &mut DbConn, now: chrono::NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(
        event_outbox::table
            .filter(event_outbox::created_at.lt(clock::before(now, OUTBOX_RETENTION))),
    )
    .execute(conn)
}

/// Listens until the runtime stops: connects, `LISTEN`s, delivers to the
/// hub; when the connection drops, reconnects and tells every tab here to
/// resync (notifications sent meanwhile are lost).
pub async fn listen(url: String, hub: Arc<Hub>, db: Database) {
    let mut backoff = Duration::from_millis(100);
    let mut first = true;
    loop {
        match listen_once(&url, &hub, &db, &mut first).await {
            Ok(()) => tracing::warn!("event listener connection closed; reconnecting"),
            Err(e) => tracing::warn!(error = %e, "event listener failed; reconnecting"),
        }
        metrics::counter!("baton_bus_reconnects_total").increment(1);
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn listen_once(url: &str, hub: &Hub, db: &Database, first: &mut bool) -> Result<(), String> {
    let (client, mut connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let (tx, mut notifications) = tokio::sync::mpsc::unbounded_channel::<String>();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_owned()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "event listener connection error");
                    return;
                }
                None => return,
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await
        .map_err(|e| e.to_string())?;
    if !std::mem::take(first) {
        hub.resync_all("The server lost its event feed for a moment; reload the case.");
    }
    tracing::debug!("event listener ready");
    while let Some(payload) = notifications.recv().await {
        deliver(hub, db, &payload).await;
    }
    driver.abort();
    Ok(())
}

async fn deliver(hub: &Hub, db: &Database, payload: &str) {
    let wire = match serde_json::from_str::<Wire>(payload) {
        Ok(Wire::Ref { id, .. }) => {
            let fetched = db
                .read(move |conn| {
                    event_outbox::table
                        .find(id)
                        .select(event_outbox::payload)
                        .get_result::<String>(conn)
                        .optional()
                        .map_err(DbError::from)
                })
                .await;
            match fetched.map(|p| p.and_then(|p| serde_json::from_str::<Wire>(&p).ok())) {
                Ok(Some(wire)) => wire,
                Ok(None) => return tracing::warn!(id, "event payload missing from the outbox"),
                Err(e) => return tracing::warn!(error = %e, id, "cannot read an event payload"),
            }
        }
        Ok(wire) => wire,
        Err(e) => return tracing::warn!(error = %e, "unreadable event notification"),
    };
    match wire {
        Wire::Frame { case, text, at, .. } => {
            if at > 0 {
                let delay = chrono::Utc::now().timestamp_micros().saturating_sub(at);
                metrics::histogram!("baton_fanout_delay_seconds").record(delay.max(0) as f64 / 1e6);
            }
            hub.publish(Frame {
                case_id: case,
                text: text.into(),
            })
        }
        Wire::Kick {
            session, reason, ..
        } => hub.kick(&session, &reason),
        Wire::Ref { .. } => tracing::warn!("an event reference pointed to another reference"),
    }
}
