//! One database call's progress, and each request's time budget: what lets
//! a request give up on the database without leaving a write half-known.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use super::TimeoutOutcome;

/// One database call's progress, shared by the request that waits for it
/// and the blocking thread that runs it. The request gives up (after
/// `BATON_DB_TIMEOUT`) only from `RUNNING`, which the thread then sees
/// before it would commit, so a write given up on rolls back; once the
/// thread is `COMMITTING`, giving up leaves the outcome unknown.
pub(super) struct CallState(pub(super) AtomicU8);

pub(super) const RUNNING: u8 = 0;
const COMMITTING: u8 = 1;
const ABANDONED: u8 = 2;
const ABANDONED_COMMITTING: u8 = 3;

impl CallState {
    /// The thread is about to commit (or to run a statement that commits on
    /// its own); false if the request has given up already.
    pub(super) fn may_commit(&self) -> bool {
        self.0
            .compare_exchange(RUNNING, COMMITTING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// The request gives up; what the call leaves behind.
    pub(super) fn abandon(&self) -> TimeoutOutcome {
        match self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| match s {
                RUNNING => Some(ABANDONED),
                COMMITTING => Some(ABANDONED_COMMITTING),
                _ => None,
            }) {
            Ok(COMMITTING) => TimeoutOutcome::Unknown,
            _ => TimeoutOutcome::NotApplied,
        }
    }

    pub(super) fn abandoned(&self) -> bool {
        self.0.load(Ordering::SeqCst) >= ABANDONED
    }
}

tokio::task_local! {
    /// How long the current request has waited for the database so far.
    static DB_WAITED: Cell<Duration>;
}

/// Runs a request's future with its own database time budget: all its
/// database calls together wait at most `BATON_DB_TIMEOUT`. (Outside such a
/// scope, background tasks for instance, each call has the whole timeout.)
pub async fn with_request_budget<F: Future>(future: F) -> F::Output {
    DB_WAITED.scope(Cell::new(Duration::ZERO), future).await
}

pub(super) fn budget_left(limit: Duration) -> Duration {
    DB_WAITED
        .try_with(|waited| limit.saturating_sub(waited.get()))
        .unwrap_or(limit)
}

pub(super) fn record_wait(elapsed: Duration) {
    let _ = DB_WAITED.try_with(|waited| waited.set(waited.get() + elapsed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_given_up_on_before_its_commit_never_commits() {
        let state = CallState(AtomicU8::new(RUNNING));
        assert_eq!(state.abandon(), TimeoutOutcome::NotApplied);
        assert!(state.abandoned());
        assert!(!state.may_commit());

        let state = CallState(AtomicU8::new(RUNNING));
        assert!(state.may_commit());
        assert_eq!(state.abandon(), TimeoutOutcome::Unknown);
        assert!(state.abandoned());
    }
}
