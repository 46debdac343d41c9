//! Who is online in a case, from the `presences` rows of every instance, and
//! the coalesced `presence` broadcasts: a burst of joins (a class opening the
//! same case) makes one frame per case, not one per tab.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use super::Realtime;
use crate::clock;
use crate::db::{DbConn, Outgoing};
use crate::error::AppResult;
use crate::models::{CaseId, Presence, UserRef};
use crate::views::{OnlineUserView, ServerFrame, UserView};

/// How long presence changes are gathered before they are broadcast.
const COALESCE: Duration = Duration::from_millis(50);

/// `onlineUsers`: one entry per user with their colour and open tab count.
/// Rows older than `presence_ttl` belong to a stopped instance.
pub fn online_users(
    conn: &mut DbConn,
    case_id: CaseId,
    presence_ttl: Duration,
) -> AppResult<Vec<OnlineUserView>> {
    let since = clock::before(crate::db::now(conn)?, presence_ttl);
    let mut users: Vec<(UserRef, u32)> = Vec::new();
    for (_, user) in Presence::of_case(conn, case_id, since)? {
        match users.last_mut() {
            // Rows come ordered by user, so a user's tabs are adjacent.
            Some((last, sessions)) if last.id == user.id => *sessions += 1,
            _ => users.push((user, 1)),
        }
    }
    Ok(users
        .into_iter()
        .map(|(user, sessions)| OnlineUserView {
            user: UserView::public(&user),
            color: user.color,
            sessions,
        })
        .collect())
}

/// Cases whose online users changed since the last broadcast.
#[derive(Default)]
pub struct PresenceBoard {
    changed: Mutex<HashSet<CaseId>>,
    wake: Notify,
}

impl PresenceBoard {
    pub fn changed(&self, case_id: CaseId) {
        self.changed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(case_id);
        self.wake.notify_one();
    }

    fn take(&self) -> Vec<CaseId> {
        self.changed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect()
    }
}

/// Broadcasts `presence` for changed cases, at most once per [`COALESCE`].
/// The frames go through the bus like any other, so every instance's tabs
/// see them.
pub async fn run(rt: Realtime) {
    loop {
        rt.presence.wake.notified().await;
        tokio::time::sleep(COALESCE).await;
        let cases = rt.presence.take();
        let presence_ttl = rt.timing.presence_ttl();
        let pending = cases.clone();
        let result = rt
            .db
            .write(None, move |tx| {
                for case_id in pending {
                    let online_users = online_users(tx.conn, case_id, presence_ttl)?;
                    let frame = ServerFrame::Presence { online_users }.for_case(case_id);
                    tx.publish(Outgoing::Frame(frame));
                }
                Ok::<_, crate::error::AppError>(())
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "presence broadcast failed; retrying");
            for case_id in cases {
                rt.presence.changed(case_id);
            }
            tokio::time::sleep(rt.timing.heartbeat_interval).await;
        }
    }
}
