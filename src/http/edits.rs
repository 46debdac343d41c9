//! `GET /cases/:slug/edits`: authenticates, checks membership, then upgrades
//! to the tab's WebSocket (see `realtime::channel`).

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::case_by_slug;
use super::extract::{bearer, user_agent, valid_session_id};
use crate::auth::access::authorize;
use crate::auth::Caller;
use crate::error::{AppError, AppResult};
use crate::models::Role;
use crate::realtime::channel;
use crate::state::AppState;

/// Browsers cannot set headers on WebSockets, hence the query.
#[derive(Deserialize)]
pub struct EditsQuery {
    token: Option<String>,
    #[serde(rename = "sessionId", alias = "session_id")]
    session_id: Option<String>,
}

pub async fn edits(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
    slug: web::Path<String>,
    query: web::Query<EditsQuery>,
) -> AppResult<HttpResponse> {
    let EditsQuery { token, session_id } = query.into_inner();
    let session_id = match session_id {
        Some(s) => valid_session_id(&s)?,
        // A client that made no id gets one; the welcome tells it which.
        None => uuid::Uuid::new_v4().to_string(),
    };
    let token = token.as_deref().or_else(|| bearer(req.headers()));
    let caller = Caller::verify(
        &state.jwt,
        token,
        Some(session_id),
        user_agent(req.headers()),
    )?;
    let actor = state.db.read(move |conn| caller.load(conn)).await?;
    let (user, slug) = (actor.user.clone(), slug.into_inner());
    let case = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &user, &case, Role::Reader)?;
            Ok::<_, AppError>(case)
        })
        .await?;
    let (response, session, stream) = actix_ws::handle(&req, body).map_err(|_| {
        AppError::BadRequest(
            "This is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)."
                .into(),
        )
    })?;
    actix_web::rt::spawn(channel::serve(
        state.realtime.clone(),
        actor,
        case,
        session,
        stream,
    ));
    Ok(response)
}
