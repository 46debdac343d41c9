//! Site admins: who is viewing or editing what, and closing a tab.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::IntoParams;

use super::extract::valid_session_id;
use crate::auth::Actor;
use crate::clock;
use crate::db::{KickReason, Outgoing, Tabs};
use crate::error::{AppError, AppResult};
use crate::locks::holding::{end, Line};
use crate::locks::line;
use crate::locks::render::lock_views;
use crate::models::{Lock, LockAction, Presence, Tab, UserId, Waiter, WaiterEnd};
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
    let sessions = state
        .db
        .read(move |conn| {
            let now = crate::db::now(conn)?;
            let live = Presence::all_live(conn, clock::before(now, presence_ttl))?;
            let mut out = Vec::with_capacity(live.len());
            for (presence, user, case) in live {
                let tab = Tab {
                    user_id: presence.user_id,
                    session_id: presence.session_id.clone(),
                };
                let locks = lock_views(&Lock::of_tab(conn, &tab)?);
                out.push(SessionView::new(&presence, &user, &case, locks));
            }
            Ok::<_, AppError>(out)
        })
        .await?;
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
    let policy = state.policy;
    state
        .db
        .write_retrying(actor.editor(), move |tx| {
            // Every tab with this session id, or the one of this user.
            let tabs: Vec<Tab> = match user {
                Some(user_id) => vec![Tab {
                    user_id,
                    session_id: session_id.clone(),
                }],
                None => Presence::tabs_with_session(tx.conn, &session_id)?,
            };
            // Rows in the row-lock order of `crate::locks`: its locks, then
            // every place in line this touches.
            Lock::lock_rows_of_tabs(tx.conn, &tabs)?;
            let (mut locks, mut places) = (Vec::new(), Vec::new());
            for tab in &tabs {
                locks.extend(Lock::of_tab(tx.conn, tab)?);
                places.extend(Waiter::of_tab(tx.conn, tab)?);
            }
            line::lock_places_for_leaving(tx, &places, &locks)?;
            let seen_since = clock::before(tx.now, presence_ttl);
            let admin = actor.user.to_ref();
            let mut found = !locks.is_empty();
            for tab in &tabs {
                found |= Presence::live_of_tab(tx.conn, tab, None, seen_since)? > 0;
                // Out of its lines first, so that none of its locks goes back to it.
                found |= line::leave_tab(tx, tab, WaiterEnd::Kicked)? > 0;
            }
            if !found {
                return Err(AppError::not_found(format!(
                    "No open tab, lock or place in line has session id {session_id}."
                )));
            }
            for tab in &tabs {
                // Read again: a grant to this tab may have committed meanwhile.
                for held in &Lock::of_tab(tx.conn, tab)? {
                    end(
                        tx,
                        held,
                        LockAction::Kicked,
                        Some(&admin),
                        Line::HandOff(&policy),
                    )?;
                }
            }
            tx.publish(Outgoing::Close {
                tabs: Tabs::Session {
                    session: session_id.clone(),
                    user: user.map(UserId::get),
                },
                reason: KickReason::Kicked,
            });
            Ok(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
