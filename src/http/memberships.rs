//! Who belongs to a case, with which role (managers only).

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::{case_by_slug, case_of};
use crate::auth::access::authorize;
use crate::auth::Actor;
use crate::error::{AppError, AppResult};
use crate::models::{Membership, Role, User};
use crate::state::AppState;
use crate::views::MembershipView;

/// `GET /cases/:slug/memberships`.
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

#[derive(Deserialize)]
pub struct MembershipBody {
    membership: MembershipFields,
}

#[derive(Deserialize)]
pub struct MembershipFields {
    email: Option<String>,
    role: Option<String>,
}

/// `POST /cases/:slug/memberships {membership: {email, role}}`: 201 for a new
/// member, 200 when an existing member's role changes.
pub async fn create(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<MembershipBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().membership;
    let email = fields
        .email
        .filter(|e| !e.trim().is_empty())
        .ok_or_else(|| AppError::invalid("membership.email is required."))?;
    let role = fields
        .role
        .as_deref()
        .and_then(Role::parse)
        .ok_or_else(|| {
            AppError::invalid("membership.role must be one of reader, editor, manager.")
        })?;
    let (created, membership, user) = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            let case = case_by_slug(tx.conn, &slug)?;
            authorize(tx.conn, &actor.user, &case, Role::Manager)?;
            let user = User::find_by_email(tx.conn, &email)?.ok_or_else(|| {
                AppError::invalid(format!(
                    "No user has the email {email}; a site admin can create one with POST /users."
                ))
            })?;
            match Membership::find_for(tx.conn, case.id, user.id)? {
                Some(existing) => {
                    if existing.role() == Role::Manager && role != Role::Manager {
                        ensure_another_manager(tx.conn, case.id)?;
                    }
                    Ok::<_, AppError>((false, existing.set_role(tx.conn, role, tx.now)?, user))
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
    Ok(response.json(MembershipView::new(&membership, &user)))
}

/// `DELETE /memberships/:id`: 204.
pub async fn destroy(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db
        .write(actor.session_id.clone(), move |tx| {
            let membership = Membership::find(tx.conn, id)?
                .ok_or_else(|| AppError::not_found(format!("Membership {id} does not exist.")))?;
            let case = case_of(tx.conn, membership.case_id)?;
            authorize(tx.conn, &actor.user, &case, Role::Manager)?;
            if membership.role() == Role::Manager {
                ensure_another_manager(tx.conn, case.id)?;
            }
            membership.delete(tx.conn)?;
            Ok::<_, AppError>(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

fn ensure_another_manager(conn: &mut crate::db::DbConn, case_id: i64) -> AppResult<()> {
    if Membership::count_managers(conn, case_id)? <= 1 {
        return Err(AppError::invalid(
            "A case needs at least one manager; make someone else a manager first.",
        ));
    }
    Ok(())
}
