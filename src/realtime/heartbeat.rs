//! Once per heartbeat interval, in one transaction for the whole instance:
//! extend the leases of the tabs that answered a ping, mark this instance's
//! tabs as seen, and remove the tabs of instances that stopped.

use std::collections::HashSet;
use std::sync::Mutex;

use super::Realtime;
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::locks::engine::tabs as lease;
use crate::models::{AuthToken, Presence, Tab};

/// Tabs that answered a ping (or sent their own) since the last beat.
#[derive(Default)]
pub struct Heartbeats {
    answered: Mutex<HashSet<Tab>>,
}

impl Heartbeats {
    pub fn answered(&self, tab: &Tab) {
        let mut answered = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        if !answered.contains(tab) {
            answered.insert(tab.clone());
        }
    }

    fn take(&self) -> Vec<Tab> {
        let mut answered = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        answered.drain().collect()
    }
}

/// One beat; see the module docs.
pub async fn beat(rt: &Realtime) -> AppResult<()> {
    let tabs = rt.heartbeats.take();
    let instance_id = rt.instance_id.clone();
    let ttl = rt.policy.ttl;
    let presence_ttl = rt.timing.presence_ttl();
    let stale_cases = rt
        .db
        .write(None, move |tx| {
            lease::renew_for_tabs(tx.conn, &tabs, tx.now, ttl)?;
            Presence::touch_instance(tx.conn, &instance_id, tx.now)?;
            let stale_before = clock::before(tx.now, presence_ttl);
            Ok::<_, crate::error::AppError>(Presence::delete_stale(
                tx.conn,
                &instance_id,
                stale_before,
            )?)
        })
        .await?;
    for case_id in stale_cases {
        rt.presence.changed(case_id);
    }
    // Its own transaction: holding outbox rows while waiting for another
    // instance's presence rows (or the reverse) could deadlock two beats.
    rt.db
        .write(None, |tx| {
            crate::realtime::pg_bus::prune_outbox(tx.conn, tx.now)?;
            // Expired login tokens: their JWTs no longer verify anyway.
            AuthToken::prune_expired(tx.conn, tx.now)?;
            Ok::<_, AppError>(())
        })
        .await?;
    Ok(())
}

/// Runs [`beat`] every heartbeat interval until the runtime stops.
pub async fn run(rt: Realtime) {
    let period = rt.timing.heartbeat_interval;
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Err(e) = beat(&rt).await {
            tracing::warn!(error = %e, "heartbeat pass failed; retrying next beat");
        }
    }
}
