//! Site admins: who is viewing or editing what, and closing a tab.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::IntoParams;

use super::extract::valid_session_id;
use crate::auth::Actor;
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::locks::render::lock_views;
use crate::models::{Presence, Tab, UserId};
use crate::state::AppState;
use crate::views::SessionView;

fn require_admin(actor: &Actor) -> AppResult<()> {
    if actor.user.admin {
        Ok(())
    } else {
        Err(AppError::forbidden(
            "Only a site admin can see or close sessions.",
        ))
    }
}

/// `GET /admin/sessions`: every open tab on every instance, with the locks
/// it holds.
#[utoipa::path(get, operation_id = "listSessions", path = "/admin/sessions", tag = "admin",
    responses(
        (status = 200, description = "Every open tab on every instance, with its locks", body = Vec<SessionView>),
        (status = 403, description = "Only a site admin can do this"),
    ))]
pub async fn index(state: web::Data<AppState>, actor: Actor) -> AppResult<HttpResponse> {
    require_admin(&actor)?;
    let presence_ttl = state.realtime.timing.presence_ttl();
    let live = state
        .db
        .read(move |conn| {
            let now = crate::db::now(conn)?;
            Ok::<_, AppError>(Presence::all_live(conn, clock::before(now, presence_ttl))?)
        })
        .await?;
    let tabs = live
        .iter()
        .map(|(presence, _, _)| Tab {
            user_id: presence.user_id,
            session_id: presence.session_id.clone(),
        })
        .collect();
    let locks = state.engine.locks_of_tabs(tabs).await?;
    let sessions: Vec<SessionView> = live
        .iter()
        .zip(locks)
        .map(|((presence, user, case), held)| {
            SessionView::new(presence, user, case, lock_views(&held))
        })
        .collect();
    Ok(HttpResponse::Ok().json(sessions))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct KickQuery {
    /// Only this user's tab with the session id (a tab is a user and a
    /// session id together); without it, every tab with the session id.
    #[param(nullable = false, minimum = 1)]
    user: Option<i64>,
}

/// `DELETE /admin/sessions/:sessionId[?user=ID]`: releases the tab's locks
/// (reason `kicked`), takes it out of its lines, tells it (`kicked`) and
/// closes its channel, on every instance. 404 if no such tab has an open
/// channel, a lock or a place in line.
#[utoipa::path(delete, operation_id = "kickSession", path = "/admin/sessions/{sessionId}", tag = "admin",
    params(("sessionId" = String, Path, description = "The tab's session id"), KickQuery),
    responses(
        (status = 204, description = "Its locks are released (`kicked`), it is told, and its channel closed"),
        (status = 403, description = "Only a site admin can do this"),
        (status = 404, description = "No open tab, lock or place in line has this session id (of this user)"),
    ))]
pub async fn kick(
    state: web::Data<AppState>,
    actor: Actor,
    session: web::Path<String>,
    query: web::Query<KickQuery>,
) -> AppResult<HttpResponse> {
    require_admin(&actor)?;
    let session_id = valid_session_id(&session.into_inner())
        .map_err(|_| AppError::not_found("No tab has this session id."))?;
    let user = query.into_inner().user.map(UserId);
    let presence_ttl = state.realtime.timing.presence_ttl();
    state
        .engine
        .kick(actor, session_id, user, presence_ttl)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
