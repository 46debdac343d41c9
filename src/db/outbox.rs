//! What a write transaction will publish once it has committed, and the bus
//! that carries it. Frames are serialized by whoever emits them (the wire
//! shapes live in `crate::views`); this layer only queues and hands them over.

use bytestring::ByteString;

use super::DbConn;

/// A message ready for the wire, serialized once for every subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The case whose tabs receive it.
    pub case_id: i64,
    /// Shared bytes: handing a frame to a thousand tabs copies no text.
    pub text: ByteString,
}

impl Frame {
    /// The frame parsed back, for tests and tools.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text).unwrap_or(serde_json::Value::Null)
    }
}

/// Everything a transaction can publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// A frame for the tabs of one case.
    Frame(Frame),
    /// An admin closed a tab; goes to that tab wherever it is connected.
    Kick { session_id: String, reason: String },
}

/// Carries what a transaction publishes to every subscriber. The in-process
/// bus only uses `committed`; a bus that must travel with the transaction
/// itself (PostgreSQL's outbox table) writes in `stage`.
pub trait EventBus: Send + Sync + 'static {
    /// Inside the writing transaction, just before COMMIT.
    fn stage(&self, _conn: &mut DbConn, _outgoing: &[Outgoing]) -> diesel::QueryResult<()> {
        Ok(())
    }

    /// Right after COMMIT. Called in commit order only where writes are
    /// serial (SQLite's single writer): a bus for concurrent writers must
    /// order deliveries itself, as the PostgreSQL outbox does.
    fn committed(&self, outgoing: Vec<Outgoing>);

    /// A statement that committed on its own wrote outbox rows itself (the
    /// lock fast path): deliver them.
    fn wake(&self) {}
}
