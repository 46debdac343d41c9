//! Sign-in and users.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::params;
use crate::auth::{password, Actor, AuthError};
use crate::error::{AppError, AppResult};
use crate::models::User;
use crate::state::AppState;
use crate::views::{LoginView, UserView};

#[derive(Deserialize, ToSchema)]
pub struct LoginBody {
    #[schema(
        required = true,
        nullable = false,
        max_length = 254,
        example = "alice@example.com"
    )]
    email: Option<String>,
    #[schema(required = true, nullable = false, max_length = 1024, example = "demo")]
    password: Option<String>,
}

/// `POST /auth/login {email, password}` → `{token, user}`.
#[utoipa::path(post, operation_id = "login", path = "/auth/login", tag = "auth", security(()),
    request_body = LoginBody,
    responses(
        (status = 200, description = "Signed in", body = LoginView),
        (status = 401, description = "Wrong email or password"),
    ))]
pub async fn login(
    state: web::Data<AppState>,
    body: web::Json<LoginBody>,
) -> AppResult<HttpResponse> {
    let LoginBody { email, password } = body.into_inner();
    let (Some(email), Some(pw)) = (email, password) else {
        return Err(AppError::invalid("Send {\"email\": …, \"password\": …}."));
    };
    let user = state
        .db
        .read(move |conn| User::find_by_email(conn, &email).map_err(AppError::from))
        .await?
        .ok_or(AuthError::BadCredentials)?;
    // argon2 is slow on purpose: verify on the blocking pool, without holding
    // a database connection.
    let hash = user.password_hash.clone();
    let verified = web::block(move || password::verify(&pw, &hash))
        .await
        .map_err(|_| AppError::Unavailable("The server is shutting down.".into()))?;
    if !verified {
        return Err(AuthError::BadCredentials.into());
    }
    let token = state.jwt.issue(user.id)?;
    Ok(HttpResponse::Ok().json(LoginView {
        token,
        user: UserView::full(&user),
    }))
}

/// People to sign in as, on a server started with `--demo`.
#[derive(Serialize, ToSchema)]
pub struct DemoPeople {
    /// Each signs in with the password `demo`.
    users: Vec<DemoPerson>,
}

#[derive(Serialize, ToSchema)]
pub struct DemoPerson {
    email: &'static str,
    name: &'static str,
}

/// `GET /auth/demo`: who to sign in as, when the server runs with `--demo`
/// (404 otherwise). The web app's sign-in page lists them.
#[utoipa::path(get, operation_id = "demoPeople", path = "/auth/demo", tag = "auth", security(()),
    responses(
        (status = 200, description = "The demo people (password `demo`)", body = DemoPeople),
        (status = 404, description = "The server does not run with `--demo`"),
    ))]
pub async fn demo(state: web::Data<AppState>) -> AppResult<HttpResponse> {
    if !state.settings.demo {
        return Err(AppError::not_found(
            "This server does not run with --demo; ask an admin for an account.",
        ));
    }
    let users = crate::demo::PEOPLE
        .iter()
        .map(|(email, name, _, _)| DemoPerson { email, name })
        .collect();
    Ok(HttpResponse::Ok().json(DemoPeople { users }))
}

/// `GET /me`.
#[utoipa::path(get, operation_id = "me", path = "/me", tag = "auth",
    responses((status = 200, description = "You", body = UserView)))]
pub async fn me(actor: Actor) -> HttpResponse {
    HttpResponse::Ok().json(UserView::full(&actor.user))
}

#[derive(Deserialize, ToSchema)]
pub struct NewUserBody {
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
    let hash = web::block(move || password::hash(&pw))
        .await
        .map_err(|_| AppError::Unavailable("The server is shutting down.".into()))?
        .map_err(AppError::Unavailable)?;
    let admin = fields.admin;
    let user = state
        .db
        .write(actor.session_id.clone(), move |tx| {
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
