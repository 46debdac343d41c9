//! Site admins: who is viewing or editing what, and closing a tab.

use actix_web::{web, HttpResponse};

use crate::auth::Actor;
use crate::clock;
use crate::db::Outgoing;
use crate::error::{AppError, AppResult};
use crate::locks::holding::{end, Line};
use crate::locks::line;
use crate::locks::render::lock_views;
use crate::models::{Lock, LockAction, Presence, Waiter, WaiterEnd};
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
                let locks = lock_views(&Lock::of_session(conn, &presence.session_id)?);
                out.push(SessionView::new(&presence, &user, &case, locks));
            }
            Ok::<_, AppError>(out)
        })
        .await?;
    Ok(HttpResponse::Ok().json(sessions))
}

/// `DELETE /admin/sessions/:sessionId`: releases the tab's locks (reason
/// `kicked`), tells the tab, and closes its channel. 404 if the session has
/// neither an open channel nor a lock.
#[utoipa::path(delete, operation_id = "kickSession", path = "/admin/sessions/{sessionId}", tag = "admin",
    params(("sessionId" = String, Path, description = "The tab's session id")),
    responses(
        (status = 204, description = "Its locks are released (`kicked`), it is told, and its channel closed"),
        (status = 403, description = "Only a site admin can do this"),
    ))]
pub async fn kick(
    state: web::Data<AppState>,
    actor: Actor,
    session: web::Path<String>,
) -> AppResult<HttpResponse> {
    require_admin(&actor)?;
    let session_id = session.into_inner();
    let reason = format!("{} closed this tab's session.", actor.user.name);
    let presence_ttl = state.realtime.timing.presence_ttl();
    let policy = state.policy;
    state
        .db
        .write_retrying(actor.session_id.clone(), move |tx| {
            // Rows in the row-lock order of `crate::locks`: its locks, then
            // every place in line this touches.
            Lock::lock_rows_of_sessions(tx.conn, std::slice::from_ref(&session_id))?;
            let locks = Lock::of_session(tx.conn, &session_id)?;
            let places = Waiter::of_session(tx.conn, &session_id)?;
            line::lock_places_for_leaving(tx, &places, &locks)?;
            let seen_since = clock::before(tx.now, presence_ttl);
            let connected = Presence::live_of_session(tx.conn, &session_id, None, seen_since)?;
            let admin = actor.user.to_ref();
            // Out of its lines first, so that none of its locks goes back to it.
            let waited = line::leave_session(tx, &session_id, WaiterEnd::Kicked)?;
            if locks.is_empty() && connected == 0 && waited == 0 {
                return Err(AppError::not_found(format!(
                    "No open tab, lock or place in line has session id {session_id}."
                )));
            }
            // Read again: a grant to this tab may have committed meanwhile.
            for held in &Lock::of_session(tx.conn, &session_id)? {
                end(
                    tx,
                    held,
                    LockAction::Kicked,
                    Some(&admin),
                    Line::HandOff(&policy),
                )?;
            }
            tx.publish(Outgoing::Kick {
                session_id: session_id.clone(),
                reason: reason.clone(),
            });
            Ok(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
