//! Lock JSON, rendered here and nowhere else.

use serde_json::{json, Value};

use crate::clock::utc;
use crate::models::lock::HeldLock;
use crate::models::{record_json, LockAction, UserRef};

pub fn lock_json((lock, holder): &HeldLock) -> Value {
    record_json(
        "Lock",
        "locks",
        lock.id,
        json!({
            "token": lock.id.to_string(),
            "lockableType": lock.lockable_type,
            "lockableParam": lock.lockable_id.to_string(),
            "caseId": lock.case_id,
            "user": holder.to_json(),
            "sessionId": lock.session_id,
            "userAgent": lock.user_agent,
            "createdAt": utc(lock.created_at),
            "expiresAt": utc(lock.expires_at),
            "lastActivityAt": utc(lock.last_activity_at),
        }),
    )
}

/// A lock that has ended, as broadcast in its `destroy`: the lock plus why,
/// and who overrode it.
pub fn ended_lock_json(
    held: &HeldLock,
    reason: LockAction,
    overridden_by: Option<&UserRef>,
) -> Value {
    let mut out = lock_json(held);
    if let Some(map) = out.as_object_mut() {
        map.insert("reason".into(), json!(reason.as_str()));
        if let Some(by) = overridden_by {
            map.insert("overriddenBy".into(), by.to_json());
        }
    }
    out
}

/// "Card 12 is being edited by Bob since 10:42 UTC".
pub fn held_message((lock, holder): &HeldLock) -> String {
    format!(
        "{} {} is being edited by {} since {} UTC",
        lock.lockable_type,
        lock.lockable_id,
        holder.name,
        lock.created_at.format("%H:%M")
    )
}
