//! The rules of a lock, each stated once: the Rust predicate that SQLite
//! and the general path run, with the SQL fragment the fast path's
//! PostgreSQL statements are built from (`fast_path::sql`) beside it.
//! `tests/rules.rs` evaluates each pair on the same rows on PostgreSQL, so
//! the two cannot drift apart.
//!
//! The rules of an acquire are also one list, [`ACQUIRE_RULES`]: each says
//! when it has a say and whether the fast path's acquire states it in SQL.
//! Where a rule that applies has no SQL, the fast path declines and the
//! general path decides ([`fast_path_serves`]): a new rule is correct with
//! its Rust alone, and its SQL is a later optimisation.
//!
//! Fragments take their placeholders as arguments, so each statement
//! numbers its binds its own way; the `*_SQL` constants are each fragment
//! with fixed placeholders, for those tests.

use chrono::NaiveDateTime;

use super::policy::LockPolicy;
use super::target::{LockTarget, TargetKind};
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
/// SQL compares them; worked out once (the fast path binds them on every
/// call).
pub fn holder_roles() -> &'static [&'static str] {
    static ROLES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ROLES.get_or_init(|| {
        Role::ALL
            .into_iter()
            .filter(|role| may_hold(Some(Rank::Member(*role))))
            .map(Role::as_str)
            .collect()
    })
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

/// What `POST /locks` asks for beyond the record.
#[derive(Clone, Copy, Debug, Default)]
pub struct AcquireMode {
    /// "Edit anyway": take it over from its holder.
    pub takeover: bool,
    /// Join the line when someone else holds it.
    pub wait: bool,
    /// Lock everything inside the record too (depth infinity).
    pub deep: bool,
}

/// One acquire, as the rules see it before anything is read.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub kind: &'a TargetKind,
    pub mode: AcquireMode,
    /// The caller names a tab (`X-Session-ID`).
    pub with_tab: bool,
}

/// A rule of acquiring a lock.
pub struct AcquireRule {
    /// What it says, for people.
    pub name: &'static str,
    /// Whether it has a say in this acquire.
    pub applies: fn(&Asked) -> bool,
    /// The fast path's acquire (`fast_path::sql::FAST_ACQUIRE_*`) states it
    /// in SQL. When `false`, the fast path declines wherever the rule
    /// applies, and the general path decides.
    pub in_fast_sql: bool,
    /// Why a lock on `target`, as found, is refused (403), asked by the
    /// general path's acquire and by the hand-off to a waiter; `None` for
    /// a rule decided where its name says.
    pub refuses: Option<fn(&LockTarget) -> Option<String>>,
}

/// Every rule of an acquire, in the order the general path asks them.
pub const ACQUIRE_RULES: &[AcquireRule] = &[
    AcquireRule {
        name: "only who may hold a lock in the case takes one (may_hold)",
        applies: |_| true,
        in_fast_sql: true,
        refuses: None,
    },
    AcquireRule {
        name: "a record under a deep lock is the deep lock's to cover (deep_in_case, subtree)",
        applies: |_| true,
        in_fast_sql: true,
        refuses: None,
    },
    AcquireRule {
        name: "an external record is named by its host, and may have no row yet (naming)",
        applies: |asked| asked.kind.is_external(),
        in_fast_sql: false,
        refuses: None,
    },
    AcquireRule {
        name: "edit anyway overrides the holder (engine::general::acquire)",
        applies: |asked| asked.mode.takeover,
        in_fast_sql: false,
        refuses: None,
    },
    AcquireRule {
        name: "a deep lock covers what the record holds (subtree)",
        applies: |asked| asked.mode.deep,
        in_fast_sql: false,
        refuses: None,
    },
    AcquireRule {
        name: "a wait needs a tab, and a type with a line (line::join)",
        applies: |asked| asked.mode.wait && !(asked.with_tab && asked.kind.allows_waiting()),
        in_fast_sql: false,
        refuses: None,
    },
];

