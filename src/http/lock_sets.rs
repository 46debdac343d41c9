//! Routes that lock several records at once: a lock set (all or nothing)
//! and a claim (the first free of many).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::locks::LockableRef;
use crate::auth::access::{rank_on, require};
use crate::auth::{Actor, Caller};
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::naming::Named;
use crate::locks::render::{lock_view, lock_views};
use crate::locks::{sets, Acquired, LockableKind, Target};
use crate::models::{Lock, Role};
use crate::state::AppState;
use crate::views::{LockSetView, LockView};

/// The most records one lock set may ask for.
const MAX_SET: usize = 50;
/// The most candidates one claim may name.
const MAX_CANDIDATES: usize = 100;

#[derive(Deserialize, ToSchema)]
pub struct LockSetBody {
    /// 1–50 records of one case (one named twice counts once, and its lock
    /// appears at each place).
    #[schema(min_items = 1, max_items = 50)]
    locks: Vec<LockableRef>,
}

/// `POST /locks/batch`: all of them or none.
#[utoipa::path(post, operation_id = "lockSet", path = "/locks/batch", tag = "locks",
    request_body = LockSetBody,
    responses(
        (status = 201, description = "Every record is locked by this tab, in the order asked (records it held already were renewed)", body = LockSetView),
        (status = 403, description = "Not an editor of their case"),
        (status = 404, description = "One of the records does not exist"),
        (status = 409, description = "`lock_held`: someone else holds at least one of them (`locks` names every lock in the way, `lock` the first); nothing was locked"),
        (status = 422, description = "No records, more than 50, records of several cases, or an invalid `lockableType`/`lockableParam`"),
    ))]
pub async fn batch(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<LockSetBody>,
) -> AppResult<HttpResponse> {
    let records = parse_records(&body.locks, MAX_SET, "A lock set")?;
    let policy = state.policy;
    let held = state
        .db
        .write_retrying(caller.editor(), move |tx| {
            let (actor, targets) = resolve_records(tx, &caller, &records, true)?;
            sets::acquire_all(tx, &actor, &targets, &policy)
        })
        .await?;
    Ok(HttpResponse::Created().json(LockSetView {
        locks: lock_views(&held),
    }))
}

#[derive(Deserialize, ToSchema)]
pub struct ClaimBody {
    #[serde(deserialize_with = "super::params::object")]
    claim: ClaimFields,
}

#[derive(Deserialize, ToSchema)]
pub struct ClaimFields {
    /// 1–100 records of one case, in the order to try them.
    #[schema(min_items = 1, max_items = 100)]
    candidates: Vec<LockableRef>,
}

/// `POST /locks/claim`: a lock on the first candidate nobody holds.
#[utoipa::path(post, operation_id = "claimLock", path = "/locks/claim", tag = "locks",
    request_body = ClaimBody,
    responses(
        (status = 201, description = "A new lock on the first candidate, in the order given, that nobody else held", body = LockView),
        (status = 200, description = "This tab already held one of the candidates (the first such): renewed, nothing new taken", body = LockView),
        (status = 403, description = "Not an editor of their case"),
        (status = 404, description = "One of the candidates does not exist"),
        (status = 409, description = "`none_free` (with `locks`): every candidate is held"),
        (status = 422, description = "No candidates, more than 100, candidates of several cases, or an invalid `lockableType`/`lockableParam`"),
    ))]
pub async fn claim(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<ClaimBody>,
) -> AppResult<HttpResponse> {
    let records = parse_records(&body.claim.candidates, MAX_CANDIDATES, "A claim")?;
    let policy = state.policy;
    let acquired = state
        .db
        .write(caller.editor(), move |tx| {
            // Not row-locked here: a claim passes busy candidates over.
            let (actor, targets) = resolve_records(tx, &caller, &records, false)?;
            sets::claim(tx, &actor, &targets, &policy)
        })
        .await?;
    Ok(match acquired {
        Acquired::Created(held) => HttpResponse::Created().json(lock_view(&held)),
        Acquired::Renewed(held) => HttpResponse::Ok().json(lock_view(&held)),
        Acquired::Waiting(_) => {
            return Err(AppError::Conflict(
                "The claim joined a line it never asks for; claim again.".into(),
            ))
        }
    })
}

