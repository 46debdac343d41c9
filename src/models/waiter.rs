//! Waiting lines: one row per tab waiting for a locked record, served in id
//! (join) order. The rules (who may join, the hand-off) live in
//! `crate::locks::line`; this module only reads and writes rows.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{lock_waiters, users};
use crate::db::DbConn;
use crate::models::{CaseId, Tab, UserId, UserRef, WaiterId};

#[derive(Queryable, Selectable, Clone, Debug, PartialEq)]
#[diesel(table_name = lock_waiters)]
pub struct Waiter {
    pub id: WaiterId,
    pub lockable_type: String,
    pub lockable_id: i64,
    pub case_id: CaseId,
    pub user_id: UserId,
    /// The waiting tab: a line is kept per tab, never per user.
    pub session_id: String,
    pub user_agent: Option<String>,
    pub created_at: NaiveDateTime,
    /// Renewed like a lock's lease; past it the waiter has left.
    pub expires_at: NaiveDateTime,
    /// When its tab closed (it then stays for the grace only).
    pub disconnected_at: Option<NaiveDateTime>,
    /// What a host calls the record, for an external type.
    pub lockable_param: Option<String>,
}

#[derive(Insertable)]
#[diesel(table_name = lock_waiters)]
#[diesel(treat_none_as_default_value = false)]
pub struct NewWaiter<'a> {
    pub lockable_type: &'a str,
    pub lockable_id: i64,
    pub case_id: CaseId,
    pub user_id: UserId,
    pub session_id: &'a str,
    pub user_agent: Option<&'a str>,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    pub lockable_param: Option<&'a str>,
}

/// Why a waiter left its line: the `reason` of its `destroy` frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaiterEnd {
    /// The record was handed to it: a lock's `create` follows.
    Granted,
    /// Its tab left the line (or the record was deleted).
    Left,
    /// Its lease ran out.
    Expired,
    /// Its tab closed and did not come back within the grace.
    Disconnected,
    /// An admin closed its tab, or removed its user.
    Kicked,
}

/// A waiter with its user and its place in the line (1 = next): what waiter
/// JSON is rendered from.
#[derive(Clone, Debug)]
pub struct QueuedWaiter {
    pub waiter: Waiter,
    pub user: UserRef,
    pub position: i64,
}

impl super::WireType for Waiter {
    const TYPE: &'static str = "Waiter";
    const TABLE: &'static str = "lock_waiters";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

impl Waiter {
    /// Whether it still waits at `now`.
    pub fn is_live(&self, now: NaiveDateTime) -> bool {
        self.expires_at > now
    }

    /// Joins the line, unless this tab is in it already (then `None`).
    pub fn insert(conn: &mut DbConn, new: &NewWaiter) -> QueryResult<Option<Waiter>> {
        let insert = diesel::insert_into(lock_waiters::table)
            .values(new)
            .on_conflict_do_nothing()
            .returning(lock_waiters::all_columns);
        crate::on_backend!(conn, |c| insert.get_result::<Waiter>(c).optional())
    }

