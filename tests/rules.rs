//! Each lock rule of `locks::engine::rules` is a Rust predicate with its
//! SQL fragment beside it. Here both are evaluated on the same rows on
//! PostgreSQL, one table of cases per rule, edges included: where the two
//! disagree, SQLite (or the general path) and the fast path would decide
//! the same request differently.

use std::time::Duration;

use baton::auth::access::Rank;
use baton::locks::engine::rules;
use baton::locks::engine::LockPolicy;
use baton::models::{CaseId, Lock, LockId, Role, UserId};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::pg::PgConnection;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamp};
use diesel::{Connection, QueryableByName, RunQueryDsl};

/// The test server, or `None` (the rule tests need PostgreSQL).
fn postgres() -> Option<PgConnection> {
    let Ok(url) = std::env::var("BATON_TEST_POSTGRES_URL") else {
        eprintln!("BATON_TEST_POSTGRES_URL is not set: the rules are not compared");
        return None;
    };
    Some(PgConnection::establish(&url).expect("connect to BATON_TEST_POSTGRES_URL"))
}

#[derive(QueryableByName)]
struct Verdict {
    #[diesel(sql_type = Bool)]
    verdict: bool,
}

fn at(h: u32, m: u32, s: u32, micros: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 29)
        .and_then(|d| d.and_hms_micro_opt(h, m, s, micros))
        .expect("a valid time")
}

