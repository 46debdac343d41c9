//! Who is online in a case, from the `presences` rows of every instance, and
//! the coalesced `presence` broadcasts: a burst of joins (a class opening the
//! same case) makes one frame per case, not one per tab. A join's welcome
//! takes the case's online users from counts this instance keeps per case
//! and user ([`PresenceBoard::welcome_list`]), not from the case's rows: a
//! case of 100,000 tabs then joins in time linear in its tabs, not in their
//! square.

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

/// Cases whose online users changed since the last broadcast, and the
/// online users of each case as this instance last counted them.
#[derive(Default)]
pub struct PresenceBoard {
    changed: Mutex<HashSet<CaseId>>,
    wake: Notify,
    counts: Mutex<HashMap<CaseId, CaseCount>>,
}

/// A case's online users: read from the rows of every instance by the last
/// presence round (or join) that read them, then moved by this instance's
/// own joins and leaves until the next round replaces them.
struct CaseCount {
    users: HashMap<UserId, OnlineUserView>,
    /// When the rows were read: other instances' joins and leaves reach the
    /// counts only through a read of the rows.
    read_at: Instant,
}

impl PresenceBoard {
    /// The case's online users for a welcome, with the joining `user`'s tab
    /// counted: `None` when this instance has no count of the case read
    /// within `max_age` (then the welcome reads the rows, once). O(users of
    /// the case), whatever the number of tabs. The presence round that the
    /// join triggers sends every tab the rows' own answer after it.
    pub fn welcome_list(
        &self,
        case_id: CaseId,
        user: &UserRef,
        max_age: Duration,
    ) -> Option<Vec<OnlineUserView>> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts
            .get(&case_id)
            .filter(|c| c.read_at.elapsed() < max_age)?;
        let mut users = count.users.clone();
        add_tab(&mut users, user);
        Some(in_order(users))
    }

    /// The case's online users as just read from the rows.
    pub fn counted(&self, case_id: CaseId, online: &[OnlineUserView]) {
        let users = online
            .iter()
            .map(|u| (UserId(u.user.identity.id), u.clone()))
            .collect();
        let count = CaseCount {
            users,
            read_at: Instant::now(),
        };
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.insert(case_id, count);
    }

    /// A tab of `user` joined the case here (committed).
    pub fn joined(&self, case_id: CaseId, user: &UserRef) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(&case_id) {
            add_tab(&mut count.users, user);
        }
    }

    /// A tab of `user_id` left the case here (committed).
    pub fn left(&self, case_id: CaseId, user_id: UserId) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let Some(count) = counts.get_mut(&case_id) else {
            return;
        };
        if let Some(online) = count.users.get_mut(&user_id) {
            online.sessions = online.sessions.saturating_sub(1);
            if online.sessions == 0 {
                count.users.remove(&user_id);
            }
        }
        if count.users.is_empty() {
            counts.remove(&case_id);
        }
    }

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

/// Counts one more tab of `user`.
fn add_tab(users: &mut HashMap<UserId, OnlineUserView>, user: &UserRef) {
    users
        .entry(user.id)
        .and_modify(|u| u.sessions = u.sessions.saturating_add(1))
        .or_insert_with(|| OnlineUserView {
            user: UserView::public(user),
            color: user.color.clone(),
            sessions: 1,
        });
}

/// `onlineUsers`' order: by name, then id (as [`online_users`] reads them).
fn in_order(users: HashMap<UserId, OnlineUserView>) -> Vec<OnlineUserView> {
    let mut users: Vec<(UserId, OnlineUserView)> = users.into_iter().collect();
    users.sort_by(|(a_id, a), (b_id, b)| (&a.user.name, a_id).cmp(&(&b.user.name, b_id)));
    users.into_iter().map(|(_, u)| u).collect()
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
                let mut read = Vec::with_capacity(pending.len());
                for case_id in pending {
                    let online_users = online_users(tx.conn, case_id, presence_ttl)?;
                    tabs += online_users
                        .iter()
                        .map(|u| u64::from(u.sessions))
                        .sum::<u64>();
                    read.push((case_id, online_users.clone()));
                    let frame = ServerFrame::Presence { online_users }.for_case(case_id);
                    tx.publish(Outgoing::Frame(frame));
                }
                let weight = tabs.saturating_mul(u64::from(instances));
                Ok::<_, crate::error::AppError>((weight, read))
            })
            .await;
        match result {
            Ok((weight, read)) => {
                for (case_id, online) in read {
                    rt.presence.counted(case_id, &online);
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: i64, name: &str) -> UserRef {
        UserRef {
            id: UserId(id),
            name: name.to_owned(),
            color: "#4363d8".to_owned(),
        }
    }

    /// `(name, sessions)` of each online user, in order.
    fn seen(list: &[OnlineUserView]) -> Vec<(String, u32)> {
        list.iter()
            .map(|u| (u.user.name.clone(), u.sessions))
            .collect()
    }

    const FRESH: Duration = Duration::from_secs(60);

    #[test]
    fn a_welcome_counts_from_the_case_count_not_the_rows() {
        let board = PresenceBoard::default();
        let case = CaseId(7);
        let (bob, carol) = (user(2, "Bob"), user(3, "Carol"));
        // Nothing counted yet: the join must read the rows.
        assert!(board.welcome_list(case, &bob, FRESH).is_none());

        // What the rows said at Bob's first join (his tab included).
        let mut first = HashMap::new();
        add_tab(&mut first, &bob);
        board.counted(case, &in_order(first));
        // Carol's welcome: the count, her own tab added.
        let welcome = board.welcome_list(case, &carol, FRESH).expect("counted");
        assert_eq!(seen(&welcome), [("Bob".into(), 1), ("Carol".into(), 1)]);
        board.joined(case, &carol);
        // Bob's second tab counts as a session, not a user.
        let welcome = board.welcome_list(case, &bob, FRESH).expect("counted");
        assert_eq!(seen(&welcome), [("Bob".into(), 2), ("Carol".into(), 1)]);
        board.joined(case, &bob);

        board.left(case, carol.id);
        board.left(case, bob.id);
        let welcome = board.welcome_list(case, &carol, FRESH).expect("counted");
        assert_eq!(seen(&welcome), [("Bob".into(), 1), ("Carol".into(), 1)]);

        // The last tab gone: the count goes, and the next join reads rows.
        board.left(case, bob.id);
        assert!(board.welcome_list(case, &bob, FRESH).is_none());
    }

    #[test]
    fn a_count_older_than_its_age_is_read_again() {
        let board = PresenceBoard::default();
        let case = CaseId(7);
        let bob = user(2, "Bob");
        let mut rows = HashMap::new();
        add_tab(&mut rows, &bob);
        board.counted(case, &in_order(rows));
        // Other instances' joins and leaves reach a count only through the
        // rows: past its age it is not used.
        assert!(board.welcome_list(case, &bob, Duration::ZERO).is_none());
        assert!(board.welcome_list(case, &bob, FRESH).is_some());
    }
}
