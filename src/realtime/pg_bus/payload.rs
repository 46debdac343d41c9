//! What one event row carries, written by the general path's staging and by
//! the lock fast path's SQL, and delivered to this instance's hub.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::db::{Frame, KickReason, Outgoing, Tabs};
use crate::locks::render;
use crate::models::{LockNotice, SavedRecord};
use crate::realtime::hub::Hub;

/// One event row's payload: what the general path stages (`Frame`,
/// `Close`) and what the lock fast path's SQL writes (`Lock`),
/// read back by every listener. One type for
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
    /// Tabs to close, wherever they are connected.
    Close { tabs: Tabs, reason: KickReason },
    /// An admin's kick of every tab with one session id, as the previous
    /// release wrote it: read while a rolling upgrade runs both.
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
            Outgoing::Close { tabs, reason } => OutboxPayload::Close {
                tabs: tabs.clone(),
                reason: *reason,
            },
            Outgoing::Frame(frame) => OutboxPayload::Frame {
                case: frame.case_id,
                text: Cow::Borrowed(&frame.text),
                at: chrono::Utc::now().timestamp_micros(),
            },
        }
    }
}

/// Hands one row's payload to the hub.
pub(crate) fn deliver(hub: &Hub, payload: &str) {
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
        Ok(OutboxPayload::Close { tabs, reason }) => hub.close(&tabs, reason),
        Ok(OutboxPayload::Kick { session, .. }) => hub.close(
            &Tabs::Session {
                session: session.into_owned(),
                user: None,
            },
            KickReason::Kicked,
        ),
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