/// The records a set or claim names: 1 to `max`, each valid. (One named
/// twice counts once.)
fn parse_records(refs: &[LockableRef], max: usize, what: &str) -> AppResult<Vec<Named>> {
    if refs.is_empty() || refs.len() > max {
        return Err(AppError::invalid(format!(
            "{what} names 1 to {max} records; this one names {}.",
            refs.len()
        )));
    }
    refs.iter()
        .enumerate()
        .map(|(i, r)| {
            r.parse()
                .map_err(|e| AppError::invalid(format!("Record {} of {}: {e}", i + 1, refs.len())))
        })
        .collect()
}

/// Finds every record (404 if one is missing), one query per type, in one
/// fixed order — type, then id — so that two sets row-lock their common
/// records in the same order (`for_update`) and never deadlock; checks they
/// are of one case and that the caller edits it — that first, before
/// anything is locked or written. Returns them in the order asked.
fn resolve_records(
    tx: &mut Tx,
    caller: &Caller,
    named: &[Named],
    for_update: bool,
) -> AppResult<(Actor, Vec<Target>)> {
    let mut cases = named.iter().filter_map(|n| match n {
        Named::External { case, .. } => Some(case),
        Named::Stored(..) => None,
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
    let case_id = match first.case_id(tx.conn) {
        Ok(case_id) => case_id,
        Err(e) => {
            caller.clone().load(tx.conn)?; // 401 comes before 404
            return Err(e);
        }
    };
    let (actor, case, rank) = caller.clone().load_on_case(tx.conn, case_id)?;
    require(rank, &case, Role::Editor)?;
    // Ordered with deep acquires and membership changes (see `crate::locks`)
    // before anything else is read; the role read again under that order.
    if Lock::order_with_deep_acquires(tx.conn, false)? {
        require(rank_on(tx.conn, &actor.user, case.id)?, &case, Role::Editor)?;
    }
    // External records are named (given ids) in one fixed order — type,
    // then param — so that two requests naming new records in opposite
    // orders never wait for each other's inserts.
    let mut order: Vec<usize> = (0..named.len()).collect();
    order.sort_by_key(|&i| match &named[i] {
        Named::Stored(kind, id) => (kind.type_name, String::new(), *id),
        Named::External { kind, param, .. } => (kind.type_name, param.clone(), 0),
    });
    let mut ids = vec![0; named.len()];
    for i in order {
        ids[i] = named[i].id_naming(tx)?;
    }
    let records: Vec<(&'static LockableKind, i64)> =
        named.iter().map(|n| n.kind()).zip(ids).collect();
    let records = &records;
    let mut kinds: Vec<&'static LockableKind> = records.iter().map(|&(kind, _)| kind).collect();
    kinds.sort_by_key(|kind| kind.type_name);
    kinds.dedup_by_key(|kind| kind.type_name);
    let mut found: Vec<Target> = Vec::with_capacity(records.len());
    for kind in kinds {
        let ids: Vec<i64> = records
            .iter()
            .filter(|(k, _)| k.type_name == kind.type_name)
            .map(|&(_, id)| id)
            .collect();
        found.extend(kind.find_all(tx.conn, &ids, for_update)?);
    }
    let mut targets = Vec::with_capacity(records.len());
    for &(kind, id) in records {
        let Some(target) = found
            .iter()
            .find(|t| t.identity.type_name == kind.type_name && t.identity.id == id)
        else {
            return Err(AppError::not_found(format!(
                "{} {id} does not exist.",
                kind.type_name
            )));
        };
        targets.push(target.clone());
    }
    if let Some(other) = targets.iter().find(|t| t.case_id != case.id) {
        return Err(AppError::invalid(format!(
            "All records must be of one case: {} is not in the case of the first.",
            other.identity.label(),
        )));
    }
    Ok((actor, targets))
}
