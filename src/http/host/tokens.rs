//! `POST /auth/tokens`: your sign-in mints baton tokens for its users, and
//! sets their roles in the cases it names.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::key_first;
use crate::accounts::{self, HostCase, HostUser};
use crate::auth::api_keys::KeyHolder;
use crate::auth::tokens;
use crate::clock::{self, utc};
use crate::error::{AppError, AppResult};
use crate::http::params;
use crate::models::Role;
use crate::state::AppState;
use crate::views::{RoleView, UserView};

/// A key that is present, possibly `null`: `Some(None)` is an explicit null.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[derive(Deserialize, ToSchema)]
pub struct TokenRequest {
    #[schema(required = true, nullable = false, value_type = Option<HostUserFields>)]
    user: Option<HostUserFields>,
    /// The cases to set the user's role in (may be empty); cases not named
    /// are left alone, and a case named more than once takes its last entry.
    #[schema(required = true, nullable = false, value_type = Option<Vec<HostCaseFields>>)]
    cases: Option<Vec<HostCaseFields>>,
    /// How long the token lasts, in whole seconds, minutes or hours (`"90s"`,
    /// `"30m"`, `"2h"`), at most 12h: by default, and at most, the server's
    /// `BATON_TOKEN_TTL` (12h unless it is set lower).
    #[schema(
        example = "1h",
        pattern = r"^(([1-9]|1[0-2])h|([1-9][0-9]?|[1-6][0-9]{2}|7[01][0-9]|720)m|([1-9][0-9]{0,3}|[1-3][0-9]{4}|4[0-2][0-9]{3}|43[01][0-9]{2}|43200)s)$"
    )]
    ttl: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostUserFields {
    /// Your backend's id for the user: 1–200 characters, not all blank.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    external_id: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    name: Option<String>,
    /// Updated when given; another user's email is 409.
    #[schema(
        max_length = 254,
        pattern = r"^[^@ \t\n\r]+@[^@ \t\n\r]+$",
        example = "dana@example.com"
    )]
    email: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct HostCaseFields {
    #[schema(
        required = true,
        nullable = false,
        max_length = 100,
        pattern = "^[a-z0-9][a-z0-9-]*$"
    )]
    slug: Option<String>,
    /// The user's role in the case; `null` removes their membership (their
    /// locks and places in line there end, their tabs on it close).
    #[serde(default, deserialize_with = "present")]
    #[schema(required = true, nullable = true, value_type = Option<RoleView>)]
    role: Option<Option<RoleView>>,
    /// A created case's title (its slug if left out); ignored for a case
    /// that exists.
    #[schema(min_length = 1, max_length = 200, pattern = r"[^ \t\n\r]")]
    title: Option<String>,
}

/// A token minted for a team's user.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MintedToken)]
pub struct MintedTokenView {
    /// An ordinary baton token for the user: REST and the edits channel.
    token: String,
    user: UserView,
    expires_at: DateTime<Utc>,
}

/// `POST /auth/tokens` (API key): creates or updates the user your backend
/// knows as `externalId`, sets their role in each named case (creating a
/// case that is absent), and returns a token for them.
#[utoipa::path(post, operation_id = "mintToken", path = "/auth/tokens", tag = "host",
    request_body = TokenRequest,
    security(("apiKey" = [])),
    responses(
        (status = 201, description = "A token for the user (earlier ones stay valid)", body = MintedTokenView),
        (status = 401, description = "No API key, a user's token, or an unknown or revoked key"),
        (status = 409, description = "`conflict`: another user has this email, or the user was removed from baton"),
        (status = 422, description = "A field is missing or invalid, or `ttl` is longer than the server allows (`BATON_TOKEN_TTL` set below 12h)"),
    ))]
pub async fn mint_token(
    state: web::Data<AppState>,
    key: KeyHolder,
    body: Result<web::Json<TokenRequest>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let max_ttl = state.settings.token_ttl;
    let request = body.and_then(|body| {
        let TokenRequest { user, cases, ttl } = body.into_inner();
        Ok((
            host_user(user)?,
            host_cases(cases)?,
            token_ttl(ttl, max_ttl)?,
        ))
    });
    let (user, cases, ttl) = key_first(&state, &key, request).await?;
    let (jwt, policy) = (state.jwt.clone(), state.policy);
    let (user, token, expires_at) = state
        .db
        .write_retrying(None, move |tx| {
            key.check(tx.conn, tx.now)?;
            let user = accounts::provision(tx, &user, &cases, &policy)?;
            let token = tokens::issue_lasting(tx.conn, &jwt, user.id, tx.now, ttl)?;
            Ok::<_, AppError>((user, token, clock::after(tx.now, ttl)))
        })
        .await?;
    Ok(HttpResponse::Created().json(MintedTokenView {
        token,
        user: UserView::full(&user),
        expires_at: utc(expires_at),
    }))
}

fn host_user(fields: Option<HostUserFields>) -> AppResult<HostUser> {
    let fields = fields.ok_or_else(|| {
        AppError::invalid("user is required: {\"externalId\": …, \"name\": …, \"email\"?: …}.")
    })?;
    let external_id = params::required_text("user.externalId", fields.external_id, 200)?;
    let name = params::required_text("user.name", fields.name, params::MAX_TITLE)?;
    let email = fields
        .email
        .map(|email| params::email(Some(email)))
        .transpose()?;
    Ok(HostUser {
        external_id,
        name,
        email,
    })
}

fn host_cases(cases: Option<Vec<HostCaseFields>>) -> AppResult<Vec<HostCase>> {
    let cases = cases.ok_or_else(|| {
        AppError::invalid("cases is required: [{\"slug\": …, \"role\": …}, …], or [] for none.")
    })?;
    let mut out: Vec<HostCase> = Vec::with_capacity(cases.len());
    for (i, case) in cases.into_iter().enumerate() {
        let slug = params::slug(&format!("cases[{i}].slug"), case.slug)?;
        let role = case.role.ok_or_else(|| {
            AppError::invalid(format!(
                "cases[{i}].role is required: reader, editor, manager, or null to remove the membership."
            ))
        })?;
        let title =
            params::optional_text(&format!("cases[{i}].title"), case.title, params::MAX_TITLE)?;
        // A case named again takes its last entry, as a JSON object's
        // repeated key would: no schema can say "each slug once".
        out.retain(|c| c.slug != slug);
        out.push(HostCase {
            slug,
            role: role.map(Role::from),
            title,
        });
    }
    Ok(out)
}

/// `ttl` as a duration: at most, and by default, `max`.
fn token_ttl(ttl: Option<String>, max: Duration) -> AppResult<Duration> {
    let Some(text) = ttl else {
        return Ok(max);
    };
    let ttl = humantime::parse_duration(&text).map_err(|_| {
        AppError::invalid(format!(
            "ttl must be a duration like \"90s\" or \"2h\"; got \"{text}\"."
        ))
    })?;
    if ttl.is_zero() || ttl > max {
        return Err(AppError::invalid(format!(
            "ttl must be more than 0 and at most {} (the server's BATON_TOKEN_TTL); got \"{text}\".",
            humantime::format_duration(max)
        )));
    }
    Ok(ttl)
}
