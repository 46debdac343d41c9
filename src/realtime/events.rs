//! What a committed write tells the world, and the bus that carries it.

use serde::Serialize;

use crate::db::DbConn;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Create,
    Update,
    Destroy,
}

/// One change to a watchable (a lockable record or a lock), as sent to the
/// tabs of its case: `{"type", "watchable", "editorSessionId"}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(skip)]
    pub case_id: i64,
    #[serde(rename = "type")]
    pub change: Change,
    pub watchable: serde_json::Value,
    pub editor_session_id: Option<String>,
}

/// Carries events from the transaction that made them to every subscriber.
/// The in-process bus only uses `committed`; a bus that must travel with the
/// transaction itself (PostgreSQL `NOTIFY`) writes in `stage`.
pub trait EventBus: Send + Sync + 'static {
    /// Inside the writing transaction, just before COMMIT.
    fn stage(&self, _conn: &mut DbConn, _events: &[Event]) -> diesel::QueryResult<()> {
        Ok(())
    }

    /// Right after COMMIT, in commit order.
    fn committed(&self, events: Vec<Event>);
}
