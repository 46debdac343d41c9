//! The connection pool: connections bounded by `BATON_DB_TIMEOUT`, and the
//! ones found dead dropped rather than handed out again.

use diesel::r2d2::{self as diesel_r2d2, ManageConnection, R2D2Connection};
use std::time::Duration;

use super::{connect_bounded, DbConn, DbError};

/// r2d2 manager that picks the backend by URL scheme. (diesel's generic
/// manager over the enum reports a dead PostgreSQL as an invalid URL.)
pub struct ConnectionManager {
    pub(super) url: String,
    pub(super) timeout: Duration,
}

/// A pooled connection, and whether it was found dead. The pool does not
/// test connections before handing them out (that would cost a round trip
/// per request); a request that finds its connection dead marks it, so the
/// pool drops it, and retries once on a fresh one.
pub struct PooledConn {
    conn: DbConn,
    pub(super) lost: bool,
}

impl std::ops::Deref for PooledConn {
    type Target = DbConn;
    fn deref(&self) -> &DbConn {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut DbConn {
        &mut self.conn
    }
}

impl PooledConn {
    /// After a failure: whether the connection itself is gone (then it is
    /// marked so the pool drops it).
    pub(super) fn lost_after_error(&mut self) -> bool {
        self.lost = self.conn.ping().is_err();
        self.lost
    }
}

/// `error`, or [`DbError::Lost`] when the connection it came from no
/// longer answers (marked so the pool drops it).
pub(super) fn lost_or(conn: &mut PooledConn, error: DbError) -> DbError {
    if conn.lost_after_error() {
        DbError::Lost(error.to_string())
    } else {
        error
    }
}

impl ManageConnection for ConnectionManager {
    type Connection = PooledConn;
    type Error = diesel_r2d2::Error;

    fn connect(&self) -> Result<PooledConn, Self::Error> {
        let conn = connect_bounded(&self.url, self.timeout)
            .map_err(diesel_r2d2::Error::ConnectionError)?;
        Ok(PooledConn { conn, lost: false })
    }

    fn is_valid(&self, conn: &mut PooledConn) -> Result<(), Self::Error> {
        conn.conn.ping().map_err(diesel_r2d2::Error::QueryError)
    }

    /// A connection dropped by a panicking thread, left in a broken
    /// transaction, or found dead must not go back into the pool.
    fn has_broken(&self, conn: &mut PooledConn) -> bool {
        std::thread::panicking() || conn.lost || conn.conn.is_broken()
    }
}

pub type Pool = r2d2::Pool<ConnectionManager>;
