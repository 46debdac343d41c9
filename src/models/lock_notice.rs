//! What the lock fast path (`crate::locks::fast_path`) reads and writes
//! that other layers share: the caller a token names, and the lock writes
//! and saves its event rows carry for every instance's listener to render.

use serde::{Deserialize, Serialize};

use super::{Lock, LockAction, RecordRow, UserId, UserRef};

/// A lock write announced by the fast path, as its event row carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockNotice {
    /// `acquired` (a `create` frame) or the reason it ended (a `destroy`).
    pub action: LockAction,
    pub lock: Lock,
    pub holder: UserRef,
    /// The tab whose request it was.
    pub editor: Option<String>,
    /// When the statement ran (Unix microseconds), for the fan-out delay.
    pub at: i64,
}

/// Who is asking, from a verified token: the statement checks the token's
/// row and the user are still live.
#[derive(Clone, Copy, Debug)]
pub struct TokenHolder {
    pub user_id: UserId,
    pub token_id: i64,
}

/// A save made by the fast save (PostgreSQL), as its event row carries it:
/// the saved row, which every instance's listener renders as the general
/// path's `update` frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedRecord {
    pub record: RecordRow,
    /// The tab whose request it was: its session id and user.
    pub editor: Option<String>,
    #[serde(default, rename = "editorUser")]
    pub editor_user: Option<i64>,
    /// When the statement ran (Unix microseconds), for the fan-out delay.
    pub at: i64,
}
