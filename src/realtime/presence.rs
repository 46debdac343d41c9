//! Who is online in a case, from the `presences` rows of every instance.

use std::time::Duration;

use serde_json::{json, Value};

use crate::clock;
use crate::db::DbConn;
use crate::error::AppResult;
use crate::models::Presence;

/// `onlineUsers`: one entry per user with their colour and open tab count.
/// Rows not refreshed for three heartbeats belong to a dead instance.
pub fn online_users(conn: &mut DbConn, case_id: i64, heartbeat: Duration) -> AppResult<Value> {
    let since = clock::before(clock::now(), heartbeat * 3);
    let mut users: Vec<(crate::models::UserRef, usize)> = Vec::new();
    for (_, user) in Presence::of_case(conn, case_id, since)? {
        match users.iter_mut().find(|(u, _)| u.id == user.id) {
            Some((_, sessions)) => *sessions += 1,
            None => users.push((user, 1)),
        }
    }
    Ok(Value::Array(
        users
            .into_iter()
            .map(|(user, sessions)| json!({ "user": user.to_json(), "color": user.color, "sessions": sessions }))
            .collect(),
    ))
}
