//! Lock routes: acquire (and take over), read, status, refresh, release,
//! break, release a whole tab, and the audit trail. Each parses, asks who
//! the caller is and what their role is, calls the engine and renders.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::schema::{LockOrWaiter, SessionSelector, TargetRef};
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::engine::{AcquireMode, Acquired, Joined, LockStatus};
use crate::locks::render::{lock_view, lock_views, waiter_view, waiter_views};
use crate::models::{LockEventId, LockId};
use crate::state::AppState;
use crate::views::locks::{LockDepth, LockState};
use crate::views::{LockEventView, LockStatusView, LockView, WaiterView};

#[derive(Deserialize, ToSchema)]
pub struct LockBody {
    #[serde(deserialize_with = "crate::http::params::object")]
    lock: LockFields,
}

#[derive(Deserialize, ToSchema)]
pub struct LockFields {
    #[serde(flatten)]
    target: TargetRef,
    /// "Edit anyway": revoke the holder's lock and take it, if your role on
    /// the case is at least theirs. It skips the waiting line.
    #[serde(default)]
    takeover: bool,
    /// When someone else holds it, join its waiting line (202 with your
    /// tab's waiter) instead of a 409: the record is handed to your tab when
    /// their lock ends. Needs `X-Session-ID`. Depth `"0"` only.
    #[serde(default)]
    wait: bool,
    /// `"infinity"` (a case, or a record whose type has children): lock the record with everything
    /// inside it, including records created later. Refused (409, `locks`
    /// naming them) while someone else holds anything inside; with
    /// `takeover`, their locks end.
    #[serde(default)]
    depth: LockDepth,
}

/// `POST /locks`: 201 new lock, 200 when the caller already holds it, 409
/// when someone else does; with `takeover: true`, "Edit anyway"; with
/// `wait: true`, 202 and a place in the record's waiting line.
#[utoipa::path(post, operation_id = "acquireLock", path = "/locks", tag = "locks",
    request_body = LockBody,
    responses(
        (status = 201, description = "A new lock (or, with `takeover`, the holder's revoked and this one granted)", body = LockView),
        (status = 200, description = "You (this tab) held it already: lease renewed. Or, with `wait`, this tab was in its line already: that waiter, renewed", body = LockOrWaiter),
        (status = 202, description = "With `wait`: someone else holds it and this tab joined its line; the record is handed over when their lock ends", body = WaiterView),
        (status = 403, description = "`forbidden`: not an editor of its case; `outranked` (with `lock`): the holder (of a deep takeover: one of the holders inside) outranks you"),
        (status = 404, description = "No record has this type and id"),
        (status = 409, description = "`lock_held` (with the holder's `lock`, and `locks`: every lock in the way): someone else holds it, or a deep lock of someone else covers it (`lock` is that deep lock), or (`depth: \"infinity\"`) someone else holds a lock inside it; or `conflict`: it changed hands repeatedly, try again"),
        (status = 422, description = "`lockableType` or `lockableParam` is missing or invalid, `wait` without `X-Session-ID` or with `depth: \"infinity\"`, or `depth: \"infinity\"` on a record that holds no others"),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<LockBody>,
) -> AppResult<HttpResponse> {
    let LockFields {
        target,
        takeover,
        wait,
        depth,
    } = body.into_inner().lock;
    let mode = AcquireMode {
        takeover,
        wait,
        deep: depth == LockDepth::Infinity,
    };
    let acquired = state.engine.acquire(&caller, target.parse(), mode).await?;
    Ok(match acquired {
        Acquired::Created(held) => HttpResponse::Created().json(lock_view(&held)),
        Acquired::Renewed(held) => HttpResponse::Ok().json(lock_view(&held)),
        Acquired::Waiting(Joined::New(queued)) => {
            HttpResponse::Accepted().json(waiter_view(&queued))
        }
        Acquired::Waiting(Joined::Again(queued)) => HttpResponse::Ok().json(waiter_view(&queued)),
    })
}

/// `GET /locks/:id`: readers of its case.
#[utoipa::path(get, operation_id = "showLock", path = "/locks/{id}", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 200, description = "The lock", body = LockView),
        (status = 403, description = "You are not a member of its case"),
    ))]
pub async fn show(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    let held = state.engine.show(actor, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IndexQuery {
    /// The case's slug.
    #[param(required = true, value_type = String)]
    case: Option<String>,
}

/// `GET /locks?case=:slug`: the active locks of a case.
#[utoipa::path(get, operation_id = "listLocks", path = "/locks", tag = "locks",
    params(IndexQuery),
    responses(
        (status = 200, description = "The case's active locks, oldest first", body = Vec<LockView>),
        (status = 403, description = "You are not a member of the case"),
        (status = 404, description = "No case has this slug"),
        (status = 422, description = "`case` is missing"),
    ))]
