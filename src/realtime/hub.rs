//! Fan-out inside one process. Each case has a bounded broadcast channel of
//! ready-made frames; a subscriber that falls behind sees `Lagged` and must
//! resync. Open tabs also register here so that a kick can reach them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, oneshot};

use crate::db::{EventBus, Frame, Outgoing};
use crate::models::CaseId;
use crate::views::ServerFrame;

/// How many frames a slow tab may fall behind before it must resync.
const CASE_BUFFER: usize = 256;

/// Why an open tab is told to close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closing {
    /// An admin closed it (or removed its user); the reason is shown to the tab.
    Kicked(String),
    /// This instance is shutting down: close with 1012 (service restart) so
    /// the tab reconnects, to another instance, within the grace.
    Restart,
}

/// Tells one open tab to close. A oneshot: the first word ends the tab, so
/// nothing after it is read, and it costs a tab far less memory than a
/// queue (an unbounded channel allocates a block of 32 slots up front).
pub type CloseSender = oneshot::Sender<Closing>;

/// One open channel of a session: its connection id, and its close signal
/// until the tab has been told to close.
type OpenTab = (u64, Option<CloseSender>);

#[derive(Default)]
pub struct Hub {
    cases: Mutex<HashMap<i64, broadcast::Sender<Arc<Frame>>>>,
    /// Open channels by session id (a tab may briefly have two while it
    /// reconnects); a channel's sender is taken once it has been told to close.
    tabs: Mutex<HashMap<String, Vec<OpenTab>>>,
    /// Set once the instance is shutting down: new channels are refused.
    restarting: AtomicBool,
}

impl Hub {
    pub fn subscribe(&self, case_id: CaseId) -> broadcast::Receiver<Arc<Frame>> {
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        cases
            .entry(case_id.get())
            .or_insert_with(|| broadcast::channel(CASE_BUFFER).0)
            .subscribe()
    }

    pub fn publish(&self, frame: Frame) {
        let case_id = frame.case_id;
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sender) = cases.get(&case_id) else {
            return;
        };
        if sender.send(Arc::new(frame)).is_err() {
            // Nobody listens to this case any more.
            cases.remove(&case_id);
        }
    }

    /// Tells every tab of this process to reload (after events may have been lost).
    pub fn resync_all(&self, reason: &str) {
        let text: bytestring::ByteString = ServerFrame::Resync {
            missed: None,
            reason: Some(reason.to_owned()),
        }
        .text()
        .into();
        let cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        for (case_id, sender) in cases.iter() {
            let _ = sender.send(Arc::new(Frame {
                case_id: *case_id,
                text: text.clone(),
            }));
        }
    }

    /// Registers an open channel of `session_id`; `id` tells its connections
    /// apart. Once the instance is shutting down the tab is told to restart
    /// at once.
    pub fn register_tab(&self, session_id: &str, id: u64, close: CloseSender) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        let close = if self.restarting.load(Ordering::SeqCst) {
            let _ = close.send(Closing::Restart);
            None
        } else {
            Some(close)
        };
        tabs.entry(session_id.to_owned())
            .or_default()
            .push((id, close));
        metrics::gauge!("baton_open_tabs").increment(1);
    }

    pub fn unregister_tab(&self, session_id: &str, id: u64) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = tabs.get_mut(session_id) {
            let before = list.len();
            list.retain(|(i, _)| *i != id);
            if list.len() < before {
                metrics::gauge!("baton_open_tabs").decrement(1);
            }
            if list.is_empty() {
                tabs.remove(session_id);
            }
        }
    }

    /// Open channels in this process.
    pub fn open_tabs(&self) -> usize {
        let tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        tabs.values().map(Vec::len).sum()
    }

    /// Tells every open channel of the session here to close.
    pub fn kick(&self, session_id: &str, reason: &str) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        for (_, close) in tabs.get_mut(session_id).into_iter().flatten() {
            tell(close, Closing::Kicked(reason.to_owned()));
        }
    }

    /// Shutting down: tells every open channel here to close with 1012, and
    /// any that opens from now on.
    pub fn restart_all(&self) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        self.restarting.store(true, Ordering::SeqCst);
        for (_, close) in tabs.values_mut().flatten() {
            tell(close, Closing::Restart);
        }
    }

    /// Delivers one committed frame or kick to this process's subscribers.
    pub fn deliver(&self, outgoing: Outgoing) {
        match outgoing {
            Outgoing::Kick { session_id, reason } => self.kick(&session_id, &reason),
            Outgoing::Frame(frame) => self.publish(frame),
        }
    }
}

/// Tells a tab to close, unless it has been told already (it is closing).
fn tell(close: &mut Option<CloseSender>, closing: Closing) {
    if let Some(close) = close.take() {
        let _ = close.send(closing);
    }
}

/// The single-process event bus for SQLite: delivers straight into the hub,
/// in commit order because SQLite's writes are serial.
pub struct LocalBus {
    pub hub: Arc<Hub>,
}

impl EventBus for LocalBus {
    /// Delivery is immediate here, so the fan-out delay is not measured.
    fn committed(&self, outgoing: Vec<Outgoing>) {
        for item in outgoing {
            self.hub.deliver(item);
        }
    }
}
