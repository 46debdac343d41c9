//! Signing in and out, and who you are.

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::client_address;
use crate::auth::throttle::RetryAfter;
use crate::auth::{tokens, Actor, AuthError};
use crate::db::{KickReason, Outgoing, Tabs};
use crate::error::{AppError, AppResult};
use crate::models::user::normalize_email;
use crate::models::{AuthToken, User};
use crate::state::AppState;
use crate::views::{LoginView, UserView};

/// Longest email a sign-in may name (RFC 5321's path limit).
const MAX_EMAIL: usize = 254;
/// Longest password a sign-in may send.
const MAX_PASSWORD: usize = 1024;

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

/// `POST /auth/login {email, password}` → `{token, user}`. Failed attempts
/// are counted per account and per client address; past either limit the
/// answer is 429 with `Retry-After`, before any password is checked.
#[utoipa::path(post, operation_id = "login", path = "/auth/login", tag = "auth", security(()),
    request_body = LoginBody,
    responses(
        (status = 200, description = "Signed in", body = LoginView),
        (status = 401, description = "Wrong email or password"),
        (status = 422, description = "`email` or `password` is missing, or longer than its limit (254 and 1,024 characters)"),
        (status = 429, description = "Too many failed sign-ins for this account or address; see `Retry-After`",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    ))]
pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<LoginBody>,
) -> AppResult<HttpResponse> {
    let LoginBody { email, password } = body.into_inner();
    let (Some(email), Some(pw)) = (email, password) else {
        return Err(AppError::invalid("Send {\"email\": …, \"password\": …}."));
    };
    // Bounded before anything is counted or hashed: what a request without
    // a token can make baton hold or compute stays small.
    if email.chars().count() > MAX_EMAIL {
        return Err(AppError::invalid(format!(
            "email is longer than {MAX_EMAIL} characters; no account has such an email."
        )));
    }
    if pw.chars().count() > MAX_PASSWORD {
        return Err(AppError::invalid(format!(
            "password is longer than {MAX_PASSWORD} characters; no password is that long."
        )));
    }
    let account = normalize_email(&email);
    let address = client_address(&req, state.settings.client_ip_header.as_deref());
    let attempt = match state.throttle.begin(&account, address) {
        Ok(attempt) => attempt,
        Err(RetryAfter(wait)) => {
            metrics::counter!("baton_logins_total", "outcome" => "throttled").increment(1);
            return Err(AppError::RateLimited {
                message: format!(
                    "Too many failed sign-ins for this account or from this address; try again in {}.",
                    humantime::format_duration(Duration::from_secs(wait.as_secs().max(1)))
                ),
                retry_after: wait,
            });
        }
    };
    // No account has a NUL in its email (no string with one is stored):
    // wrong credentials, without asking the database, which could not hold it.
    let user = if email.contains('\0') {
        None
    } else {
        state
            .db
            .read(move |conn| User::find_by_email(conn, &email).map_err(AppError::from))
            .await?
    }
    // A user provisioned by a team's backend signs in there, never here.
    .filter(|user| user.is_active() && !user.is_external());
    // One argon2 verification either way: a sign-in for an unknown email
    // takes as long as one with a wrong password.
    let verified = match &user {
        Some(user) => {
            state
                .passwords
                .verify(pw, user.password_hash.clone())
                .await?
        }
        None => state.passwords.verify_nobody(pw).await?,
    };
    let Some(user) = user.filter(|_| verified) else {
        attempt.failed();
        metrics::counter!("baton_logins_total", "outcome" => "bad_credentials").increment(1);
        return Err(AuthError::BadCredentials.into());
    };
    attempt.succeeded();
    metrics::counter!("baton_logins_total", "outcome" => "ok").increment(1);
    let (jwt, user_id) = (state.jwt.clone(), user.id);
    let token = state
        .db
        .write(None, move |tx| {
            tokens::issue(tx.conn, &jwt, user_id, tx.now)
        })
        .await?;
    Ok(HttpResponse::Ok().json(LoginView {
        token,
        user: UserView::full(&user),
    }))
}

/// `POST /auth/logout`: ends the calling token at once, on every instance,
/// and closes the tabs opened with it (`signed_out`).
#[utoipa::path(post, operation_id = "logout", path = "/auth/logout", tag = "auth",
    responses((status = 204, description = "Signed out: this token no longer works, and the edits channels opened with it are closed")))]
pub async fn logout(state: web::Data<AppState>, actor: Actor) -> AppResult<HttpResponse> {
    let token_id = actor.token_id;
    state
        .db
        .write(actor.editor(), move |tx| {
            AuthToken::revoke(tx.conn, token_id, tx.now)?;
            tx.publish(Outgoing::Close {
                tabs: Tabs::Token { token: token_id },
                reason: KickReason::SignedOut,
            });
            Ok::<_, AppError>(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
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
