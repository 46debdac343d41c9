//! A record a request names, and finding it: the case it is in (read,
//! nothing locked, so that the caller's role is known first), the record
//! itself (row-locked for a lock write), or — for a record of an external
//! type never locked before — naming it (giving it an id).

use super::rules::HOLDER_ROLE;
use super::target::{LockTarget, TargetKind};
use crate::auth::access::{rank_on, require};
use crate::auth::{Actor, Caller};
use crate::db::{DbConn, Tx};
use crate::error::{AppError, AppResult};
use crate::models::{Case, CaseId, ExternalRecord, Lock};

/// A record a request names.
#[derive(Clone, Debug)]
pub enum TargetName {
    /// One of baton's own (a case, a record baton stores), by id.
    Stored(&'static TargetKind, i64),
    /// A record of an external type: what case `case` (a slug) calls `param`.
    External {
        kind: &'static TargetKind,
        case: String,
        param: String,
    },
}

impl TargetName {
    pub fn kind(&self) -> &'static TargetKind {
        match self {
            TargetName::Stored(kind, _) | TargetName::External { kind, .. } => kind,
        }
    }

    /// The record's case, read without locking anything, so that the
    /// caller's role is known before anything is locked; with the record
    /// itself when baton stores it (an external record may not be named
    /// yet). 404 for a missing record or case.
    pub fn find_unlocked(&self, conn: &mut DbConn) -> AppResult<(CaseId, Option<LockTarget>)> {
        match self {
            TargetName::Stored(kind, id) => {
                let target = kind.find(conn, *id)?.ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                })?;
                Ok((target.case_id, Some(target)))
            }
            TargetName::External { case, .. } => Ok((case_by_slug(conn, case)?.id, None)),
        }
    }

    /// The record's id, naming an external record (giving it an id) if it
    /// was never locked: only once the caller's role on its case is known.
    /// 404 for an external record's unknown case.
    pub fn id_naming(&self, tx: &mut Tx) -> AppResult<i64> {
        match self {
            TargetName::Stored(_, id) => Ok(*id),
            TargetName::External { kind, case, param } => {
                let case = case_by_slug(tx.conn, case)?;
                let record = ExternalRecord::name(tx.conn, kind.type_name, &case, param, tx.now)?;
                Ok(record.id)
            }
        }
    }

    /// Finds the record to lock, its row locked until the transaction ends
    /// unless `for_update` is false (an external record is named, given an
    /// id, if it never was): 404 for a missing record or case.
    pub fn resolve(&self, tx: &mut Tx, for_update: bool) -> AppResult<LockTarget> {
        let kind = self.kind();
        let id = self.id_naming(tx)?;
        let found = if for_update {
            kind.find_for_update(tx.conn, id)?
        } else {
            kind.find(tx.conn, id)?
        };
        found.ok_or_else(|| AppError::not_found(format!("{} {id} does not exist.", kind.type_name)))
    }

    /// Finds the record to read about, with its case; `None` for an
    /// external record never locked (nobody holds it).
    pub fn look_up(&self, conn: &mut DbConn) -> AppResult<(Case, Option<LockTarget>)> {
        match self {
            TargetName::Stored(kind, id) => {
                let target = kind.find(conn, *id)?.ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                })?;
                let case = Case::find(conn, target.case_id)?.ok_or_else(|| {
                    AppError::not_found(format!("Case {} does not exist.", target.case_id))
                })?;
                Ok((case, Some(target)))
            }
            TargetName::External { kind, case, param } => {
                let case = case_by_slug(conn, case)?;
                let target = kind.find_external(conn, case.id, param)?;
                Ok((case, target))
            }
        }
    }
}

/// The case with this slug, or 404.
pub fn case_by_slug(conn: &mut DbConn, slug: &str) -> AppResult<Case> {
    Case::find_by_slug(conn, slug)?
        .ok_or_else(|| AppError::not_found(format!("There is no case '{slug}'.")))
}