/// A lock row with the columns the rules read.
fn lock(
    user: i64,
    session: Option<&str>,
    expires_at: NaiveDateTime,
    active: NaiveDateTime,
) -> Lock {
    Lock {
        id: LockId(1),
        lockable_type: "Card".into(),
        lockable_id: 1,
        case_id: CaseId(1),
        user_id: UserId(user),
        session_id: session.map(str::to_owned),
        user_agent: None,
        created_at: at(11, 0, 0, 0),
        expires_at,
        last_activity_at: active,
        disconnected_at: None,
        has_waiters: false,
        deep: false,
        lockable_param: None,
    }
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn in_force_says_the_same_in_rust_and_sql() {
    let Some(mut pg) = postgres() else { return };
    let policy = LockPolicy {
        ttl: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(30 * 60),
    };
    let now = at(12, 0, 0, 0);
    let idle_before = at(11, 30, 0, 0);
    // (lease ends, last active, in force)
    let cases = [
        (at(12, 0, 1, 0), now, true),
        (at(12, 0, 0, 1), now, true),
        (now, now, false),
        (at(11, 59, 59, 0), now, false),
        (at(13, 0, 0, 0), idle_before, false),
        (at(13, 0, 0, 0), at(11, 30, 0, 1), true),
        (at(13, 0, 0, 0), at(11, 0, 0, 0), false),
        (at(11, 0, 0, 0), at(11, 0, 0, 0), false),
    ];
    for (expires_at, active, expected) in cases {
        let row = lock(1, None, expires_at, active);
        let rust = rules::in_force(&row, now, &policy);
        let sql = diesel::sql_query(format!(
            "SELECT {} AS verdict FROM (VALUES ($3::timestamp, $4::timestamp)) AS l(expires_at, last_activity_at)",
            rules::IN_FORCE_SQL
        ))
        .bind::<Timestamp, _>(now)
        .bind::<Timestamp, _>(idle_before)
        .bind::<Timestamp, _>(expires_at)
        .bind::<Timestamp, _>(active)
        .get_result::<Verdict>(&mut pg)
        .expect("evaluate in_force")
        .verdict;
        assert_eq!(
            (rust, sql),
            (expected, expected),
            "in force with the lease ending {expires_at} and last active {active}, at {now}"
        );
    }
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn held_by_says_the_same_in_rust_and_sql() {
    let Some(mut pg) = postgres() else { return };
    let later = at(13, 0, 0, 0);
    // (the lock's user and tab, the caller's user and tab, tab required, held)
    type HeldByCase<'a> = (i64, Option<&'a str>, i64, Option<&'a str>, bool, bool);
    let cases: [HeldByCase; 12] = [
        (1, Some("tab-a"), 1, Some("tab-a"), false, true),
        (1, Some("tab-a"), 1, Some("tab-b"), false, false),
        (1, Some("tab-a"), 1, None, false, true),
        (1, Some("tab-a"), 1, None, true, false),
        (1, None, 1, Some("tab-a"), false, true),
        (1, None, 1, Some("tab-a"), true, true),
        (1, None, 1, None, false, true),
        (1, None, 1, None, true, true),
        (1, Some("tab-a"), 2, Some("tab-a"), false, false),
        (1, None, 2, None, false, false),
        (1, Some("tab-a"), 2, None, false, false),
        (1, Some("tab-a"), 1, Some("tab-a"), true, true),
    ];
    for (holder, held_tab, user, tab, tab_required, expected) in cases {
        let row = lock(holder, held_tab, later, later);
        let rust = rules::held_by(&row, UserId(user), tab, tab_required);
        let sql = diesel::sql_query(format!(
            "SELECT {} AS verdict FROM (VALUES ($4::bigint, $5::text)) AS l(user_id, session_id)",
            rules::HELD_BY_SQL
        ))
        .bind::<BigInt, _>(user)
        .bind::<Nullable<Text>, _>(tab)
        .bind::<Bool, _>(tab_required)
        .bind::<BigInt, _>(holder)
        .bind::<Nullable<Text>, _>(held_tab)
        .get_result::<Verdict>(&mut pg)
        .expect("evaluate held_by")
        .verdict;
        assert_eq!(
            (rust, sql),
            (expected, expected),
            "user {holder}'s lock from tab {held_tab:?}, asked by user {user} from tab {tab:?} (tab required: {tab_required})"
        );
    }
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn may_hold_says_the_same_in_rust_and_sql() {
    let Some(mut pg) = postgres() else { return };
    let case = 7_i64;
    // Every role on the case, on another case only, and none; admin or not.
    let mut cases = Vec::new();
    for admin in [false, true] {
        cases.push((admin, None, None));
        for role in Role::ALL {
            cases.push((admin, Some(role), Some(case)));
            cases.push((admin, Some(role), Some(case + 1)));
        }
    }
    let roles = rules::holder_roles();
    for (admin, role, member_of) in cases {
        let rank = if admin {
            Some(Rank::SiteAdmin)
        } else {
            role.filter(|_| member_of == Some(case)).map(Rank::Member)
        };
        let rust = rules::may_hold(rank);
        let expected = admin || role.is_some_and(|r| r >= Role::Editor) && member_of == Some(case);
        // The caller's cases where their role may hold a lock, as the fast
        // path reads them (`fast_path::sql::READ_CALLER`), from this one
        // membership row.
        let sql = diesel::sql_query(format!(
            "SELECT {} AS verdict",
            rules::MAY_HOLD_SQL.replace(
                "$2",
                "ARRAY(SELECT m.case_id FROM (VALUES ($4::bigint, $5::text)) AS m(case_id, role) \
                 WHERE m.role = ANY ($2))"
            )
        ))
        .bind::<Bool, _>(admin)
        .bind::<Array<Text>, _>(roles)
        .bind::<BigInt, _>(case)
        .bind::<Nullable<BigInt>, _>(member_of)
        .bind::<Nullable<Text>, _>(role.map(Role::as_str))
        .get_result::<Verdict>(&mut pg)
        .expect("evaluate may_hold")
        .verdict;
        assert_eq!(
            (rust, sql),
            (expected, expected),
            "admin {admin}, role {role:?} on case {member_of:?}, asking for case {case}"
        );
    }
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn deep_in_case_says_the_same_in_rust_and_sql() {
    let Some(mut pg) = postgres() else { return };
    let later = at(13, 0, 0, 0);
    // (the locks as (case, deep), the case asked about, a deep lock there)
    type Locks<'a> = &'a [(i64, bool)];
    let cases: [(Locks, i64, bool); 6] = [
        (&[], 1, false),
        (&[(1, false)], 1, false),
        (&[(1, true)], 1, true),
        (&[(2, true)], 1, false),
        (&[(1, false), (2, true), (1, true)], 1, true),
        (&[(1, false), (1, false)], 1, false),
    ];
    for (rows, case, expected) in cases {
        let locks: Vec<Lock> = rows
            .iter()
            .map(|&(case_id, deep)| Lock {
                case_id: CaseId(case_id),
                deep,
                ..lock(1, None, later, later)
            })
            .collect();
        let rust = rules::deep_in_case(&locks, CaseId(case));
        let values = if rows.is_empty() {
            "SELECT NULL::bigint, NULL::boolean WHERE FALSE".to_owned()
        } else {
            let tuples: Vec<String> = rows
                .iter()
                .map(|(case_id, deep)| format!("({case_id}::bigint, {deep})"))
                .collect();
            format!("VALUES {}", tuples.join(", "))
        };
        // A CTE named `locks` stands for the table the fragment reads.
        let sql = diesel::sql_query(format!(
            "WITH locks(case_id, deep) AS ({values}) SELECT {} AS verdict",
            rules::DEEP_IN_CASE_SQL
        ))
        .bind::<BigInt, _>(case)
        .get_result::<Verdict>(&mut pg)
        .expect("evaluate deep_in_case")
        .verdict;
        assert_eq!(
            (rust, sql),
            (expected, expected),
            "locks {rows:?}, case {case}"
        );
    }
}
