//! SQLite: what a `baton` command commits in another process — a user
//! removed, a password changed, a schema's records dropped — reaches the
//! tabs of the server running on the same file. The command's bus writes
//! each event's frame into its row of the event stream (as PostgreSQL's bus
//! does for every write); the server, whose own rows carry no frame (it
//! delivers them in process), reads the rows that do every reaper interval
//! and hands them to its hub. SQLite's writes are serial, so ids follow
//! commit order and a row read is never followed by a lower id.

use std::time::Duration;

use diesel::prelude::*;

use super::hub::Hub;
use super::pg_bus::{deliver, OutboxPayload};
use crate::db::outbox::write_audit;
use crate::db::schema::events;
use crate::db::{Database, DbConn, Event, EventBus, Outgoing};
use crate::error::AppError;

/// Rows read at most per pass; a longer backlog is read at the next.
const BATCH: i64 = 1000;

/// The bus of a command on a SQLite file: each event is one row, its audit
/// entry and its frame, for a server on the file to deliver.
pub struct CommandBus;

impl EventBus for CommandBus {
    fn stage(&self, conn: &mut DbConn, events: &[Event]) -> QueryResult<()> {
        // In the order staged, so that ids follow it.
        for event in events {
            let Some(outgoing) = &event.outgoing else {
                write_audit(conn, std::slice::from_ref(event))?;
                continue;
            };
            // Serializing these plain structs cannot fail.
            let payload = serde_json::to_string(&OutboxPayload::of(outgoing)).unwrap_or_default();
            let audit = event.audit.as_ref();
            diesel::insert_into(events::table)
                .values((
                    events::at.eq(audit.map_or_else(crate::clock::now, |a| a.at)),
                    events::lock_id.eq(audit.map(|a| a.lock_id)),
                    events::lockable_type.eq(audit.map(|a| a.lockable_type.as_str())),
                    events::lockable_id.eq(audit.map(|a| a.lockable_id)),
                    events::case_id.eq(audit.map(|a| a.case_id)),
                    events::actor_id.eq(audit.and_then(|a| a.actor_id)),
                    events::holder_id.eq(audit.map(|a| a.holder_id)),
                    events::action.eq(audit.map(|a| a.action)),
                    events::payload.eq(Some(payload)),
                ))
                .execute(conn)?;
        }
        Ok(())
    }

    /// Nobody listens in a command's own process.
    fn committed(&self, _outgoing: Vec<Outgoing>) {}
}

/// Delivers the frames other processes wrote, from `from` on (the stream's
/// end when the server started), every `interval`, until the runtime stops.
pub async fn run(db: Database, hub: std::sync::Arc<Hub>, interval: Duration, from: i64) {
    let mut next = from;
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let rows = db
            .read(move |conn| {
                Ok::<_, AppError>(
                    events::table
                        .filter(events::id.ge(next))
                        .filter(events::payload.is_not_null())
                        .order(events::id.asc())
                        .limit(BATCH)
                        .select((events::id, events::payload))
                        .load::<(i64, Option<String>)>(conn)?,
                )
            })
            .await;
        match rows {
            Ok(rows) => {
                for (id, payload) in rows {
                    if let Some(payload) = payload {
                        deliver(&hub, &payload);
                    }
                    next = id + 1;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read commands' frames; retrying next tick")
            }
        }
    }
}