/// The records a lock set or a claim names, found in the caller's
/// transaction: their case (one for all), the caller and their role on it
/// (401 before 404, both before anything is locked), the order with deep
/// acquires and membership changes (`Lock::order_with_deep_acquires`), then
/// the records, row-locked in one fixed order unless `for_update` is false.
/// Finds every record (404 if one is missing), one query per type, in one
/// fixed order — type, then id — so that two sets row-lock their common
/// records in the same order (`for_update`) and never deadlock; checks they
/// are of one case and that the caller edits it — that first, before
/// anything is locked or written. Returns them in the order asked.
pub(crate) fn resolve_all(
    tx: &mut Tx,
    caller: &Caller,
    named: &[TargetName],
    for_update: bool,
) -> AppResult<(Actor, Vec<LockTarget>)> {
    let mut cases = named.iter().filter_map(|n| match n {
        TargetName::External { case, .. } => Some(case),
        TargetName::Stored(..) => None,
    });
    if let Some(first) = cases.next() {
        if let Some(other) = cases.find(|c| *c != first) {
            return Err(AppError::invalid(format!(
                "All records must be of one case: this names cases {first} and {other}."
            )));
        }
    }
    // The caller's role on the case of the first record, read before
    // anything is locked: the others must be of the same case.
    let Some(first) = named.first() else {
        return Err(AppError::invalid("Name at least one record."));
    };
    let case_id = match first.find_unlocked(tx.conn) {
        Ok((case_id, _)) => case_id,
        Err(e) => {
            caller.clone().load(tx.conn)?; // 401 comes before 404
            return Err(e);
        }
    };
    let (actor, case, rank) = caller.clone().load_on_case(tx.conn, case_id)?;
    require(rank, &case, HOLDER_ROLE)?;
    // Ordered with deep acquires and membership changes (see `crate::locks`)
    // before anything else is read; the role read again under that order.
    if Lock::order_with_deep_acquires(tx.conn, false)? {
        require(rank_on(tx.conn, &actor.user, case.id)?, &case, HOLDER_ROLE)?;
    }
    // External records are named (given ids) in one fixed order — type,
    // then param — so that two requests naming new records in opposite
    // orders never wait for each other's inserts.
    let mut order: Vec<usize> = (0..named.len()).collect();
    order.sort_by_key(|&i| match &named[i] {
        TargetName::Stored(kind, id) => (kind.type_name, String::new(), *id),
        TargetName::External { kind, param, .. } => (kind.type_name, param.clone(), 0),
    });
    let mut ids = vec![0; named.len()];
    for i in order {
        ids[i] = named[i].id_naming(tx)?;
    }
    let records: Vec<(&'static TargetKind, i64)> =
        named.iter().map(|n| n.kind()).zip(ids).collect();
    let records = &records;
    // Every record found and checked to be of the case, nothing locked;
    // then, for a lock write, found again with their rows locked (PostgreSQL;
    // SQLite's writer is single): no row of another case is ever locked.
    let targets = find_in_order(tx.conn, records, false)?;
    if let Some(other) = targets.iter().find(|t| t.case_id != case.id) {
        return Err(AppError::invalid(format!(
            "All records must be of one case: {} is not in the case of the first.",
            other.identity.label(),
        )));
    }
    let targets = if for_update && tx.conn.locks_rows() {
        find_in_order(tx.conn, records, true)?
    } else {
        targets
    };
    Ok((actor, targets))
}

/// `records` found (404 if one is missing), one query per type, in one
/// fixed order — type, then id — so that two sets row-lock their common
/// records in the same order (`for_update`) and never deadlock; returned
/// in the order given.
fn find_in_order(
    conn: &mut DbConn,
    records: &[(&'static TargetKind, i64)],
    for_update: bool,
) -> AppResult<Vec<LockTarget>> {
    let mut kinds: Vec<&'static TargetKind> = records.iter().map(|&(kind, _)| kind).collect();
    kinds.sort_by_key(|kind| kind.type_name);
    kinds.dedup_by_key(|kind| kind.type_name);
    let mut found: Vec<LockTarget> = Vec::with_capacity(records.len());
    for kind in kinds {
        let ids: Vec<i64> = records
            .iter()
            .filter(|(k, _)| k.type_name == kind.type_name)
            .map(|&(_, id)| id)
            .collect();
        found.extend(kind.find_all(conn, &ids, for_update)?);
    }
    records
        .iter()
        .map(|&(kind, id)| {
            found
                .iter()
                .find(|t| t.identity.type_name == kind.type_name && t.identity.id == id)
                .cloned()
                .ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                })
        })
        .collect()
}
