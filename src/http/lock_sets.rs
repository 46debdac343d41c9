//! Routes that lock several records at once: a lock set (all or nothing)
//! and a claim (the first free of many).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::locks::TargetRef;
use crate::auth::Caller;
use crate::error::{AppError, AppResult};
use crate::locks::engine::{Acquired, TargetName};
use crate::locks::render::{lock_view, lock_views};
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
    locks: Vec<TargetRef>,
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
    let held = state.engine.lock_set(&caller, records).await?;
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
    candidates: Vec<TargetRef>,
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
    let acquired = state.engine.claim(&caller, records).await?;
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
fn parse_records(refs: &[TargetRef], max: usize, what: &str) -> AppResult<Vec<TargetName>> {
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
