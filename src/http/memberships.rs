//! Who belongs to a case, with which role (managers only).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::{case_by_slug, case_of, params};
use crate::accounts;
use crate::auth::access::authorize;
use crate::auth::Actor;
use crate::error::{AppError, AppResult};
use crate::models::{CaseId, Membership, MembershipId, Role, User};
use crate::state::AppState;
use crate::views::{MembershipView, RoleView};

/// `GET /cases/:slug/memberships`.
#[utoipa::path(get, operation_id = "listMemberships", path = "/cases/{slug}/memberships", tag = "cases",
    params(("slug" = String, Path, description = "The case's slug")),
    responses(
        (status = 200, description = "The case's members, by name", body = Vec<MembershipView>),
        (status = 403, description = "Only a manager of the case can do this"),
    ))]
pub async fn index(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
) -> AppResult<HttpResponse> {
    let members = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &actor.user, &case, Role::Manager)?;
            Ok::<_, AppError>(Membership::of_case(conn, case.id)?)
        })
        .await?;
    Ok(HttpResponse::Ok().json(
        members
            .iter()
            .map(|(m, u)| MembershipView::new(m, u))
            .collect::<Vec<_>>(),
    ))
}

#[derive(Deserialize, ToSchema)]
pub struct MembershipBody {
    #[serde(deserialize_with = "super::params::object")]
    membership: MembershipFields,
}

#[derive(Deserialize, ToSchema)]
pub struct MembershipFields {
    /// The email of an existing user.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 254,
        pattern = r"[^ \t\n\r]"
    )]
    email: Option<String>,
    #[schema(required = true, nullable = false, value_type = Option<RoleView>)]
    role: Option<String>,
}

/// `POST /cases/:slug/memberships {membership: {email, role}}`: 201 for a new
/// member, 200 when an existing member's role changes. The user in the
/// answer is the public one with the email sent: adding someone tells a
/// manager nothing more of them (not whether they are a site admin).
#[utoipa::path(post, operation_id = "addMembership", path = "/cases/{slug}/memberships", tag = "cases",
    params(("slug" = String, Path, description = "The case's slug")),
    request_body = MembershipBody,
    responses(
        (status = 201, description = "Added", body = MembershipView),
        (status = 200, description = "Was a member already: role changed", body = MembershipView),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 404, description = "No user has this email, or no case this slug"),
        (status = 409, description = "It would leave the case without a manager"),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<MembershipBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().membership;
    let email = params::required_text("membership.email", fields.email, 254)?;
    let role = fields
        .role
        .as_deref()
        .and_then(Role::parse)
        .ok_or_else(|| {
            AppError::invalid("membership.role must be one of reader, editor, manager.")
        })?;
    let policy = state.policy;
    let (created, membership, user) = state
        .db
        .write(actor.editor(), move |tx| {
            let case = case_by_slug(tx.conn, &slug)?;
            authorize(tx.conn, &actor.user, &case, Role::Manager)?;
            let user = User::find_by_email(tx.conn, &email)?.ok_or_else(|| {
                AppError::not_found(format!(
                    "No user has the email {email}; a site admin can create one with POST /users."
                ))
            })?;
            match Membership::find_for(tx.conn, case.id, user.id)? {
                Some(existing) => {
                    if existing.role() == Role::Manager && role != Role::Manager {
                        ensure_another_manager(tx.conn, case.id)?;
                    }
                    let changed = accounts::set_role(tx, existing, role, &policy)?;
                    Ok::<_, AppError>((false, changed, user))
                }
                None => Ok((
                    true,
                    Membership::create(tx.conn, case.id, user.id, role, tx.now)?,
                    user,
                )),
            }
        })
        .await?;
    let mut response = if created {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(response.json(MembershipView::added(&membership, &user)))
}

/// `DELETE /memberships/:id`: 204. The user's locks and places in line in
/// the case end, and their tabs on it are closed (`access_removed`).
#[utoipa::path(delete, operation_id = "removeMembership", path = "/memberships/{id}", tag = "cases",
    params(("id" = i64, Path, description = "The membership's id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 409, description = "It would leave the case without a manager"),
    ))]
pub async fn destroy(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<MembershipId>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    state
        .db
        .write_retrying(actor.editor(), move |tx| {
            let membership = Membership::find(tx.conn, id)?
                .ok_or_else(|| AppError::not_found(format!("Membership {id} does not exist.")))?;
            let case = case_of(tx.conn, membership.case_id)?;
            authorize(tx.conn, &actor.user, &case, Role::Manager)?;
            if membership.role() == Role::Manager {
                ensure_another_manager(tx.conn, case.id)?;
            }
            accounts::remove_membership(tx, membership, &policy)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

fn ensure_another_manager(conn: &mut crate::db::DbConn, case_id: CaseId) -> AppResult<()> {
    if Membership::count_managers(conn, case_id)? <= 1 {
        return Err(AppError::Conflict(
            "A case needs at least one manager; make someone else a manager first.".into(),
        ));
    }
    Ok(())
}
