//! A write transaction in progress, and what it will write to the event
//! stream and publish once it has committed.

use chrono::NaiveDateTime;

use super::{AuditEntry, DbConn, Event, Outgoing};

/// Who a write is for: the user and, when the request came from a browser
/// tab, its session id. Broadcasts carry both, because a tab is a user and a
/// session id together: another user who sends the same session id is
/// another tab, and a tab drops a frame as its own echo only when both match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    pub user_id: i64,
    pub session_id: Option<String>,
}

/// A write transaction in progress: the connection, the transaction's clock,
/// and what it will publish once it has committed.
pub struct Tx<'a> {
    pub conn: &'a mut DbConn,
    /// One timestamp for everything the transaction writes and decides:
    /// the database's clock (see [`now`]).
    pub now: NaiveDateTime,
    editor: Option<Editor>,
    pub(super) events: Vec<Event>,
    pub(super) after_commit: Vec<Box<dyn FnOnce()>>,
}

impl<'a> Tx<'a> {
    /// A transaction begun on `conn` at `now`, publishing nothing yet.
    pub(super) fn new(conn: &'a mut DbConn, now: NaiveDateTime, editor: Option<Editor>) -> Tx<'a> {
        Tx {
            conn,
            now,
            editor,
            events: Vec::new(),
            after_commit: Vec::new(),
        }
    }

    /// The user and tab whose request this is; broadcasts carry them.
    pub fn editor(&self) -> Option<&Editor> {
        self.editor.as_ref()
    }

    /// Queues a frame or a kick for publication after commit. A frame for
    /// the case of the audit entry just written is that entry's row: a lock
    /// change is one row of the event stream.
    pub fn publish(&mut self, outgoing: Outgoing) {
        if let Outgoing::Frame(frame) = &outgoing {
            if let Some(last) = self.events.last_mut().filter(|last| {
                last.outgoing.is_none()
                    && last
                        .audit
                        .as_ref()
                        .is_some_and(|a| a.case_id == frame.case_id)
            }) {
                last.outgoing = Some(outgoing);
                return;
            }
        }
        self.events.push(Event {
            audit: None,
            outgoing: Some(outgoing),
        });
    }

    /// Queues an audit entry, written with the transaction's other events
    /// just before COMMIT.
    pub fn audit(&mut self, entry: AuditEntry) {
        self.events.push(Event {
            audit: Some(entry),
            outgoing: None,
        });
    }

    /// Drops the queued audit entries of a case this transaction deletes
    /// (the cascade deletes its audit trail); their frames stay queued.
    pub fn forget_audit_of_case(&mut self, case_id: i64) {
        for event in &mut self.events {
            if event.audit.as_ref().is_some_and(|a| a.case_id == case_id) {
                event.audit = None;
            }
        }
        self.events
            .retain(|e| e.audit.is_some() || e.outgoing.is_some());
    }

    /// Runs `f` once the transaction has committed (never on rollback): for
    /// counting what happened.
    pub fn after_commit(&mut self, f: impl FnOnce() + 'static) {
        self.after_commit.push(Box::new(f));
    }
}
