//! One connection type over SQLite and PostgreSQL: opening it with its
//! limits, the backend-specific escape hatches and the database's clock.

use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, ConnectionError};

use crate::clock;

/// One connection, whichever backend `DATABASE_URL` names.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    Postgresql(PgConnection),
    Sqlite(SqliteConnection),
}

impl DbConn {
    /// Whether reads can lock rows (PostgreSQL): on SQLite, whose writes
    /// are serial, a row read is as good as a row locked.
    pub fn locks_rows(&self) -> bool {
        matches!(self, DbConn::Postgresql(_))
    }
}

/// The one way to reach the backend-specific connection, for what the
/// `DbConn` enum cannot carry (`ON CONFLICT`, row locks). With one body, the
/// same diesel expression runs on either inner connection; with `postgres:`
/// and `sqlite:` arms, each backend gets its own. Keep such statements in the
/// model modules.
#[macro_export]
macro_rules! on_backend {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::db::DbConn::Postgresql($c) => $body,
            $crate::db::DbConn::Sqlite($c) => $body,
        }
    };
    ($conn:expr, postgres: |$p:ident| $pg:expr, sqlite: |$s:ident| $sqlite:expr $(,)?) => {
        match $conn {
            $crate::db::DbConn::Postgresql($p) => $pg,
            $crate::db::DbConn::Sqlite($s) => $sqlite,
        }
    };
}

/// (Lookups use `get_result`, not `first`: diesel binds `first`'s LIMIT as a
/// parameter, which makes SQLite re-prepare the statement on every call.)
///
/// One row read `FOR NO KEY UPDATE` on PostgreSQL; a plain select on SQLite,
/// whose write transactions are exclusive already. Not `FOR UPDATE`: that
/// would also block the `FOR KEY SHARE` every foreign-key check takes on its
/// parent row (a presence or audit row inserted for this case), and turn
/// unrelated writes into waits, or deadlocks.
#[macro_export]
macro_rules! select_one_for_no_key_update {
    ($conn:expr, $query:expr) => {
        $crate::on_backend!($conn,
            postgres: |c| $query.for_no_key_update().get_result(c).optional(),
            sqlite: |c| $query.get_result(c).optional(),
        )
    };
}

/// On PostgreSQL, takes `FOR UPDATE` on the rows of `$table` that `$filter`
/// selects, in id order, before a multi-row write of them (see "Row-lock
/// order" in `crate::locks`); nothing on SQLite, whose write transactions are
/// exclusive.
#[macro_export]
macro_rules! lock_rows_for_update_in_order {
    ($conn:expr, $table:ident, $filter:expr) => {
        $crate::on_backend!($conn,
            postgres: |c| $table::table
                .select($table::id)
                .filter($filter)
                .order($table::id.asc())
                .for_update()
                .execute(c)
                .map(|_| ()),
            sqlite: |_c| Ok(()),
        )
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of_url(url: &str) -> Backend {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// The database server's clock in SQL (PostgreSQL): UTC, as baton stores
/// time. Statements that decide about leases on their own (the lock fast
/// path) use it instead of a bound time; see [`now`].
#[macro_export]
macro_rules! db_now {
    () => {
        "(now() AT TIME ZONE 'UTC')"
    };
}

/// The time every lease decision is made at. On PostgreSQL it is the
/// database server's clock (the transaction's start, inside a transaction),
/// so that instances whose clocks disagree still agree about every lock;
/// SQLite, one instance, uses the process clock. Stored like [`clock::now`]:
/// UTC, whole microseconds.
pub fn now(conn: &mut DbConn) -> diesel::QueryResult<NaiveDateTime> {
    match conn {
        DbConn::Postgresql(pg) => {
            use diesel::RunQueryDsl;
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Timestamp>(
                crate::db_now!(),
            ))
            .get_result(pg)
        }
        DbConn::Sqlite(_) => Ok(clock::now()),
    }
}

/// Strips an optional `sqlite://`/`sqlite:` prefix: diesel wants a file name.
pub fn sqlite_path(url: &str) -> &str {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url)
}

/// Opens one connection and applies the per-connection settings. No
/// statement limits: for migrations and tools (the pool's connections get
/// theirs from [`connect_bounded`]).
pub fn connect(url: &str) -> Result<DbConn, ConnectionError> {
    match Backend::of_url(url) {
        Backend::Postgres => Ok(DbConn::Postgresql(PgConnection::establish(url)?)),
        Backend::Sqlite => sqlite_connect(url, Duration::from_secs(5)),
    }
}

fn sqlite_connect(url: &str, busy: Duration) -> Result<DbConn, ConnectionError> {
    let mut conn = SqliteConnection::establish(sqlite_path(url))?;
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {}; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
        busy.as_millis().max(1)
    ))
    .map_err(ConnectionError::CouldntSetupConfiguration)?;
    Ok(DbConn::Sqlite(conn))
}

