//! Per-case fan-out inside one process. Each case has a bounded broadcast
//! channel; a subscriber that falls behind sees `Lagged` and must resync.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use super::events::{Event, EventBus};

/// How many events a slow tab may fall behind before it must resync.
const CASE_BUFFER: usize = 256;

#[derive(Default)]
pub struct Hub {
    cases: Mutex<HashMap<i64, broadcast::Sender<Arc<Event>>>>,
}

impl Hub {
    pub fn subscribe(&self, case_id: i64) -> broadcast::Receiver<Arc<Event>> {
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        cases
            .entry(case_id)
            .or_insert_with(|| broadcast::channel(CASE_BUFFER).0)
            .subscribe()
    }

    pub fn publish(&self, event: Event) {
        let case_id = event.case_id;
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sender) = cases.get(&case_id) else {
            return;
        };
        if sender.send(Arc::new(event)).is_err() {
            // Nobody listens to this case any more.
            cases.remove(&case_id);
        }
    }
}

/// The single-process event bus: publishes straight into the hub.
pub struct LocalBus {
    pub hub: Arc<Hub>,
}

impl EventBus for LocalBus {
    fn committed(&self, events: Vec<Event>) {
        for event in events {
            self.hub.publish(event);
        }
    }
}
