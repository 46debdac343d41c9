//! The rules of a lock, each stated once: the Rust predicate that SQLite
//! and the general path run, with the SQL fragment the fast path's
//! PostgreSQL statements are built from (`fast_path::sql`) beside it.
//! `tests/rules.rs` evaluates each pair on the same rows on PostgreSQL, so
//! the two cannot drift apart.
//!
//! Fragments take their placeholders as arguments, so each statement
//! numbers its binds its own way; the `*_SQL` constants are each fragment
//! with fixed placeholders, for those tests.

use chrono::NaiveDateTime;

use super::LockPolicy;
use crate::auth::access::Rank;
use crate::clock;
use crate::models::{Lock, Role, UserId};

/// A lock is in force while its lease has not run out and it was active
/// within the idle timeout. (Why one that is not is over:
/// `holding::overdue`.)
pub fn in_force(lock: &Lock, now: NaiveDateTime, policy: &LockPolicy) -> bool {
    lock.expires_at > now && lock.last_activity_at > clock::before(now, policy.idle_timeout)
}

/// [`in_force`] of the lock `l` at `$now`, active after `$idle_before`.
macro_rules! in_force_sql {
    ($now:expr, $idle_before:expr) => {
        concat!(
            "(l.expires_at > ",
            $now,
            " AND l.last_activity_at > ",
            $idle_before,
            ")"
        )
    };
}

/// [`in_force_sql!`] at `$1`, active after `$2`.
pub const IN_FORCE_SQL: &str = in_force_sql!("$1", "$2");

/// A lock is the caller's: user `user`'s, and its tab `tab`'s or taken
/// without a tab. A caller without a tab holds every lock of the user,
/// unless `tab_required` (`POST /guard`: a host that names no tab is
/// another tab to a lock taken with one).
pub fn held_by(lock: &Lock, user: UserId, tab: Option<&str>, tab_required: bool) -> bool {
    lock.user_id == user
        && match (lock.session_id.as_deref(), tab) {
            (None, _) => true,
            (Some(held), Some(mine)) => held == mine,
            (Some(_), None) => !tab_required,
        }
}

/// [`held_by`] of the lock `l`, for user `$user`, tab `$tab` (text, may be
/// NULL) and `$tab_required` (boolean). True or false, never NULL (a NULL
/// tab compared with `=` would make it NULL, which `NOT` cannot turn round).
macro_rules! held_by_sql {
    ($user:literal, $tab:literal, $tab_required:literal) => {
        concat!(
            "(l.user_id = ",
            $user,
            " AND (l.session_id IS NULL OR l.session_id IS NOT DISTINCT FROM ",
            $tab,
            " OR (NOT ",
            $tab_required,
            " AND ",
            $tab,
            "::text IS NULL)))"
        )
    };
}

/// [`held_by_sql!`] for user `$1`, tab `$2`, tab required `$3`.
pub const HELD_BY_SQL: &str = held_by_sql!("$1", "$2", "$3");

/// The least role on a case that may hold a lock there (and save).
pub const HOLDER_ROLE: Role = Role::Editor;

/// Someone may hold a lock in a case, and save there: a site admin, or a
/// member whose role is at least [`HOLDER_ROLE`]. `rank` is their rank on
/// the case (`None`: not a member).
pub fn may_hold(rank: Option<Rank>) -> bool {
    rank.is_some_and(|rank| rank.allows(HOLDER_ROLE))
}

/// The role names that may hold a lock ([`may_hold`] for a member), as the
/// SQL compares them.
pub fn holder_roles() -> Vec<&'static str> {
    Role::ALL
        .into_iter()
        .filter(|role| may_hold(Some(Rank::Member(*role))))
        .map(Role::as_str)
        .collect()
}

/// [`may_hold`] in case `$case`, for a caller who is a site admin when
/// `$admin`, and a member whose role is one of [`holder_roles`] in the
/// cases of the array `$cases`.
macro_rules! may_hold_sql {
    ($admin:literal, $cases:literal, $case:expr) => {
        concat!("(", $admin, " OR ", $case, " = ANY (", $cases, "))")
    };
}

/// [`may_hold_sql!`] for admin `$1`, cases `$2`, case `$3`.
pub const MAY_HOLD_SQL: &str = may_hold_sql!("$1", "$2", "$3");

/// A deep lock is held somewhere in a case: what it covers is the general
/// path's to decide (`subtree::covering_locks`), so the fast path declines.
pub fn deep_in_case<'a>(
    locks: impl IntoIterator<Item = &'a Lock>,
    case: crate::models::CaseId,
) -> bool {
    locks
        .into_iter()
        .any(|lock| lock.deep && lock.case_id == case)
}

/// [`deep_in_case`] for case `$case`, over the `locks` table.
macro_rules! deep_in_case_sql {
    ($case:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM locks d WHERE d.case_id = ",
            $case,
            " AND d.deep)"
        )
    };
}

/// [`deep_in_case_sql!`] for case `$1`.
pub const DEEP_IN_CASE_SQL: &str = deep_in_case_sql!("$1");

pub(crate) use {deep_in_case_sql, held_by_sql, in_force_sql, may_hold_sql};
