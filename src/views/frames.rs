//! The edits channel's server → client frames, and how a transaction queues
//! a change for the tabs of a case.

use serde::Serialize;
use utoipa::openapi::schema::{AnyOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::{
    EndedLockView, EndedWaiterView, Identity, LockView, OnlineUserView, RecordView, WaiterView,
};
pub use crate::db::KickReason;
use crate::db::{Editor, Frame, Outgoing, Tx};
use crate::models::CaseId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Create,
    Update,
    Destroy,
}

/// What a change frame is about: a record, a lock, a waiter, or — once
/// destroyed — a record's identity, or a lock or waiter with the reason it
/// ended. (Its schema is
/// `anyOf`, written below: an ended lock is also a lock, and every record
/// has an identity, so `oneOf` would never match exactly one.)
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Watchable {
    Record(RecordView),
    EndedLock(EndedLockView),
    Lock(LockView),
    EndedWaiter(EndedWaiterView),
    Waiter(WaiterView),
    Gone(Identity),
    /// A record of a team's own backend, relayed as it sent it
    /// (`POST /cases/:slug/events`).
    Relayed(serde_json::Map<String, serde_json::Value>),
}

/// One change to a watchable, tagged with the tab that made it: a tab drops
/// frames whose `editorSessionId` and `editorUserId` are both its own
/// (another user may send the same session id: that is another tab).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeFrame {
    pub watchable: Watchable,
    pub editor_session_id: Option<String>,
    /// The user whose request made the change; null when baton itself did
    /// (a lease ran out, a tab closed).
    pub editor_user_id: Option<i64>,
}

/// Every message the server sends on `GET /cases/:slug/edits`, as JSON text.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerFrame {
    /// First frame after connecting: the tab's session id and the case's
    /// locks, waiting lines and online users right now.
    #[serde(rename_all = "camelCase")]
    Welcome {
        session_id: String,
        /// How often the tab sends `{"type": "ping"}`; a `pong` not back by
        /// the next ping means the connection is dead.
        heartbeat_ms: u64,
        active_locks: Vec<LockView>,
        /// Every live waiter of the case, line by line, first first.
        waiters: Vec<WaiterView>,
        online_users: Vec<OnlineUserView>,
    },
    Create(ChangeFrame),
    Update(ChangeFrame),
    Destroy(ChangeFrame),
    /// Someone joined or left the case.
    #[serde(rename_all = "camelCase")]
    Presence {
        online_users: Vec<OnlineUserView>,
    },
    /// Frames were lost (the tab fell behind, or the server lost its event
    /// feed): reload the case, then carry on.
    Resync {
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(required = false, nullable = false)]
        missed: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(required = false, nullable = false)]
        reason: Option<String>,
    },
    /// The answer to a tab's `{"type": "ping"}`.
    Pong,
    /// The tab may not stay: the server closes the channel next (1008), and
    /// the tab should not reconnect.
    Kicked {
        reason: KickReason,
    },
}

impl ServerFrame {
    pub fn change(change: Change, watchable: Watchable, editor: Option<&Editor>) -> ServerFrame {
        ServerFrame::of(
            change,
            ChangeFrame {
                watchable,
                editor_session_id: editor.and_then(|e| e.session_id.clone()),
                editor_user_id: editor.map(|e| e.user_id),
            },
        )
    }

    /// A change a team's backend announced, from its tab (a user baton does
    /// not know of, so no `editorUserId`).
    pub fn relayed(
        change: Change,
        watchable: Watchable,
        editor_session_id: Option<String>,
    ) -> ServerFrame {
        ServerFrame::of(
            change,
            ChangeFrame {
                watchable,
                editor_session_id,
                editor_user_id: None,
            },
        )
    }

    fn of(change: Change, frame: ChangeFrame) -> ServerFrame {
        match change {
            Change::Create => ServerFrame::Create(frame),
            Change::Update => ServerFrame::Update(frame),
            Change::Destroy => ServerFrame::Destroy(frame),
        }
    }

    /// The frame as JSON text.
    pub fn text(&self) -> String {
        // Serializing these plain structs cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Ready for the tabs of `case_id`.
    pub fn for_case(&self, case_id: CaseId) -> Frame {
        Frame {
            case_id: case_id.get(),
            text: self.text().into(),
        }
    }
}

// The one place a change is queued for broadcast (an inherent impl of the
// transaction, kept beside the frames it builds).
impl Tx<'_> {
    /// Queues a change for the case's tabs, published after commit and
    /// tagged with the tab (session) that made it.
    pub fn emit(&mut self, case_id: CaseId, change: Change, watchable: Watchable) {
        let frame = ServerFrame::change(change, watchable, self.editor()).for_case(case_id);
        self.publish(Outgoing::Frame(frame));
    }
}

impl utoipa::PartialSchema for Watchable {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(RecordView::name()))
            .item(Ref::from_schema_name(EndedLockView::name()))
            .item(Ref::from_schema_name(LockView::name()))
            .item(Ref::from_schema_name(EndedWaiterView::name()))
            .item(Ref::from_schema_name(WaiterView::name()))
            .item(Ref::from_schema_name(Identity::name()))
            .item(
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::Type::Object)
                    .property("type", utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::String))
                    .property("param", utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::String).min_length(Some(1)))
                    .required("type")
                    .required("param")
                    .description(Some("A record of your own backend, relayed as it sent it (`POST /cases/{slug}/events`).")),
            )
            .description(Some(
                "A record, a lock, a waiter, an ended lock or waiter (destroy, with \
                 `reason`), a destroyed record's identity, or a record a team's backend \
                 announced.",
            ))
            .into()
    }
}

impl ToSchema for Watchable {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.extend([
            (RecordView::name().into(), RecordView::schema()),
            (EndedLockView::name().into(), EndedLockView::schema()),
            (LockView::name().into(), LockView::schema()),
            (EndedWaiterView::name().into(), EndedWaiterView::schema()),
            (WaiterView::name().into(), WaiterView::schema()),
            (Identity::name().into(), Identity::schema()),
        ]);
        RecordView::schemas(schemas);
        EndedLockView::schemas(schemas);
        LockView::schemas(schemas);
        EndedWaiterView::schemas(schemas);
        WaiterView::schemas(schemas);
    }
}

impl From<RecordView> for Watchable {
    fn from(record: RecordView) -> Watchable {
        Watchable::Record(record)
    }
}

impl From<LockView> for Watchable {
    fn from(lock: LockView) -> Watchable {
        Watchable::Lock(lock)
    }
}

impl From<WaiterView> for Watchable {
    fn from(waiter: WaiterView) -> Watchable {
        Watchable::Waiter(waiter)
    }
}
