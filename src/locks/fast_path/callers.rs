//! Callers the fast path has checked, kept in memory so that its statements
//! need not read `auth_tokens`, `users` and `memberships` again: three
//! relations fewer a statement (PostgreSQL's time per lock cycle fell by a
//! third; `benches/README.md`).
//!
//! Revocation still reaches every instance at once. A caller is read in one
//! snapshot together with the auth epoch (`auth_epoch`), a one-row number
//! that triggers move in the same transaction as anything that could end or
//! narrow someone's access (migrations `2026-12-01-000015_auth_epoch` and
//! `2026-12-04-000019_auth_epoch_narrows_only`), and only that: a rename, a
//! new case or membership, a higher role leave every instance's callers be.
//! A caller who may now edit where they could not declines once (the
//! general path answers) and is read again; the statements read the
//! holder's name and colour from `users` themselves. The
//! fast statements go ahead only while the epoch is still the one the
//! caller was read under (`sql::epoch_unmoved!`); once it moved, they decline,
//! the general path answers from the tables, and this instance forgets the
//! caller and reads them again at their next request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::NaiveDateTime;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Text, Timestamp};

use crate::db::Prepared;
use crate::models::{TokenHolder, UserId, UserRef};

/// A caller as a fast statement checks it: live when it was read, under
/// `epoch`.
#[derive(Clone, Debug)]
pub struct KnownCaller {
    pub user: UserRef,
    pub admin: bool,
    /// The token's expiry; the statements compare it with the database's clock.
    pub token_expires_at: NaiveDateTime,
    /// The cases where the user's role may take locks and save.
    pub editing_cases: Vec<i64>,
    /// The auth epoch this was read under.
    pub epoch: i64,
}

/// The callers this instance's fast path has checked, all under one epoch.
#[derive(Default)]
pub struct KnownCallers {
    known: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    epoch: i64,
    callers: HashMap<(UserId, i64), Arc<KnownCaller>>,
}

/// Past this many, the map starts again empty: a bound on memory, not a
/// cache policy (a caller costs one statement to read again).
const MOST_KNOWN: usize = 100_000;

impl KnownCallers {
    /// The caller the token names, from memory or read now; `None` when the
    /// token or its user is not live (the general path says why).
    pub(super) fn get_or_read(
        &self,
        pg: &mut PgConnection,
        holder: TokenHolder,
        editor_roles: &[&str],
    ) -> QueryResult<Option<Arc<KnownCaller>>> {
        let key = (holder.user_id, holder.token_id);
        if let Some(known) = self.lock().callers.get(&key) {
            return Ok(Some(Arc::clone(known)));
        }
        let Some(read) = read_caller(pg, holder, editor_roles)? else {
            return Ok(None);
        };
        let read = Arc::new(read);
        let mut known = self.lock();
        // A newer epoch: everything known before may be stale.
        if read.epoch > known.epoch || known.callers.len() >= MOST_KNOWN {
            known.callers.clear();
            known.epoch = read.epoch;
        }
        // One read under an older epoch than another request's (a race)
        // is still used once: its statement declines if it is stale.
        if read.epoch == known.epoch {
            known.callers.insert(key, Arc::clone(&read));
        }
        Ok(Some(read))
    }

    /// Forgets the caller after a fast statement declined: the epoch may
    /// have moved, and the next request reads them again.
    pub(super) fn forget(&self, holder: TokenHolder) {
        self.lock()
            .callers
            .remove(&(holder.user_id, holder.token_id));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        // A panic while holding this lock left a map, not a broken invariant.
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[derive(QueryableByName)]
struct CallerRow {
    #[diesel(sql_type = BigInt)]
    id: UserId,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    color: String,
    #[diesel(sql_type = Bool)]
    admin: bool,
    #[diesel(sql_type = Timestamp)]
    expires_at: NaiveDateTime,
    #[diesel(sql_type = BigInt)]
    epoch: i64,
    #[diesel(sql_type = Array<BigInt>)]
    editing_cases: Vec<i64>,
}

/// Reads the caller, their editing cases and the epoch in one snapshot
/// (`sql::READ_CALLER`).
fn read_caller(
    pg: &mut PgConnection,
    holder: TokenHolder,
    editor_roles: &[&str],
) -> QueryResult<Option<KnownCaller>> {
    let row = Prepared::new(super::sql::READ_CALLER, |q| {
        q.bind::<BigInt, _>(holder.user_id)
            .bind::<BigInt, _>(holder.token_id)
            .bind::<Array<Text>, _>(editor_roles)
    })
    .get_result::<CallerRow>(pg)
    .optional()?;
    Ok(row.map(|row| KnownCaller {
        user: UserRef {
            id: row.id,
            name: row.name,
            color: row.color,
        },
        admin: row.admin,
        token_expires_at: row.expires_at,
        editing_cases: row.editing_cases,
        epoch: row.epoch,
    }))
}
