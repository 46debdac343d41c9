//! Cases: list, create, show (with everything in it), update, delete.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::WriteHeaders;
use super::{case_by_slug, lockable_response, params};
use crate::auth::access::authorize;
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::engine::{lock_snapshot, Preconditions};
use crate::locks::render::{lock_views, waiter_views};
use crate::models::case::CaseChanges;
use crate::models::{Case, CaseMaker, Membership, Role, StoredRecord};
use crate::realtime::presence::online_users;
use crate::state::AppState;
use crate::views::{record_tree, CaseDetailView, CaseView};

/// `GET /cases`: the cases the caller is a member of.
#[utoipa::path(get, operation_id = "listCases", path = "/cases", tag = "cases",
    responses((status = 200, description = "The cases you are a member of, by title", body = Vec<CaseView>)))]
pub async fn index(state: web::Data<AppState>, actor: Actor) -> AppResult<HttpResponse> {
    let user_id = actor.user.id;
    let cases = state
        .db
        .read(move |conn| Case::of_member(conn, user_id).map_err(AppError::from))
        .await?;
    Ok(HttpResponse::Ok().json(cases.iter().map(CaseView::from).collect::<Vec<_>>()))
}

#[derive(Deserialize, ToSchema)]
pub struct NewCaseBody {
    #[serde(deserialize_with = "params::object")]
    case: NewCaseFields,
}

#[derive(Deserialize, ToSchema)]
pub struct NewCaseFields {
    /// The case's address: lowercase letters, digits and dashes.
    #[schema(
        required = true,
        nullable = false,
        max_length = 100,
        pattern = "^[a-z0-9][a-z0-9-]*$"
    )]
    slug: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    title: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct CaseUpdateBody {
    #[serde(deserialize_with = "params::object")]
    case: CaseUpdateFields,
}

/// A case's slug cannot change (it is its address).
#[derive(Deserialize, ToSchema)]
pub struct CaseUpdateFields {
    #[schema(min_length = 1, max_length = 200, pattern = r"[^ \t\n\r]")]
    title: Option<String>,
}

/// `POST /cases`: 201; the creator becomes its manager.
#[utoipa::path(post, operation_id = "createCase", path = "/cases", tag = "cases",
    request_body = NewCaseBody,
    responses(
        (status = 201, description = "Created; you are its manager", body = CaseView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only site admins may create cases on this server (`BATON_USER_CASES=false`)"),
        (status = 409, description = "The slug is taken"),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    actor: Actor,
    body: web::Json<NewCaseBody>,
) -> AppResult<HttpResponse> {
    if !state.settings.user_cases && !actor.user.admin {
        return Err(AppError::forbidden(
            "Only a site admin can create cases on this server (BATON_USER_CASES=false); ask one, or have your team's backend make the case.",
        ));
    }
    let fields = body.into_inner().case;
    let slug = params::slug("case.slug", fields.slug)?;
    let title = params::required_text("case.title", fields.title, params::MAX_TITLE)?;
    let user_id = actor.user.id;
    let case = state
        .db
        .write(actor.editor(), move |tx| {
            if Case::find_by_slug(tx.conn, &slug)?.is_some() {
                return Err(AppError::Conflict(format!(
                    "case.slug '{slug}' is already taken; pick another."
                )));
            }
            let case = Case::create(tx.conn, &slug, &title, CaseMaker::Person, tx.now)?;
            Membership::create(tx.conn, case.id, user_id, Role::Manager, tx.now)?;
            Ok(case)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &case))
}

/// `GET /cases/:slug`: the case with its records as a tree (each type
/// under the case by its plural, children under their parent), active
/// locks, waiters, online users and the caller's role.
#[utoipa::path(get, operation_id = "showCase", path = "/cases/{slug}", tag = "cases",
    params(("slug" = String, Path, description = "The case's slug")),
    responses(
        (status = 200, description = "The case with its records as a tree, active locks, waiters, online users and your role", body = CaseDetailView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "You are not a member of the case"),
    ))]
pub async fn show(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
) -> AppResult<HttpResponse> {
    let policy = *state.engine.policy();
    let presence_ttl = state.realtime.timing.presence_ttl();
    let detail = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            let rank = authorize(conn, &actor.user, &case, Role::Reader)?;
            let records = StoredRecord::of_case(conn, case.id)?;
            let (locks, waiters) = lock_snapshot(conn, case.id, &policy)?;
            Ok::<_, AppError>(CaseDetailView {
                case: CaseView::from(&case),
                records: record_tree(crate::schema::in_force(), &records, None),
                active_locks: lock_views(&locks),
                waiters: waiter_views(&waiters),
                online_users: online_users(conn, case.id, presence_ttl)?,
                role: rank.to_string(),
            })
        })
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((
            actix_web::http::header::ETAG,
            format!("\"{}\"", detail.case.version),
        ))
        .json(detail))
}

/// `PATCH /cases/:slug` (managers, guarded).
#[utoipa::path(patch, operation_id = "updateCase", path = "/cases/{slug}", tag = "cases",
    params(("slug" = String, Path, description = "The case's slug"), WriteHeaders),
    request_body = CaseUpdateBody,
    responses(
        (status = 200, description = "Saved", body = CaseView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 412, description = "`stale_version` or `lock_lost` (with `current`)"),
        (status = 423, description = "`locked`: someone else holds the case's lock"),
    ))]
pub async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    slug: web::Path<String>,
    body: web::Json<CaseUpdateBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().case;
    let changes = CaseChanges {
        title: params::optional_text("case.title", fields.title, params::MAX_TITLE)?,
    };
    let case = state
        .engine
        .update_case(caller, preconditions, slug.into_inner(), changes)
        .await?;
    Ok(lockable_response(StatusCode::OK, &case))
}

/// `DELETE /cases/:slug` (managers, guarded): refused while someone else
/// holds a lock anywhere in the case.
#[utoipa::path(delete, operation_id = "deleteCase", path = "/cases/{slug}", tag = "cases",
    params(("slug" = String, Path, description = "The case's slug"), WriteHeaders),
    responses(
        (status = 204, description = "Deleted, with everything in it"),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 412, description = "`stale_version` or `lock_lost` (with `current`)"),
        (status = 423, description = "`locked`: someone else holds a lock in the case"),
    ))]
pub async fn destroy(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    slug: web::Path<String>,
) -> AppResult<HttpResponse> {
    state
        .engine
        .destroy_case(caller, preconditions, slug.into_inner())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
