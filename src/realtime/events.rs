//! What committed writes tell the world, and the bus that carries it.

use bytestring::ByteString;
use serde::Serialize;
use serde_json::{json, Value};

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
    pub watchable: Value,
    pub editor_session_id: Option<String>,
}

/// Everything a transaction can publish.
#[derive(Clone, Debug)]
pub enum Broadcast {
    /// A watchable changed; goes to the tabs of its case.
    Change(Event),
    /// Someone joined or left a case; goes to the tabs of that case.
    Presence { case_id: i64, online_users: Value },
    /// An admin closed a tab; goes to that tab wherever it is connected.
    Kick { session_id: String, reason: String },
}

/// A message ready for the wire, serialized once for every subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub case_id: i64,
    /// Shared bytes: handing a frame to a thousand tabs copies no text.
    pub text: ByteString,
}

impl Frame {
    /// The frame parsed back, for tests and tools.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

impl Broadcast {
    /// The frame for a case's subscribers; `None` for a kick.
    pub fn frame(&self) -> Option<Frame> {
        match self {
            Broadcast::Change(event) => Some(Frame {
                case_id: event.case_id,
                text: serde_json::to_string(event).unwrap_or_default().into(),
            }),
            Broadcast::Presence {
                case_id,
                online_users,
            } => Some(Frame {
                case_id: *case_id,
                text: json!({ "type": "presence", "onlineUsers": online_users })
                    .to_string()
                    .into(),
            }),
            Broadcast::Kick { .. } => None,
        }
    }
}

/// Carries broadcasts from the transaction that made them to every
/// subscriber. The in-process bus only uses `committed`; a bus that must
/// travel with the transaction itself (PostgreSQL `NOTIFY`) writes in `stage`.
pub trait EventBus: Send + Sync + 'static {
    /// Inside the writing transaction, just before COMMIT.
    fn stage(&self, _conn: &mut DbConn, _broadcasts: &[Broadcast]) -> diesel::QueryResult<()> {
        Ok(())
    }

    /// Right after COMMIT. Called in commit order only where writes are
    /// serial (SQLite's single writer): a bus for concurrent writers must
    /// order deliveries itself, as `NOTIFY` does.
    fn committed(&self, broadcasts: Vec<Broadcast>);
}
