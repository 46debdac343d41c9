//! One row per open edits channel (browser tab), so that every instance can
//! tell who is online in a case.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{cases, presences, users};
use crate::db::DbConn;
use crate::models::{Case, CaseId, UserId, UserRef};

/// A browser tab: its user and the session id it made. Wherever a session
/// id counts it counts with its user: another user who sends the same
/// session id is another tab, and renews, releases or inherits nothing of
/// this one's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tab {
    pub user_id: UserId,
    pub session_id: String,
}

impl Tab {
    /// The tab as broadcasts name the editor of a change.
    pub fn editor(&self) -> crate::db::Editor {
        crate::db::Editor {
            user_id: self.user_id.get(),
            session_id: Some(self.session_id.clone()),
        }
    }
}

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = presences)]
pub struct Presence {
    pub id: i64,
    pub session_id: String,
    pub user_id: UserId,
    pub case_id: CaseId,
    pub instance_id: String,
    pub user_agent: Option<String>,
    pub connected_at: NaiveDateTime,
    pub last_seen_at: NaiveDateTime,
}

pub struct NewPresence<'a> {
    pub session_id: &'a str,
    pub user_id: UserId,
    pub case_id: CaseId,
    pub instance_id: &'a str,
    pub user_agent: Option<&'a str>,
}

impl Presence {
    pub fn create(
        conn: &mut DbConn,
        new: &NewPresence,
        now: NaiveDateTime,
    ) -> QueryResult<Presence> {
        diesel::insert_into(presences::table)
            .values((
                presences::session_id.eq(new.session_id),
                presences::user_id.eq(new.user_id),
                presences::case_id.eq(new.case_id),
                presences::instance_id.eq(new.instance_id),
                presences::user_agent.eq(new.user_agent),
                presences::connected_at.eq(now),
                presences::last_seen_at.eq(now),
            ))
            .returning(presences::all_columns)
            .get_result::<Presence>(conn)
    }

    /// Every tab with this session id: each user with an open channel, a
    /// lock or a place in line under it.
    pub fn tabs_with_session(conn: &mut DbConn, session_id: &str) -> QueryResult<Vec<Tab>> {
        use crate::db::schema::{lock_waiters, locks};
        let mut users: Vec<UserId> = presences::table
            .filter(presences::session_id.eq(session_id))
            .select(presences::user_id)
            .load(conn)?;
        users.extend(
            locks::table
                .filter(locks::session_id.eq(session_id))
                .select(locks::user_id)
                .load::<UserId>(conn)?,
        );
        users.extend(
            lock_waiters::table
                .filter(lock_waiters::session_id.eq(session_id))
                .select(lock_waiters::user_id)
                .load::<UserId>(conn)?,
        );
        users.sort_unstable();
        users.dedup();
        Ok(users
            .into_iter()
            .map(|user_id| Tab {
                user_id,
                session_id: session_id.to_owned(),
            })
            .collect())
    }

    pub fn delete(conn: &mut DbConn, id: i64) -> QueryResult<bool> {
        diesel::delete(presences::table.find(id))
            .execute(conn)
            .map(|n| n > 0)
    }

    /// Live channels of the tab other than `except` (it may reconnect before
    /// the old connection is noticed gone).
    pub fn live_of_tab(
        conn: &mut DbConn,
        tab: &Tab,
        except: Option<i64>,
        seen_since: NaiveDateTime,
    ) -> QueryResult<i64> {
        let live = presences::table
            .filter(presences::session_id.eq(&tab.session_id))
            .filter(presences::user_id.eq(tab.user_id))
            .filter(presences::last_seen_at.ge(seen_since));
        // Two fixed queries rather than a boxed one: SQLite caches these.
        match except {
            Some(except) => live
                .filter(presences::id.ne(except))
                .count()
                .get_result(conn),
            None => live.count().get_result(conn),
        }
    }

    /// Marks every channel of an instance as seen now.
    pub fn touch_instance(
        conn: &mut DbConn,
        instance_id: &str,
        now: NaiveDateTime,
    ) -> QueryResult<usize> {
        crate::lock_rows_for_update_in_order!(
            conn,
            presences,
            presences::instance_id.eq(instance_id)
        )?;
        diesel::update(presences::table.filter(presences::instance_id.eq(instance_id)))
            .set(presences::last_seen_at.eq(now))
            .execute(conn)
    }

    /// Removes the presences of other instances that nobody refreshed (their
    /// instance stopped); returns the cases whose online users changed. An
    /// instance's own rows are left to it (it touches them in the same beat),
    /// and on PostgreSQL rows locked right now are skipped: their instance is
    /// touching them, so it is alive, and waiting for it could deadlock two
    /// beats that each find the other stale.
    pub fn delete_stale(
        conn: &mut DbConn,
        own_instance_id: &str,
        seen_before: NaiveDateTime,
    ) -> QueryResult<Vec<CaseId>> {
        let stale = presences::table
            .select(presences::id)
            .filter(presences::last_seen_at.lt(seen_before))
            .filter(presences::instance_id.ne(own_instance_id))
            .order(presences::id.asc());
        let ids: Vec<i64> = crate::on_backend!(conn,
            postgres: |c| stale.for_update().skip_locked().load(c)?,
            sqlite: |c| stale.load(c)?,
        );
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut cases: Vec<CaseId> =
            diesel::delete(presences::table.filter(presences::id.eq_any(&ids)))
                .returning(presences::case_id)
                .get_results(conn)?;
        cases.sort_unstable();
        cases.dedup();
        Ok(cases)
    }

    /// The live presences of a case with their users.
    pub fn of_case(
        conn: &mut DbConn,
        case_id: CaseId,
        seen_since: NaiveDateTime,
    ) -> QueryResult<Vec<(Presence, UserRef)>> {
        presences::table
            .inner_join(users::table)
            .filter(presences::case_id.eq(case_id))
            .filter(presences::last_seen_at.ge(seen_since))
            .select((Presence::as_select(), UserRef::as_select()))
            .order((users::name.asc(), users::id.asc(), presences::id.asc()))
            .load(conn)
    }

    /// Every live presence, with user and case, oldest first (for admins).
    pub fn all_live(
        conn: &mut DbConn,
        seen_since: NaiveDateTime,
    ) -> QueryResult<Vec<(Presence, UserRef, Case)>> {
        presences::table
            .inner_join(users::table)
            .inner_join(cases::table)
            .filter(presences::last_seen_at.ge(seen_since))
            .select((
                Presence::as_select(),
                UserRef::as_select(),
                Case::as_select(),
            ))
            .order(presences::id.asc())
            .load(conn)
    }
}

/// The users and the session ids of some tabs, each once: a filter that
/// takes in every one of them (and perhaps a few rows more).
pub(crate) fn users_and_sessions(tabs: &[Tab]) -> (Vec<UserId>, Vec<&str>) {
    let mut users: Vec<UserId> = tabs.iter().map(|t| t.user_id).collect();
    users.sort_unstable();
    users.dedup();
    let mut sessions: Vec<&str> = tabs.iter().map(|t| t.session_id.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    (users, sessions)
}
