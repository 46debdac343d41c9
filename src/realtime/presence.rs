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
/// How long an instance's next presence round waits per tab its last one
/// reached, per instance with live tabs.
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

/// How many instances have live tabs: the presence rounds of each share
/// one budget (see [`run`]).
fn live_instances(
    conn: &mut DbConn,
    now: chrono::NaiveDateTime,
    presence_ttl: Duration,
) -> AppResult<u32> {
    let since = clock::before(now, presence_ttl);
    let instances: i64 = presences::table
        .filter(presences::last_seen_at.ge(since))
        .select(diesel::dsl::count(presences::instance_id).aggregate_distinct())
        .first(conn)?;
    Ok(u32::try_from(instances).unwrap_or(u32::MAX).max(1))
}

/// Broadcasts `presence` for changed cases, at most once per [`COALESCE`],
/// and within one budget of frames for all instances together: after a
/// round whose frames reached `n` tabs (on every instance), the next round
/// of this instance waits [`SPACING_PER_TAB`] × `n` × the instances with
/// live tabs. A presence frame costs a write to every tab of its case, so a
/// class of a hundred thousand joining at once would otherwise spend every
/// core on presence frames that the next one makes stale. The budget is not
/// each case's: a hundred busy cases together cost no more than one as big
/// as all of them, and each of six instances sending presence for the same
/// cases no more than one. On one instance, a round to 1,000 tabs may follow
/// after 50 ms, one to 100,000 after 5 s. The frames go through the bus like
/// any other, so every instance's tabs see them.
pub async fn run(rt: Realtime) {
    let mut next_round = Instant::now();
    loop {
        rt.presence.wake.notified().await;
        tokio::time::sleep(COALESCE).await;
        tokio::time::sleep_until(next_round).await;
        let cases = rt.presence.take();
        if cases.is_empty() {
            continue;
        }
        let presence_ttl = rt.timing.presence_ttl();
        let pending = cases.clone();
        let result = rt
            .db
            .write(None, move |tx| {
                let instances = live_instances(tx.conn, tx.now, presence_ttl)?;
                let mut tabs = 0u64;
                for case_id in pending {
                    let online_users = online_users(tx.conn, case_id, presence_ttl)?;
                    tabs += online_users
                        .iter()
                        .map(|u| u64::from(u.sessions))
                        .sum::<u64>();
                    let frame = ServerFrame::Presence { online_users }.for_case(case_id);
                    tx.publish(Outgoing::Frame(frame));
                }
                Ok::<_, crate::error::AppError>(tabs.saturating_mul(u64::from(instances)))
            })
            .await;
        match result {
            Ok(weight) => {
                let weight = u32::try_from(weight).unwrap_or(u32::MAX);
                next_round = Instant::now() + SPACING_PER_TAB.saturating_mul(weight);
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
