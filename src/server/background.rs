//! The tasks that run beside the requests: the reaper, the backups, the
//! relay of other processes' commits (SQLite), the heartbeats, presence and
//! the event listener (PostgreSQL).

use crate::db::Backend;
use crate::locks::engine::{self, retention::AuditRetention};
use crate::realtime::pg_bus;
use crate::realtime::{heartbeat, presence};
use crate::state::AppState;

use super::StartError;

/// Spawns every background task on the current runtime.
pub(super) fn spawn_background_tasks(state: &AppState) -> Result<(), StartError> {
    spawn_reaper(state);
    if let Some(schedule) =
        crate::backup::Schedule::from_settings(&state.settings).map_err(StartError::Setting)?
    {
        actix_web::rt::spawn(crate::backup::run(schedule));
    }
    if state.db.backend() == Backend::Sqlite {
        spawn_relay(state);
    }
    actix_web::rt::spawn(heartbeat::run(state.realtime.clone()));
    actix_web::rt::spawn(presence::run(state.realtime.clone()));
    spawn_event_listener(state);
    Ok(())
}

fn spawn_reaper(state: &AppState) {
    let audit_retention = state.settings.audit_retention.map(|keep| AuditRetention {
        keep,
        frames_live: pg_bus::OUTBOX_RETENTION,
    });
    actix_web::rt::spawn(engine::run_reaper(
        state.db.clone(),
        state.policy,
        state.settings.reaper_interval,
        audit_retention,
    ));
}

/// What `baton` commands commit in other processes, from now on.
fn spawn_relay(state: &AppState) {
    let from = state
        .db
        .pool()
        .get()
        .ok()
        .and_then(|mut conn| pg_bus::outbox_end(&mut conn).ok());
    actix_web::rt::spawn(crate::realtime::relay::run(
        state.db.clone(),
        state.realtime.hub.clone(),
        state.settings.reaper_interval,
        from.unwrap_or(1),
    ));
}

/// On PostgreSQL: every instance's commits, from the outbox.
fn spawn_event_listener(state: &AppState) {
    let Some(wakeups) = &state.realtime.bus_wakeups else {
        return;
    };
    // Where delivery starts, read before the first request (the
    // listener itself may connect later).
    let from = match state.db.pool().get() {
        Ok(mut conn) => pg_bus::outbox_end(&mut conn).ok(),
        Err(_) => None,
    };
    if from.is_none() {
        tracing::warn!("cannot read the outbox's end; the event listener will when it connects");
    }
    actix_web::rt::spawn(pg_bus::listen(
        state.settings.database.database_url.clone(),
        state.realtime.hub.clone(),
        wakeups.clone(),
        state.settings.database.db_timeout,
        from,
    ));
}
