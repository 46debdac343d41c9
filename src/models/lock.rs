//! Lock rows and their queries. The rules (who may acquire, take over,
//! release) live in `crate::locks`; this module only reads and writes rows.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{locks, users};
use crate::db::DbConn;
use crate::models::{CaseId, LockId, StoredRecord, Tab, TargetId, UserId, UserRef};

/// (`Serialize`/`Deserialize`: the fast path's event rows carry it as JSON.)
#[derive(
    Queryable,
    QueryableByName,
    Selectable,
    Clone,
    Debug,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
)]
#[diesel(table_name = locks)]
pub struct Lock {
    /// Also the lock's token: ids are never reused.
    pub id: LockId,
    pub lockable_type: String,
    pub lockable_id: i64,
    pub case_id: CaseId,
    pub user_id: UserId,
    pub session_id: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    pub last_activity_at: NaiveDateTime,
    /// When the holder's tab closed (the lease then runs for the grace only).
    pub disconnected_at: Option<NaiveDateTime>,
    /// Someone joined the line for this holding: releasing it may hand the
    /// record over, which the fast path leaves to the general path.
    pub has_waiters: bool,
    /// A subtree lock (WebDAV's depth infinity): it covers everything inside
    /// its record too.
    pub deep: bool,
    /// What a host calls the record, for an external type (`inv-2031`);
    /// None for baton's own records, whose param is their id.
    #[serde(default)]
    pub lockable_param: Option<String>,
}

/// `None`s are bound as NULL (not DEFAULT), so the insert is one cached statement.
#[derive(Insertable)]
#[diesel(table_name = locks)]
#[diesel(treat_none_as_default_value = false)]
pub struct NewLock<'a> {
    pub lockable_type: &'a str,
    pub lockable_id: i64,
    pub case_id: CaseId,
    pub user_id: UserId,
    pub session_id: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    pub last_activity_at: NaiveDateTime,
    pub deep: bool,
    pub lockable_param: Option<&'a str>,
}

/// A lock with the user holding it: what lock JSON is rendered from.
#[derive(Clone, Debug)]
pub struct HeldLock {
    pub lock: Lock,
    pub holder: UserRef,
}

impl From<(Lock, UserRef)> for HeldLock {
    fn from((lock, holder): (Lock, UserRef)) -> HeldLock {
        HeldLock { lock, holder }
    }
}

impl super::WireType for Lock {
    const TYPE: &'static str = "Lock";
    const TABLE: &'static str = "locks";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

/// How many tokens one run of a SQLite server may grant: each run's tokens
/// start at the next multiple of this above every id the file knows.
pub const TOKEN_RUN: i64 = 1 << 32;

impl Lock {
    /// SQLite, before a server grants its first lock: lock ids (the fencing
    /// tokens) of this run start at the next multiple of [`TOKEN_RUN`] above
    /// the highest id the file knows, written with a full sync. With
    /// `synchronous = NORMAL` a power cut may take back the last commits
    /// and with them ids already handed out; but never this floor, which
    /// every earlier run's ids are above and within a run of, so every
    /// token of this run is greater than every token issued before — taken
    /// back or not. (On PostgreSQL ids come from a sequence, durable at
    /// commit: nothing to do.) Returns the floor.
    pub fn begin_token_run(conn: &mut DbConn) -> QueryResult<Option<i64>> {
        use diesel::connection::SimpleConnection;
        use diesel::sql_types::{BigInt, Nullable};

        #[derive(QueryableByName)]
        struct High {
            #[diesel(sql_type = Nullable<BigInt>)]
            high: Option<i64>,
        }
        let DbConn::Sqlite(c) = conn else {
            return Ok(None);
        };
        c.batch_execute("PRAGMA synchronous = FULL;")?;
        let floor = c.immediate_transaction(|c| {
            let high = diesel::sql_query(
                "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'locks'), 0), \
                        coalesce((SELECT max(id) FROM locks), 0)) AS high",
            )
            .get_result::<High>(c)?
            .high
            .unwrap_or(0);
            let floor = (high.max(0) / TOKEN_RUN + 1) * TOKEN_RUN;
            let raised =
                diesel::sql_query("UPDATE sqlite_sequence SET seq = ? WHERE name = 'locks'")
                    .bind::<BigInt, _>(floor)
                    .execute(c)?;
            if raised == 0 {
                diesel::sql_query("INSERT INTO sqlite_sequence (name, seq) VALUES ('locks', ?)")
                    .bind::<BigInt, _>(floor)
                    .execute(c)?;
            }
            Ok::<_, diesel::result::Error>(floor)
        });
        c.batch_execute("PRAGMA synchronous = NORMAL;")?;
        floor.map(Some)
    }

