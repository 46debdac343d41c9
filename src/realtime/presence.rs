//! Who is online in a case, from the `presences` rows of every instance, and
//! the coalesced `presence` broadcasts: a burst of joins (a class opening the
//! same case) makes one frame per case, not one per tab.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::Realtime;
use crate::clock;
use crate::db::schema::{presences, users};
use crate::db::{DbConn, Outgoing};
use crate::error::AppResult;
use crate::models::{CaseId, UserId, UserRef};
use crate::views::{OnlineUserView, ServerFrame, UserView};
use diesel::prelude::*;

/// How long presence changes are gathered before they are broadcast.
const COALESCE: Duration = Duration::from_millis(50);
/// How long a case's presence broadcasts are spaced per tab watching it.
const SPACING_PER_TAB: Duration = Duration::from_micros(50);

/// `onlineUsers`: one entry per user with their colour and open tab count,
/// ordered by name. Rows older than `presence_ttl` belong to a stopped
/// instance.
///
/// Every join and every presence broadcast asks this, so the database
/// counts the tabs per user and only the users come back: a case watched by
/// thousands of tabs of a class of fifty sends fifty rows, not a row (with
/// its strings) per tab.
pub fn online_users(
    conn: &mut DbConn,
    case_id: CaseId,
    presence_ttl: Duration,
) -> AppResult<Vec<OnlineUserView>> {
    let since = clock::before(crate::db::now(conn)?, presence_ttl);
    let tabs: Vec<(UserId, i64)> = presences::table
        .filter(presences::case_id.eq(case_id))
        .filter(presences::last_seen_at.ge(since))
        .group_by(presences::user_id)
        .select((presences::user_id, diesel::dsl::count_star()))
        .load(conn)?;
    if tabs.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<UserId> = tabs.iter().map(|(id, _)| *id).collect();
    let people: Vec<UserRef> = users::table
        .filter(users::id.eq_any(&ids))
        .select(UserRef::as_select())
        .order((users::name.asc(), users::id.asc()))
        .load(conn)?;
    let sessions: HashMap<UserId, i64> = tabs.into_iter().collect();
    Ok(people
        .into_iter()
        .map(|user| OnlineUserView {
            sessions: sessions
                .get(&user.id)
                .map_or(0, |&n| u32::try_from(n).unwrap_or(u32::MAX)),
            user: UserView::public(&user),
            color: user.color,
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

/// Broadcasts `presence` for changed cases, at most once per [`COALESCE`],
/// and a case watched by many tabs less often: after a broadcast its next
/// waits [`SPACING_PER_TAB`] per tab that watches it, on every instance (a
/// frame to 1,000 tabs may follow after 50 ms, one to 100,000 after 5 s).
/// A presence frame costs a write to every tab of the case, so a class of a
/// hundred thousand joining at once would otherwise spend every core on
/// presence frames that the next one, 50 ms later, makes stale. The frames
/// go through the bus like any other, so every instance's tabs see them.
pub async fn run(rt: Realtime) {
    // Changed cases that wait for their spacing, and until when each waits.
    let mut waiting: HashSet<CaseId> = HashSet::new();
    let mut spaced: HashMap<CaseId, Instant> = HashMap::new();
    loop {
        let next = waiting.iter().filter_map(|c| spaced.get(c)).min().copied();
        match next {
            Some(at) => tokio::select! {
                _ = rt.presence.wake.notified() => {}
                _ = tokio::time::sleep_until(at) => {}
            },
            None => rt.presence.wake.notified().await,
        }
        tokio::time::sleep(COALESCE).await;
        waiting.extend(rt.presence.take());
        let now = Instant::now();
        spaced.retain(|_, until| *until > now);
        let cases: Vec<CaseId> = waiting
            .iter()
            .filter(|c| !spaced.contains_key(c))
            .copied()
            .collect();
        if cases.is_empty() {
            continue;
        }
        waiting.retain(|c| !cases.contains(c));
        let presence_ttl = rt.timing.presence_ttl();
        let pending = cases.clone();
        let result = rt
            .db
            .write(None, move |tx| {
                let mut watched = Vec::with_capacity(pending.len());
                for case_id in pending {
                    let online_users = online_users(tx.conn, case_id, presence_ttl)?;
                    let tabs: u64 = online_users.iter().map(|u| u64::from(u.sessions)).sum();
                    let frame = ServerFrame::Presence { online_users }.for_case(case_id);
                    tx.publish(Outgoing::Frame(frame));
                    watched.push((case_id, tabs));
                }
                Ok::<_, crate::error::AppError>(watched)
            })
            .await;
        match result {
            Ok(watched) => {
                for (case_id, tabs) in watched {
                    let spacing =
                        SPACING_PER_TAB.saturating_mul(u32::try_from(tabs).unwrap_or(u32::MAX));
                    if spacing > COALESCE {
                        spaced.insert(case_id, now + spacing);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "presence broadcast failed; retrying");
                for case_id in cases {
                    rt.presence.changed(case_id);
                }
                tokio::time::sleep(rt.timing.heartbeat_interval).await;
            }
        }
    }
}