pub async fn index(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<IndexQuery>,
) -> AppResult<HttpResponse> {
    let slug = query
        .into_inner()
        .case
        .ok_or_else(|| AppError::invalid("Say which case: GET /locks?case=<slug>."))?;
    let locks = state.engine.case_locks(actor, slug).await?;
    Ok(HttpResponse::Ok().json(lock_views(&locks)))
}

/// `GET /locks/status?lockableType=Ticket&lockableParam=1`.
#[utoipa::path(get, operation_id = "lockStatus", path = "/locks/status", tag = "locks",
    params(TargetRef),
    responses(
        (status = 200, description = "`owned` (your tab holds it, or a deep lock of yours covers it), `locked` (someone else does: `lock` is theirs, maybe the deep lock on its page or case) or `unlocked`, with the record's waiting line", body = LockStatusView),
        (status = 403, description = "You are not a member of its case"),
        (status = 404, description = "No record has this type and id"),
        (status = 422, description = "`lockableType` or `lockableParam` is missing or invalid"),
    ))]
pub async fn status(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<TargetRef>,
) -> AppResult<HttpResponse> {
    let named = query.into_inner().parse()?;
    let (status, waiters) = state.engine.status(actor, named).await?;
    let (state, lock) = match status {
        LockStatus::Owned(held) => (LockState::Owned, Some(lock_view(&held))),
        LockStatus::Locked(held) => (LockState::Locked, Some(lock_view(&held))),
        LockStatus::Unlocked => (LockState::Unlocked, None),
    };
    Ok(HttpResponse::Ok().json(LockStatusView {
        state,
        lock,
        waiters: waiter_views(&waiters),
    }))
}

/// `POST /locks/:id/refresh`: the holder renews lease and activity.
#[utoipa::path(post, operation_id = "refreshLock", path = "/locks/{id}/refresh", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 200, description = "Lease and activity renewed", body = LockView),
        (status = 403, description = "Only the holding tab can refresh it"),
    ))]
pub async fn refresh(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    let held = state.engine.refresh(actor, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

/// `DELETE /locks/:id`: release (holder) or break (equal or higher rank).
#[utoipa::path(delete, operation_id = "releaseLock", path = "/locks/{id}", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 204, description = "Released (by its holder) or broken (by an editor of equal or higher rank, recorded as `overridden`)"),
        (status = 403, description = "`forbidden`: not an editor of its case; `outranked` (with `lock`): the holder outranks you"),
    ))]
pub async fn destroy(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    state.engine.release(&caller, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    #[param(required = true, value_type = SessionSelector)]
    session: Option<String>,
}

/// `DELETE /locks?session=mine`: releases every lock of the calling tab and
/// takes it out of every waiting line.
#[utoipa::path(delete, operation_id = "releaseMyLocks", path = "/locks", tag = "locks",
    params(
        SessionQuery,
        ("X-Session-ID" = String, Header, description = "Required here: the tab whose locks to release."),
    ),
    responses(
        (status = 204, description = "Every lock of the calling tab is released, and it left every waiting line"),
        (status = 422, description = "`session` is not `mine`, or no `X-Session-ID` was sent"),
    ))]
pub async fn destroy_mine(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<SessionQuery>,
) -> AppResult<HttpResponse> {
    if query.session.as_deref() != Some("mine") {
        return Err(AppError::invalid(
            "Use DELETE /locks?session=mine to release your tab's locks.",
        ));
    }
    let tab = actor.tab().ok_or_else(|| {
        AppError::invalid("Send X-Session-ID to say which tab's locks to release.")
    })?;
    state.engine.release_tab(actor, tab).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// How many, newest first (default 100).
    #[param(nullable = false, minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// Only events older than this event id (to page back).
    #[param(nullable = false, minimum = 0)]
    before: Option<i64>,
}

/// `GET /cases/:slug/lock_events` (managers): newest first; `?limit=` (at
/// most 1000, default 100) and `?before=<id>` page back.
#[utoipa::path(get, operation_id = "listLockEvents", path = "/cases/{slug}/lock_events", tag = "locks",
    params(("slug" = String, Path, description = "The case's slug"), EventsQuery),
    responses(
        (status = 200, description = "The audit trail, newest first", body = Vec<LockEventView>),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 422, description = "`limit` or `before` is out of range"),
    ))]
pub async fn events(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> AppResult<HttpResponse> {
    let EventsQuery { limit, before } = query.into_inner();
    let limit = limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(AppError::invalid("limit must be between 1 and 1000."));
    }
    if before.is_some_and(|b| b < 0) {
        return Err(AppError::invalid("before must be an event id (0 or more)."));
    }
    let before = before.map(LockEventId);
    let events = state
        .engine
        .lock_events(actor, slug.into_inner(), limit, before)
        .await?;
    Ok(HttpResponse::Ok().json(events))
}