    pub fn find(conn: &mut DbConn, id: LockId) -> QueryResult<Option<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::id.eq(id))
            .select((Lock::as_select(), UserRef::as_select()))
            .get_result::<(Lock, UserRef)>(conn)
            .optional()
            .map(|found| found.map(HeldLock::from))
    }

    pub fn on(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
    ) -> QueryResult<Option<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::lockable_type.eq(lockable_type))
            .filter(locks::lockable_id.eq(lockable_id))
            .select((Lock::as_select(), UserRef::as_select()))
            .get_result::<(Lock, UserRef)>(conn)
            .optional()
            .map(|found| found.map(HeldLock::from))
    }

    /// The lock on a record, read `FOR SHARE` on PostgreSQL: a takeover or
    /// release of it waits until the reading transaction (a guarded write)
    /// has committed.
    pub fn on_for_share(
        conn: &mut DbConn,
        lockable_type: &str,
        lockable_id: i64,
    ) -> QueryResult<Option<Lock>> {
        let query = locks::table
            .filter(locks::lockable_type.eq(lockable_type))
            .filter(locks::lockable_id.eq(lockable_id))
            .select(locks::all_columns);
        crate::on_backend!(conn,
            postgres: |c| query.for_share().get_result::<Lock>(c).optional(),
            sqlite: |c| query.get_result::<Lock>(c).optional(),
        )
    }

    /// Inserts the lock unless the record is locked already: one atomic
    /// statement against the unique index, never check-then-insert.
    pub fn insert_if_free(conn: &mut DbConn, new: &NewLock) -> QueryResult<Option<Lock>> {
        let insert = diesel::insert_into(locks::table)
            .values(new)
            .on_conflict_do_nothing()
            .returning(locks::all_columns);
        crate::on_backend!(conn, |c| insert.get_result::<Lock>(c).optional())
    }

    /// Deletes this holding of the lock, returning whether anyone joined its
    /// line; `None` if it was already gone.
    pub fn delete(conn: &mut DbConn, id: LockId) -> QueryResult<Option<bool>> {
        diesel::delete(locks::table.find(id))
            .returning(locks::has_waiters)
            .get_result(conn)
            .optional()
    }

    /// Marks this holding as waited on (a tab joins its line), locking its
    /// row until commit; `None` if it has ended.
    pub fn mark_waited_on(conn: &mut DbConn, id: LockId) -> QueryResult<Option<Lock>> {
        diesel::update(locks::table.find(id))
            .set(locks::has_waiters.eq(true))
            .returning(locks::all_columns)
            .get_result::<Lock>(conn)
            .optional()
    }

    /// A lock handed to a tab that has closed: it lives only as long as
    /// that tab's grace, `until`, unless the tab comes back.
    pub fn disconnected(
        conn: &mut DbConn,
        id: LockId,
        closed_at: NaiveDateTime,
        until: NaiveDateTime,
    ) -> QueryResult<Option<Lock>> {
        diesel::update(locks::table.find(id))
            .set((
                locks::disconnected_at.eq(Some(closed_at)),
                locks::expires_at.eq(until),
            ))
            .returning(locks::all_columns)
            .get_result::<Lock>(conn)
            .optional()
    }

    /// Extends the lease, and the activity when given.
    pub fn renew(
        conn: &mut DbConn,
        id: LockId,
        expires_at: NaiveDateTime,
        activity_at: Option<NaiveDateTime>,
    ) -> QueryResult<Option<Lock>> {
        let target = diesel::update(locks::table.find(id));
        match activity_at {
            Some(at) => target
                .set((
                    locks::expires_at.eq(expires_at),
                    locks::last_activity_at.eq(at),
                ))
                .returning(locks::all_columns)
                .get_result::<Lock>(conn)
                .optional(),
            None => target
                .set(locks::expires_at.eq(expires_at))
                .returning(locks::all_columns)
                .get_result::<Lock>(conn)
                .optional(),
        }
    }

    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::case_id.eq(case_id))
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }

    /// The deep locks on any of `containers` (a card's page, a case), in
    /// case `case_id`, in the order of `containers`: the locks that cover a
    /// record inside them. One probe of the partial index on deep locks.
    pub fn deep_on(
        conn: &mut DbConn,
        case_id: CaseId,
        containers: &[TargetId],
    ) -> QueryResult<Vec<HeldLock>> {
        if containers.is_empty() {
            return Ok(Vec::new());
        }
        let found = locks::table
            .inner_join(users::table)
            .filter(locks::case_id.eq(case_id))
            .filter(locks::deep)
            .select((Lock::as_select(), UserRef::as_select()))
            .load::<(Lock, UserRef)>(conn)?;
        Ok(containers
            .iter()
            .filter_map(|container| found.iter().find(|(lock, _)| container.is_of(lock)))
            .cloned()
            .map(HeldLock::from)
            .collect())
    }

    /// The locks on a declared record and on everything inside it at any
    /// depth: what a deep lock on it covers. (A case's are [`Lock::of_case`].)
    pub fn inside_record(
        conn: &mut DbConn,
        case_id: CaseId,
        type_name: &str,
        id: i64,
    ) -> QueryResult<Vec<HeldLock>> {
        let mut inside: std::collections::HashSet<(String, i64)> =
            StoredRecord::descendants(conn, type_name, id)?
                .into_iter()
                .collect();
        inside.insert((type_name.to_owned(), id));
        Ok(Lock::of_case(conn, case_id)?
            .into_iter()
            .filter(|held| {
                inside.contains(&(held.lock.lockable_type.clone(), held.lock.lockable_id))
            })
            .collect())
    }

    /// Makes a holding deep (the holder asked for the subtree).
    pub fn deepen(conn: &mut DbConn, id: LockId) -> QueryResult<Option<Lock>> {
        diesel::update(locks::table.find(id))
            .set(locks::deep.eq(true))
            .returning(locks::all_columns)
            .get_result::<Lock>(conn)
            .optional()
    }

    /// Orders this transaction with deep acquires (PostgreSQL): a deep
    /// acquire holds `locks` in SHARE ROW EXCLUSIVE mode, every other lock
    /// write in ROW EXCLUSIVE, which the two modes refuse each other. Taken
    /// before the checks, so that each check's snapshot already sees what
    /// the other committed: a deep lock and a lock inside it never both
    /// win. (The fast path's insert takes ROW EXCLUSIVE before its snapshot
    /// by itself.) SQLite's writer is single, so it needs none.
    ///
    /// Returns whether it took a table lock (PostgreSQL): whatever was read
    /// before it may have changed since, and may need reading again.
    pub fn order_with_deep_acquires(conn: &mut DbConn, deep: bool) -> QueryResult<bool> {
        let statement = if deep {
            "LOCK TABLE locks IN SHARE ROW EXCLUSIVE MODE"
        } else {
            "LOCK TABLE locks IN ROW EXCLUSIVE MODE"
        };
        crate::on_backend!(conn,
            postgres: |c| diesel::sql_query(statement).execute(c).map(|_| true),
            sqlite: |_c| Ok(false),
        )
    }

    /// Locks held now, on every case.
    pub fn count(conn: &mut DbConn) -> QueryResult<i64> {
        locks::table.count().get_result(conn)
    }

    /// Every lock on a record of `lockable_type`, oldest first.
    pub fn of_type(conn: &mut DbConn, lockable_type: &str) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::lockable_type.eq(lockable_type))
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }

    pub fn of_user(conn: &mut DbConn, user_id: UserId) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::user_id.eq(user_id))
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }

    /// Locks on any of the given records of one type.
    pub fn on_any(
        conn: &mut DbConn,
        lockable_type: &str,
        ids: &[i64],
    ) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::lockable_type.eq(lockable_type))
            .filter(locks::lockable_id.eq_any(ids))
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }

    /// Row-locks these tabs' locks in id order before a multi-row UPDATE of
    /// them (PostgreSQL; see [`crate::lock_rows_for_update_in_order`]). It
    /// may lock a few rows more (another user's tab with one of these
    /// session ids): harmless, in the same order.
    pub fn lock_rows_of_tabs(conn: &mut DbConn, tabs: &[Tab]) -> QueryResult<()> {
        let (users, sessions) = super::presence::users_and_sessions(tabs);
        crate::lock_rows_for_update_in_order!(
            conn,
            locks,
            locks::session_id
                .eq_any(&sessions)
                .and(locks::user_id.eq_any(&users))
        )
    }

    /// Row-locks these locks in id order (PostgreSQL).
    pub fn lock_rows(conn: &mut DbConn, ids: &[LockId]) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, locks, locks::id.eq_any(ids))
    }

    /// The locks of one tab (a user's, with this session id).
    pub fn of_tab(conn: &mut DbConn, tab: &Tab) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(locks::session_id.eq(&tab.session_id))
            .filter(locks::user_id.eq(tab.user_id))
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }

    /// Row-locks a user's locks in id order (PostgreSQL), before their
    /// places in line are touched: locks come before waiters in the row-lock
    /// order.
    pub fn lock_rows_of_user(conn: &mut DbConn, user_id: UserId) -> QueryResult<()> {
        crate::lock_rows_for_update_in_order!(conn, locks, locks::user_id.eq(user_id))
    }

    /// Locks whose lease ran out or that saw no activity since `idle_before`.
    pub fn due(
        conn: &mut DbConn,
        now: NaiveDateTime,
        idle_before: NaiveDateTime,
        limit: i64,
    ) -> QueryResult<Vec<HeldLock>> {
        locks::table
            .inner_join(users::table)
            .filter(
                locks::expires_at
                    .le(now)
                    .or(locks::last_activity_at.le(idle_before)),
            )
            .select((Lock::as_select(), UserRef::as_select()))
            .order(locks::id.asc())
            .limit(limit)
            .load::<(Lock, UserRef)>(conn)
            .map(held_locks)
    }
}

fn held_locks(rows: Vec<(Lock, UserRef)>) -> Vec<HeldLock> {
    rows.into_iter().map(HeldLock::from).collect()
}
