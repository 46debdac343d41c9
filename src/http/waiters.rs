//! Waiting-line routes: a waiting tab renews its place or leaves the line.
//! Joining is `POST /locks` with `wait: true` (`super::locks::create`).

use actix_web::{web, HttpResponse};

use crate::auth::Actor;
use crate::error::AppResult;
use crate::locks::render::waiter_view;
use crate::models::WaiterId;
use crate::state::AppState;
use crate::views::WaiterView;

/// `POST /waiters/:id/refresh`: its tab renews its place's lease (a tab
/// with an open edits channel needs not: its pongs do).
#[utoipa::path(post, operation_id = "refreshWaiter", path = "/waiters/{id}/refresh", tag = "locks",
    params(("id" = i64, Path, description = "The waiter's id")),
    responses(
        (status = 200, description = "Its lease renewed, with its place in line now", body = WaiterView),
        (status = 403, description = "Only the waiting tab can refresh it"),
        (status = 404, description = "It is no longer in line (granted, left or expired)"),
    ))]
pub async fn refresh(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<WaiterId>,
) -> AppResult<HttpResponse> {
    let queued = state.engine.refresh_waiter(actor, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(waiter_view(&queued)))
}

/// `DELETE /waiters/:id`: its tab (or its user) leaves the line.
#[utoipa::path(delete, operation_id = "leaveLine", path = "/waiters/{id}", tag = "locks",
    params(("id" = i64, Path, description = "The waiter's id")),
    responses(
        (status = 204, description = "Out of the line; everyone after it moves up"),
        (status = 403, description = "It is someone else's place in line"),
        (status = 404, description = "It is no longer in line (granted, left or expired)"),
    ))]
pub async fn leave(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<WaiterId>,
) -> AppResult<HttpResponse> {
    state.engine.leave_line(actor, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
