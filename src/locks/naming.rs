//! A record a request names, and finding it: the case it is in (read,
//! nothing locked, so that the caller's role is known first), the record
//! itself (row-locked for a lock write), or — for a record of an external
//! type never locked before — naming it (giving it an id).

use super::{LockableKind, Target};
use crate::db::{DbConn, Tx};
use crate::error::{AppError, AppResult};
use crate::models::{Case, CaseId, ExternalRecord};

/// A record a request names.
#[derive(Clone, Debug)]
pub enum Named {
    /// One of baton's own (a case, a record baton stores), by id.
    Stored(&'static LockableKind, i64),
    /// A record of an external type: what case `case` (a slug) calls `param`.
    External {
        kind: &'static LockableKind,
        case: String,
        param: String,
    },
}

impl Named {
    pub fn kind(&self) -> &'static LockableKind {
        match self {
            Named::Stored(kind, _) | Named::External { kind, .. } => kind,
        }
    }

    /// The case of the record, read without locking anything: 404 for a
    /// missing record or case.
    pub fn case_id(&self, conn: &mut DbConn) -> AppResult<CaseId> {
        match self {
            Named::Stored(kind, id) => kind
                .find(conn, *id)?
                .map(|target| target.case_id)
                .ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                }),
            Named::External { case, .. } => Ok(case_by_slug(conn, case)?.id),
        }
    }

    /// The record's id, naming an external record (giving it an id) if it
    /// was never locked: only once the caller's role on its case is known.
    /// 404 for an external record's unknown case.
    pub fn id_naming(&self, tx: &mut Tx) -> AppResult<i64> {
        match self {
            Named::Stored(_, id) => Ok(*id),
            Named::External { kind, case, param } => {
                let case = case_by_slug(tx.conn, case)?;
                let record = ExternalRecord::name(tx.conn, kind.type_name, &case, param, tx.now)?;
                Ok(record.id)
            }
        }
    }

    /// Finds the record to lock, its row locked until the transaction ends
    /// unless `for_update` is false (an external record is named, given an
    /// id, if it never was): 404 for a missing record or case.
    pub fn resolve(&self, tx: &mut Tx, for_update: bool) -> AppResult<Target> {
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
    pub fn look_up(&self, conn: &mut DbConn) -> AppResult<(Case, Option<Target>)> {
        match self {
            Named::Stored(kind, id) => {
                let target = kind.find(conn, *id)?.ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                })?;
                let case = Case::find(conn, target.case_id)?.ok_or_else(|| {
                    AppError::not_found(format!("Case {} does not exist.", target.case_id))
                })?;
                Ok((case, Some(target)))
            }
            Named::External { kind, case, param } => {
                let case = case_by_slug(conn, case)?;
                let target = kind.find_external(conn, case.id, param)?;
                Ok((case, target))
            }
        }
    }
}

/// The case with this slug, or 404.
fn case_by_slug(conn: &mut DbConn, slug: &str) -> AppResult<Case> {
    Case::find_by_slug(conn, slug)?
        .ok_or_else(|| AppError::not_found(format!("There is no case '{slug}'.")))
}
