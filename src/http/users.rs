//! Users: created by a site admin, changed by themselves or an admin,
//! removed (deactivated) by an admin.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::params;
use crate::accounts;
use crate::auth::Actor;
use crate::error::{AppError, AppResult};
use crate::models::{User, UserChanges, UserId};
use crate::state::AppState;
use crate::views::UserView;

#[derive(Deserialize, ToSchema)]
pub struct NewUserBody {
    #[serde(deserialize_with = "super::params::object")]
    user: NewUserFields,
}

#[derive(Deserialize, ToSchema)]
pub struct NewUserFields {
    #[schema(
        required = true,
        nullable = false,
        max_length = 254,
        pattern = r"^[^@ \t\n\r]+@[^@ \t\n\r]+$",
        example = "dana@example.com"
    )]
    email: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    name: Option<String>,
    #[schema(required = true, nullable = false, min_length = 8, max_length = 1024)]
    password: Option<String>,
    /// A site admin acts as a manager on every case.
    #[serde(default)]
    admin: bool,
}

/// `POST /users` (site admins): 201 with the new user.
#[utoipa::path(post, operation_id = "createUser", path = "/users", tag = "auth",
    request_body = NewUserBody,
    responses(
        (status = 201, description = "Created", body = UserView),
        (status = 403, description = "Only a site admin can create users"),
        (status = 409, description = "The email is taken"),
    ))]
pub async fn create_user(
    state: web::Data<AppState>,
    actor: Actor,
    body: web::Json<NewUserBody>,
) -> AppResult<HttpResponse> {
    if !actor.user.admin {
        return Err(AppError::forbidden("Only a site admin can create users."));
    }
    let fields = body.into_inner().user;
    let email = params::email(fields.email)?;
    let name = params::required_text("user.name", fields.name, params::MAX_TITLE)?;
    let pw = params::password(fields.password)?;
    let hash = state.passwords.hash(pw).await?;
    let admin = fields.admin;
    let user = state
        .db
        .write(actor.editor(), move |tx| {
            if User::find_by_email(tx.conn, &email)?.is_some() {
                return Err(AppError::Conflict(format!(
                    "user.email {email} is already taken."
                )));
            }
            Ok(User::create(tx.conn, &email, &name, &hash, admin, tx.now)?)
        })
        .await?;
    Ok(HttpResponse::Created().json(UserView::full(&user)))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserUpdateBody {
    #[serde(deserialize_with = "super::params::object")]
    user: UserUpdateFields,
    /// Your current password; required to change your own password.
    #[schema(nullable = false, max_length = 1024)]
    current_password: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct UserUpdateFields {
    #[schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    name: Option<String>,
    /// A new password: every other token of the user ends at once.
    #[schema(nullable = false, min_length = 8, max_length = 1024)]
    password: Option<String>,
    /// Only a site admin may change this.
    #[schema(nullable = false)]
    admin: Option<bool>,
}

/// `PATCH /users/:id`: the user themselves (a new password needs
/// `currentPassword`) or a site admin (`admin` only by a site admin).
#[utoipa::path(patch, operation_id = "updateUser", path = "/users/{id}", tag = "auth",
    params(("id" = i64, Path, description = "The user's id")),
    request_body = UserUpdateBody,
    responses(
        (status = 200, description = "Changed; a new password ended every other token of the user", body = UserView),
        (status = 403, description = "Not your account, `admin` without being a site admin, or a missing or wrong `currentPassword` when changing your own password"),
        (status = 409, description = "A site admin cannot give up their own admin rights"),
    ))]
pub async fn update_user(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<UserId>,
    body: web::Json<UserUpdateBody>,
) -> AppResult<HttpResponse> {
    let user_id = id.into_inner();
    let UserUpdateBody {
        user: fields,
        current_password,
    } = body.into_inner();
    let own = actor.user.id == user_id;
    if !own && !actor.user.admin {
        return Err(AppError::forbidden(
            "You can only change your own account; a site admin can change others.",
        ));
    }
    if fields.admin.is_some() && !actor.user.admin {
        return Err(AppError::forbidden(
            "Only a site admin can make someone an admin (or stop them being one).",
        ));
    }
    if own && fields.admin == Some(false) && actor.user.admin {
        return Err(AppError::Conflict(
            "You cannot give up your own site-admin rights; ask another site admin.".into(),
        ));
    }
    let name = match fields.name {
        Some(name) => Some(params::required_text(
            "user.name",
            Some(name),
            params::MAX_TITLE,
        )?),
        None => None,
    };
    let password_hash = match fields.password {
        Some(new) => {
            let new = params::password(Some(new))?;
            if own {
                // Like a wrong one, a missing current password proves nothing:
                // 403, which also keeps the body valid as documented.
                let current = current_password.ok_or_else(|| {
                    AppError::forbidden("To change your password, send currentPassword too.")
                })?;
                let hash = actor.user.password_hash.clone();
                if !state.passwords.verify(current, hash).await? {
                    return Err(AppError::forbidden(
                        "currentPassword is not your current password.",
                    ));
                }
            }
            Some(state.passwords.hash(new).await?)
        }
        None => None,
    };
    let changes = UserChanges {
        name,
        password_hash,
        admin: fields.admin,
    };
    // A user changing their own password stays signed in on this token.
    let keep = own.then_some(actor.token_id);
    let policy = state.policy;
    let user = state
        .db
        .write(actor.editor(), move |tx| {
            accounts::update_user(tx, user_id, changes, keep, &policy)
        })
        .await?;
    Ok(HttpResponse::Ok().json(UserView::full(&user)))
}

/// `DELETE /users/:id` (site admins): the user is deactivated. Their tokens
/// end at once, their locks are released (`kicked`), their open tabs are
/// closed; their audit history stays.
#[utoipa::path(delete, operation_id = "removeUser", path = "/users/{id}", tag = "auth",
    params(("id" = i64, Path, description = "The user's id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 403, description = "Only a site admin can remove users"),
        (status = 409, description = "You cannot remove yourself"),
    ))]
pub async fn remove_user(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<UserId>,
) -> AppResult<HttpResponse> {
    if !actor.user.admin {
        return Err(AppError::forbidden("Only a site admin can remove users."));
    }
    let user_id = id.into_inner();
    if user_id == actor.user.id {
        return Err(AppError::Conflict(
            "You cannot remove your own account; ask another site admin.".into(),
        ));
    }
    let admin = actor.user.to_ref();
    let policy = state.policy;
    state
        .db
        .write_retrying(actor.editor(), move |tx| {
            accounts::remove_user(tx, user_id, Some(&admin), &policy)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
