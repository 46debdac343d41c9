//! Lock routes: acquire (and take over), read, status, refresh, release,
//! break, release a whole tab, and the audit trail.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::Value;

use super::{case_by_slug, case_of};
use crate::auth::access::authorize;
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::engine::{self, active_locks, LockStatus};
use crate::locks::lockable::{kind_named, known_types};
use crate::locks::render::{lock_event_view, lock_view, lock_views};
use crate::locks::{Acquired, Target};
use crate::models::{Lock, LockEvent, Role, User};
use crate::state::AppState;
use crate::views::locks::LockState;
use crate::views::LockStatusView;

/// Which record: `lockableType` + `lockableParam` (snake_case accepted too).
#[derive(Deserialize)]
pub struct LockableRef {
    #[serde(alias = "lockable_type", rename = "lockableType")]
    lockable_type: Option<String>,
    #[serde(alias = "lockable_param", rename = "lockableParam")]
    lockable_param: Option<Value>,
}

impl LockableRef {
    /// Finds the record: 422 for an unknown type, 404 for a missing record.
    /// With `for_update` its row stays locked until the transaction ends.
    fn resolve(self, conn: &mut crate::db::DbConn, for_update: bool) -> AppResult<Target> {
        let type_name = self.lockable_type.ok_or_else(|| {
            AppError::invalid(format!(
                "lockableType is required (one of {}).",
                known_types()
            ))
        })?;
        let kind = kind_named(&type_name).ok_or_else(|| {
            AppError::invalid(format!(
                "'{type_name}' is not a lockable type; use one of {}.",
                known_types()
            ))
        })?;
        let param = match self.lockable_param {
            Some(Value::String(s)) => s,
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return Err(AppError::invalid(
                    "lockableParam is required: the record's id.",
                ))
            }
        };
        let missing = || AppError::not_found(format!("{} {param} does not exist.", kind.type_name));
        let id: i64 = param.trim().parse().map_err(|_| missing())?;
        let found = if for_update {
            kind.find_for_update(conn, id)?
        } else {
            kind.find(conn, id)?
        };
        found.ok_or_else(missing)
    }
}

#[derive(Deserialize)]
pub struct LockBody {
    lock: LockFields,
}

#[derive(Deserialize)]
pub struct LockFields {
    #[serde(flatten)]
    target: LockableRef,
    #[serde(default)]
    takeover: bool,
}

/// `POST /locks`: 201 new lock, 200 when the caller already holds it, 409
/// when someone else does; with `takeover: true`, "Edit anyway".
pub async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<LockBody>,
) -> AppResult<HttpResponse> {
    let LockFields { target, takeover } = body.into_inner().lock;
    let policy = state.policy;
    let acquired = state
        .db
        .write(caller.session_id().cloned(), move |tx| {
            let actor = caller.load(tx.conn)?;
            // Locking the record's row orders this acquire with guarded
            // writes of the same record (PostgreSQL; SQLite writes are serial).
            let target = target.resolve(tx.conn, true)?;
            let case = case_of(tx.conn, target.case_id)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            engine::acquire(tx, &actor, &target, takeover, &policy)
        })
        .await?;
    Ok(match acquired {
        Acquired::Created(held) => HttpResponse::Created().json(lock_view(&held)),
        Acquired::Renewed(held) => HttpResponse::Ok().json(lock_view(&held)),
    })
}

/// `GET /locks/:id`: readers of its case.
pub async fn show(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    let held = state
        .db
        .read(move |conn| {
            let gone = || AppError::not_found(format!("Lock {id} does not exist (any more)."));
            let held = Lock::find(conn, id)?.ok_or_else(gone)?;
            let case = case_of(conn, held.lock.case_id)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            if engine::overdue(&held.lock, crate::clock::now(), &policy).is_some() {
                return Err(gone());
            }
            Ok(held)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

#[derive(Deserialize)]
pub struct IndexQuery {
    case: Option<String>,
}

/// `GET /locks?case=:slug`: the active locks of a case.
pub async fn index(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<IndexQuery>,
) -> AppResult<HttpResponse> {
    let slug = query
        .into_inner()
        .case
        .ok_or_else(|| AppError::invalid("Say which case: GET /locks?case=<slug>."))?;
    let policy = state.policy;
    let locks = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            active_locks(conn, case.id, &policy)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_views(&locks)))
}

/// `GET /locks/status?lockableType=Card&lockableParam=1`.
pub async fn status(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<LockableRef>,
) -> AppResult<HttpResponse> {
    let target = query.into_inner();
    let policy = state.policy;
    let status = state
        .db
        .read(move |conn| {
            let target = target.resolve(conn, false)?;
            let case = case_of(conn, target.case_id)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            engine::status(conn, &actor, &target, &policy)
        })
        .await?;
    let (state, lock) = match status {
        LockStatus::Owned(held) => (LockState::Owned, Some(lock_view(&held))),
        LockStatus::Locked(held) => (LockState::Locked, Some(lock_view(&held))),
        LockStatus::Unlocked => (LockState::Unlocked, None),
    };
    Ok(HttpResponse::Ok().json(LockStatusView { state, lock }))
}

/// `POST /locks/:id/refresh`: the holder renews lease and activity.
pub async fn refresh(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    let held = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            engine::refresh(tx, &actor, id, &policy)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

/// `DELETE /locks/:id`: release (holder) or break (equal or higher rank).
pub async fn destroy(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    state
        .db
        .write(caller.session_id().cloned(), move |tx| {
            let actor = caller.load(tx.conn)?;
            engine::release(tx, &actor, id, &policy)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize)]
pub struct SessionQuery {
    session: Option<String>,
}

/// `DELETE /locks?session=mine`: releases every lock of the calling tab.
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
    let session_id = actor.session_id.clone().ok_or_else(|| {
        AppError::invalid("Send X-Session-ID to say which tab's locks to release.")
    })?;
    state
        .db
        .write(actor.session_id.clone(), move |tx| {
            engine::release_session(tx, &actor, &session_id)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize)]
pub struct EventsQuery {
    limit: Option<i64>,
    before: Option<i64>,
}

/// `GET /cases/:slug/lock_events` (managers): newest first; `?limit=` (at
/// most 1000, default 100) and `?before=<id>` page back.
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
    let events = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &actor.user, &case, Role::Manager)?;
            let events = LockEvent::of_case(conn, case.id, limit, before)?;
            let mut ids: Vec<i64> = events
                .iter()
                .flat_map(|e| [Some(e.holder_id), e.actor_id])
                .flatten()
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let users = User::refs(conn, &ids)?;
            let user = |id: i64| users.iter().find(|u| u.id == id);
            Ok::<_, AppError>(
                events
                    .iter()
                    .filter_map(|e| {
                        let holder = user(e.holder_id)?;
                        Some(lock_event_view(e, e.actor_id.and_then(user), holder))
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .await?;
    Ok(HttpResponse::Ok().json(events))
}