/// The fast path may take `asked`: every rule that applies to it is in
/// its SQL.
pub fn fast_path_serves(asked: &Asked) -> bool {
    fast_path_serves_under(ACQUIRE_RULES, asked)
}

fn fast_path_serves_under(rules: &[AcquireRule], asked: &Asked) -> bool {
    rules
        .iter()
        .all(|rule| rule.in_fast_sql || !(rule.applies)(asked))
}

/// Why a lock on `target` may not be held, by the rules that judge a
/// record as it is found; `None` when none refuses it.
pub fn refusal(kind: &TargetKind, target: &LockTarget) -> Option<String> {
    refusal_under(ACQUIRE_RULES, kind, target)
}

/// Whether any rule judges records of `kind` as they are found (the
/// hand-off then reads the record to ask [`refusal`]).
pub fn judges_records(kind: &TargetKind) -> bool {
    ACQUIRE_RULES
        .iter()
        .any(|rule| rule.refuses.is_some() && (rule.applies)(&Asked::plain(kind)))
}

fn refusal_under(rules: &[AcquireRule], kind: &TargetKind, target: &LockTarget) -> Option<String> {
    let asked = Asked::plain(kind);
    rules
        .iter()
        .filter(|rule| (rule.applies)(&asked))
        .find_map(|rule| rule.refuses.and_then(|refuses| refuses(target)))
}

impl<'a> Asked<'a> {
    /// A plain acquire from a tab: what a hand-off gives.
    pub fn plain(kind: &'a TargetKind) -> Asked<'a> {
        Asked {
            kind,
            mode: AcquireMode::default(),
            with_tab: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::target::kind_named;
    use crate::models::{Case, WireType};

    fn kind() -> &'static TargetKind {
        kind_named(Case::TYPE).expect("the case is lockable")
    }

    #[test]
    fn the_fast_path_serves_a_plain_acquire_and_declines_what_it_has_no_sql_for() {
        let plain = Asked::plain(kind());
        assert!(fast_path_serves(&plain));
        for mode in [
            AcquireMode {
                takeover: true,
                ..Default::default()
            },
            AcquireMode {
                deep: true,
                ..Default::default()
            },
        ] {
            assert!(!fast_path_serves(&Asked { mode, ..plain }), "{mode:?}");
        }
        let wait = AcquireMode {
            wait: true,
            ..Default::default()
        };
        assert!(fast_path_serves(&Asked {
            mode: wait,
            ..plain
        }));
        assert!(!fast_path_serves(&Asked {
            mode: wait,
            with_tab: false,
            ..plain
        }));
    }

    #[test]
    fn a_rule_without_sql_makes_the_fast_path_decline_and_its_refusal_is_asked() {
        const NO_SQL: &[AcquireRule] = &[AcquireRule {
            name: "nothing in a case numbered 7",
            applies: |_| true,
            in_fast_sql: false,
            refuses: Some(|target| (target.case_id.get() == 7).then(|| "case 7".to_owned())),
        }];
        let asked = Asked::plain(kind());
        assert!(!fast_path_serves_under(NO_SQL, &asked));
        let target = |case: i64| LockTarget {
            identity: crate::views::Identity::new(Case::TYPE, Case::TABLE, case),
            case_id: crate::models::CaseId(case),
            view: crate::views::RecordView::External(crate::views::ExternalView::new(
                crate::views::Identity::new(Case::TYPE, Case::TABLE, case),
                case,
            )),
            version: None,
            containers: Vec::new(),
            external: false,
        };
        assert_eq!(
            refusal_under(NO_SQL, kind(), &target(7)).as_deref(),
            Some("case 7")
        );
        assert_eq!(refusal_under(NO_SQL, kind(), &target(8)), None);
        assert_eq!(
            refusal(kind(), &target(7)),
            None,
            "no rule of baton's refuses by the record"
        );
    }
}
