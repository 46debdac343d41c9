//! `GET /cases/:slug/edits`: authenticates, checks membership, then upgrades
//! to the tab's WebSocket (see `realtime::channel`).

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use utoipa::IntoParams;

use super::case_by_slug;
use super::extract::{bearer, session_header, user_agent, valid_session_id};
use crate::auth::access::authorize;
use crate::auth::Caller;
use crate::error::{AppError, AppResult};
use crate::models::Role;
use crate::realtime::channel;
use crate::realtime::hub::TabOwner;
use crate::state::AppState;

/// Browsers cannot set headers on WebSockets, hence the query.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EditsQuery {
    /// The bearer token (browsers cannot set headers on a WebSocket).
    #[param(nullable = false)]
    token: Option<String>,
    /// The tab's id; one is made (and told in `welcome`) when left out.
    #[serde(rename = "sessionId", alias = "session_id")]
    #[param(
        rename = "sessionId",
        nullable = false,
        pattern = "^[A-Za-z0-9_-]{1,64}$"
    )]
    session_id: Option<String>,
}

/// The edits channel: a WebSocket carrying the case's changes, lock changes
/// and presence as JSON text frames (see the `ServerFrame` schema), tagged
/// with the tab that made them. The server pings every heartbeat; a tab that
/// misses two pongs is treated as gone.
#[utoipa::path(get, operation_id = "editsChannel", path = "/cases/{slug}/edits", tag = "realtime",
    params(("slug" = String, Path, description = "The case's slug"), EditsQuery),
    responses(
        (status = 101, description = "Switching to the WebSocket protocol; frames are `ServerFrame`s"),
        (status = 400, description = "A malformed `sessionId`"),
        (status = 426, description = "`upgrade_required`: a plain request, not a WebSocket upgrade; the answer carries `Upgrade: websocket`", headers(("Upgrade" = String, description = "`websocket`"))),
        (status = 403, description = "You are not a member of the case"),
        (status = 429, description = "`rate_limited`: you have `BATON_CHANNELS_PER_USER` channels open on this instance already; close one (another tab) or try again after `Retry-After` seconds", headers(("Retry-After" = u64, description = "Seconds to wait"))),
    ))]
pub async fn edits(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
    slug: web::Path<String>,
    query: web::Query<EditsQuery>,
) -> AppResult<HttpResponse> {
    // A malformed `X-Session-ID` is refused as on every route (400).
    session_header(req.headers())?;
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
        Some(session_id.clone()),
        user_agent(req.headers()),
    )?;
    let token_expires_at = caller.expires_at();
    let actor = state.db.read(move |conn| caller.clone().load(conn)).await?;
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
        AppError::UpgradeRequired(
            "This is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)."
                .into(),
        )
    })?;
    let owner = TabOwner {
        user_id: actor.user.id,
        session_id,
        case_id: case.id,
        token_id: actor.token_id,
    };
    let limit = usize::try_from(state.settings.channels_per_user).unwrap_or(usize::MAX);
    let admission = state.realtime.hub.admit(owner, limit).map_err(|_| {
        AppError::RateLimited {
            message: format!(
                "You have {limit} live channels open on this server already (BATON_CHANNELS_PER_USER); close another tab, or try again shortly."
            ),
            retry_after: state.realtime.timing.heartbeat_interval,
        }
    })?;
    actix_web::rt::spawn(channel::serve(
        state.realtime.clone(),
        actor,
        case,
        admission,
        token_expires_at,
        session,
        stream,
    ));
    Ok(response)
}