/// A pooled connection, bounded by `timeout` (`BATON_DB_TIMEOUT`).
///
/// On PostgreSQL the server enforces it too, so that nothing a request
/// gave up on lingers: a statement running longer is cancelled
/// (`statement_timeout`), and a transaction whose client went quiet in the
/// middle of it (a stalled network, a stuck process) is aborted, its row
/// locks freed (`idle_in_transaction_session_timeout`). libpq gives up
/// connecting after the timeout (`connect_timeout`, whole seconds, at least
/// 2) and drops a connection whose peer stopped acknowledging
/// (`tcp_user_timeout`, TCP keepalives); options already in the URL win.
/// On SQLite, a writer waits for the file's lock as long.
pub fn connect_bounded(url: &str, timeout: Duration) -> Result<DbConn, ConnectionError> {
    match Backend::of_url(url) {
        Backend::Postgres => {
            let mut conn = PgConnection::establish(&with_libpq_limits(url, timeout))?;
            let ms = timeout.as_millis().max(1);
            conn.batch_execute(&format!(
                "SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms};"
            ))
            .map_err(ConnectionError::CouldntSetupConfiguration)?;
            Ok(DbConn::Postgresql(conn))
        }
        Backend::Sqlite => sqlite_connect(url, timeout),
    }
}

/// `url` with libpq's connection limits for `timeout` added, unless it
/// sets them itself.
pub fn with_libpq_limits(url: &str, timeout: Duration) -> String {
    let secs = timeout.as_secs_f64().ceil().max(1.0) as u64;
    let options = [
        ("connect_timeout", secs.max(2).to_string()),
        ("keepalives", "1".to_owned()),
        ("keepalives_idle", secs.to_string()),
        ("keepalives_interval", secs.to_string()),
        ("keepalives_count", "3".to_owned()),
        ("tcp_user_timeout", timeout.as_millis().max(1).to_string()),
    ];
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let given: Vec<&str> = query
        .split('&')
        .filter_map(|pair| pair.split('=').next())
        .collect();
    let mut url = url.to_owned();
    for (key, value) in options {
        if !given.contains(&key) {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&format!("{key}={value}"));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_limits_are_added_unless_the_url_sets_them() {
        let url = with_libpq_limits("postgres://u@db:5432/baton", Duration::from_millis(1500));
        assert_eq!(
            url,
            "postgres://u@db:5432/baton?connect_timeout=2&keepalives=1&keepalives_idle=2\
             &keepalives_interval=2&keepalives_count=3&tcp_user_timeout=1500"
        );
        let url = with_libpq_limits(
            "postgres://u@db/baton?sslmode=require&connect_timeout=30",
            Duration::from_secs(5),
        );
        assert_eq!(
            url,
            "postgres://u@db/baton?sslmode=require&connect_timeout=30&keepalives=1\
             &keepalives_idle=5&keepalives_interval=5&keepalives_count=3&tcp_user_timeout=5000"
        );
    }
}
