//! Ends locks whose lease ran out (`expired`) or that saw no activity for the
//! idle timeout (`idle`), handing each record to its line, and waiters whose
//! lease ran out, every `BATON_REAPER_INTERVAL`; with
//! `BATON_AUDIT_RETENTION`, also deletes a batch of audit rows past it.

use std::time::Duration;

use super::retention::{self, AuditRetention};
use crate::clock;
use crate::db::{Database, Tx};
use crate::error::AppResult;
use crate::locks::holding::{end, overdue, Line};
use crate::locks::policy::LockPolicy;
use crate::models::{Lock, LockAction};

/// Locks ended per transaction; a longer backlog is worked off tick by tick.
const BATCH: i64 = 500;

/// Ends every overdue lock (up to a batch); returns how many it ended.
pub fn reap(tx: &mut Tx, policy: &LockPolicy) -> AppResult<usize> {
    let idle_before = clock::before(tx.now, policy.idle_timeout);
    let mut ended = 0;
    for held in Lock::due(tx.conn, tx.now, idle_before, BATCH)? {
        if let Some(reason) = overdue(&held.lock, tx.now, policy) {
            if end(tx, &held, reason, None, Line::HandOff(policy))? {
                ended += 1;
                // How long after it fell due the lock was ended.
                let due = match reason {
                    LockAction::Idle => {
                        clock::after(held.lock.last_activity_at, policy.idle_timeout)
                    }
                    _ => held.lock.expires_at,
                };
                let lag = (tx.now - due).to_std().unwrap_or_default().as_secs_f64();
                tx.after_commit(move || {
                    metrics::histogram!("baton_reaper_lag_seconds").record(lag)
                });
            }
        }
    }
    // Waiters whose tab stopped answering; a hand-off above skipped them.
    ended += crate::locks::line::reap(tx, BATCH)?;
    Ok(ended)
}

/// Runs [`reap`] every `interval` until the runtime stops, and with a
/// retention one batch of [`retention::prune_due`] after it (in its own
/// transaction: locks are ended on time whatever the trail's size).
pub async fn run(
    db: Database,
    policy: LockPolicy,
    interval: Duration,
    audit_retention: Option<AuditRetention>,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match db.write(None, move |tx| reap(tx, &policy)).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(ended = n, "reaper ended overdue locks"),
            Err(e) => tracing::warn!(error = %e, "reaper pass failed; retrying next tick"),
        }
        let Some(retention) = audit_retention else {
            continue;
        };
        match db
            .write(None, move |tx| retention::prune_due(tx, &retention))
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::debug!(deleted = n, "audit rows past the retention deleted"),
            Err(e) => tracing::warn!(error = %e, "audit retention pass failed; retrying next tick"),
        }
    }
}