    pub fn find(conn: &mut DbConn, id: WaiterId) -> QueryResult<Option<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::id.eq(id))
            .select((Waiter::as_select(), UserRef::as_select()))
            .get_result(conn)
            .optional()
    }

    /// This tab's (this user's, with this session id) place in a record's
    /// line, if it has one.
    pub fn of_tab_on(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
        user_id: UserId,
        session_id: &str,
    ) -> QueryResult<Option<Waiter>> {
        lock_waiters::table
            .filter(lock_waiters::lockable_type.eq(lockable_type))
            .filter(lock_waiters::lockable_id.eq(lockable_id))
            .filter(lock_waiters::user_id.eq(user_id))
            .filter(lock_waiters::session_id.eq(session_id))
            .select(Waiter::as_select())
            .get_result(conn)
            .optional()
    }

    /// A record's line, first in line first (live or not).
    pub fn line(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
    ) -> QueryResult<Vec<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::lockable_type.eq(lockable_type))
            .filter(lock_waiters::lockable_id.eq(lockable_id))
            .select((Waiter::as_select(), UserRef::as_select()))
            .order(lock_waiters::id.asc())
            .load(conn)
    }

    /// The ids of a record's line, first in line first (live or not).
    pub fn ids_in_line(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
    ) -> QueryResult<Vec<WaiterId>> {
        lock_waiters::table
            .filter(lock_waiters::lockable_type.eq(lockable_type))
            .filter(lock_waiters::lockable_id.eq(lockable_id))
            .select(lock_waiters::id)
            .order(lock_waiters::id.asc())
            .load(conn)
    }

    /// A record's line with its rows locked in id order (PostgreSQL), for a
    /// hand-off: a tab leaving at the same moment waits, then finds its row
    /// gone or still there, never half-served. (Only the waiters' rows: the
    /// users are read after.)
    pub fn line_for_update(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
    ) -> QueryResult<Vec<(Waiter, UserRef)>> {
        let query = lock_waiters::table
            .filter(lock_waiters::lockable_type.eq(lockable_type))
            .filter(lock_waiters::lockable_id.eq(lockable_id))
            .select(lock_waiters::all_columns)
            .order(lock_waiters::id.asc());
        let waiters: Vec<Waiter> = crate::on_backend!(conn,
            postgres: |c| query.for_update().load::<Waiter>(c),
            sqlite: |c| query.load::<Waiter>(c),
        )?;
        let mut ids: Vec<UserId> = waiters.iter().map(|w| w.user_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let users = super::User::refs(conn, &ids)?;
        Ok(waiters
            .into_iter()
            .filter_map(|w| {
                let user = users.iter().find(|u| u.id == w.user_id)?.clone();
                Some((w, user))
            })
            .collect())
    }

    /// How many live waiters of the same record joined before this one.
    pub fn ahead_of(conn: &mut DbConn, waiter: &Waiter, now: NaiveDateTime) -> QueryResult<i64> {
        lock_waiters::table
            .filter(lock_waiters::lockable_type.eq(&waiter.lockable_type))
            .filter(lock_waiters::lockable_id.eq(waiter.lockable_id))
            .filter(lock_waiters::id.lt(waiter.id))
            .filter(lock_waiters::expires_at.gt(now))
            .count()
            .get_result(conn)
    }

    /// The waiters of a case, line by line, first in line first.
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::case_id.eq(case_id))
            .select((Waiter::as_select(), UserRef::as_select()))
            .order((
                lock_waiters::lockable_type.asc(),
                lock_waiters::lockable_id.asc(),
                lock_waiters::id.asc(),
            ))
            .load(conn)
    }

    pub fn of_user(conn: &mut DbConn, user_id: UserId) -> QueryResult<Vec<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::user_id.eq(user_id))
            .select((Waiter::as_select(), UserRef::as_select()))
            .order(lock_waiters::id.asc())
            .load(conn)
    }

    /// Waiters whose lease ran out.
    pub fn due(
        conn: &mut DbConn,
        now: NaiveDateTime,
        limit: i64,
    ) -> QueryResult<Vec<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::expires_at.le(now))
            .select((Waiter::as_select(), UserRef::as_select()))
            .order(lock_waiters::id.asc())
            .limit(limit)
            .load(conn)
    }

    /// Waiters now, on every case.
    pub fn count(conn: &mut DbConn) -> QueryResult<i64> {
        lock_waiters::table.count().get_result(conn)
    }

    /// Leaves the line; `false` if this waiter was gone already.
    pub fn delete(conn: &mut DbConn, id: WaiterId) -> QueryResult<bool> {
        diesel::delete(lock_waiters::table.find(id))
            .execute(conn)
            .map(|n| n > 0)
    }

    /// Extends the waiter's lease (its tab is back, if it had closed).
    pub fn renew(
        conn: &mut DbConn,
        id: WaiterId,
        expires_at: NaiveDateTime,
    ) -> QueryResult<Option<Waiter>> {
        diesel::update(lock_waiters::table.find(id))
            .set((
                lock_waiters::expires_at.eq(expires_at),
                lock_waiters::disconnected_at.eq(None::<NaiveDateTime>),
            ))
            .returning(lock_waiters::all_columns)
            .get_result(conn)
            .optional()
    }

    /// Row-locks these places in line in id order (PostgreSQL).
    pub fn lock_rows(conn: &mut DbConn, ids: &[WaiterId]) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, lock_waiters, lock_waiters::id.eq_any(ids))
    }

    /// Row-locks these tabs' waiters in id order before a multi-row UPDATE
    /// of them (PostgreSQL; see [`crate::lock_rows_for_update_in_order`]).
    pub fn lock_rows_of_tabs(conn: &mut DbConn, tabs: &[Tab]) -> QueryResult<()> {
        let (users, sessions) = super::presence::users_and_sessions(tabs);
        crate::lock_rows_for_update_in_order!(
            conn,
            lock_waiters,
            lock_waiters::session_id
                .eq_any(&sessions)
                .and(lock_waiters::user_id.eq_any(&users))
        )
    }

    /// The places in line of one tab (a user's, with this session id).
    pub fn of_tab(conn: &mut DbConn, tab: &Tab) -> QueryResult<Vec<(Waiter, UserRef)>> {
        lock_waiters::table
            .inner_join(users::table)
            .filter(lock_waiters::session_id.eq(&tab.session_id))
            .filter(lock_waiters::user_id.eq(tab.user_id))
            .select((Waiter::as_select(), UserRef::as_select()))
            .order(lock_waiters::id.asc())
            .load(conn)
    }
}
