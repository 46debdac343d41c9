//! The routes a team's own backend calls with an API key (`baton key add`),
//! and nothing else may: minting tokens for its users, the guard as a call
//! for writes to its own database, and frames about those writes.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::schema::{KnownFormat, OneOfBuilder, Schema, SchemaFormat, SchemaType};
use utoipa::openapi::{ObjectBuilder, RefOr, Type};
use utoipa::ToSchema;

use super::case_by_slug;
use super::extract::valid_session_id;
use super::locks::{LockableRef, RecordParam};
use super::params;
use crate::accounts::{self, HostCase, HostUser};
use crate::auth::access::{rank_on, require};
use crate::auth::api_keys::KeyHolder;
use crate::auth::{tokens, Actor};
use crate::clock::{self, utc};
use crate::db::Outgoing;
use crate::error::{AppError, AppResult};
use crate::locks::fast_path::{self, GuardQuestion};
use crate::locks::guard::{self, Preconditions, WriteContext};
use crate::locks::naming::Named;
use crate::models::{LockId, Role, User};
use crate::state::AppState;
use crate::views::{Change, RoleView, ServerFrame, UserView, Watchable};

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

/// `POST /guard`'s body: flat, since it is a question, not a resource.
/// Its schema is written below ([`GuardRequest::schema`]): what the record's
/// param may be depends on its type.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardRequest {
    #[serde(flatten)]
    record: LockableRef,
    user_external_id: Option<String>,
    session_id: Option<String>,
    lock_token: Option<RecordParam>,
}

/// The largest id or token a request may name: 18 digits.
const MAX_ID: i64 = 999_999_999_999_999_999;

impl utoipa::PartialSchema for GuardRequest {
    /// One object per kind of type: records baton stores (and the case
    /// itself) are named by id, records of external types by what the host
    /// calls them (`oneOf`, told apart by `lockableType`).
    fn schema() -> RefOr<Schema> {
        let names = |external: bool| -> Vec<&'static str> {
            crate::locks::lockable::registry()
                .iter()
                .filter(|kind| kind.is_external() == external)
                .map(|kind| kind.type_name)
                .collect()
        };
        let description = "`POST /guard`'s body: flat, since it is a question, not a resource.";
        let stored = guard_question_schema(
            names(false),
            id_schema("The record's id (`\"12\"` or `12`): a case, or a record baton stores.")
                .into(),
        );
        let external = names(true);
        if external.is_empty() {
            return stored.description(Some(description)).into();
        }
        let external = guard_question_schema(
            external,
            OneOfBuilder::new()
                .item(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .pattern(Some(r"^[A-Za-z0-9._:-]{1,200}$"))
                        .examples(["inv-2031"]),
                )
                .item(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                        .minimum(Some(-MAX_ID))
                        .maximum(Some(MAX_ID)),
                )
                .description(Some(
                    "What your backend calls the record (1–200 of `A-Za-z0-9._:-`; a number \
                     is taken as its decimal string).",
                ))
                .into(),
        );
        OneOfBuilder::new()
            .item(stored)
            .item(external)
            .description(Some(description))
            .into()
    }
}

impl ToSchema for GuardRequest {}

/// A record's id, or a lock's token: 1–18 digits, as a string or a number.
fn id_schema(description: &str) -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[0-9]{1,18}$"))
                .examples(["12"]),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(0))
                .maximum(Some(MAX_ID)),
        )
        .description(Some(description))
}

/// A guard question about a record of one of `types`, named by `param`.
fn guard_question_schema(types: Vec<&'static str>, param: RefOr<Schema>) -> ObjectBuilder {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "lockableType",
            string()
                .enum_values(Some(types))
                .description(Some("The record's type name.")),
        )
        .required("lockableType")
        .property("lockableParam", param)
        .required("lockableParam")
        .property(
            "case",
            string().description(Some("The slug of the case the record belongs to.")),
        )
        .required("case")
        .property(
            "userExternalId",
            string()
                .min_length(Some(1))
                .max_length(Some(200))
                .description(Some(
                    "The user writing, as your backend knows them (`POST /auth/tokens`).",
                )),
        )
        .required("userExternalId")
        .property(
            "sessionId",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                .max_length(Some(64))
                .pattern(Some("^[A-Za-z0-9_-]{1,64}$"))
                .description(Some(
                    "The tab the write comes from. Without it, a lock taken by a tab is \
                     another tab's (423).",
                )),
        )
        .property(
            "lockToken",
            id_schema(
                "The lock the tab believes it holds (its `token`): 412 `lock_lost` when it \
                 no longer does.",
            )
            .item(ObjectBuilder::new().schema_type(Type::Null)),
        )
}

/// `POST /guard` (API key): may this user write this record now? The same
/// guard as baton's own writes, in the same order: 423 when someone else
/// holds it (or a deep lock around it), then 412 `lock_lost` when
/// `lockToken` no longer holds it. 204 renews the holder's lock activity.
#[utoipa::path(post, operation_id = "guard", path = "/guard", tag = "host",
    request_body = GuardRequest,
    security(("apiKey" = [])),
    responses(
        (status = 204, description = "The user may write: nobody else holds it (the holder's lock activity was renewed)"),
        (status = 401, description = "No API key, a user's token, or an unknown or revoked key"),
        (status = 403, description = "The user is not an editor (or above) of the case"),
        (status = 404, description = "No case has this slug, or no record this type and id"),
        (status = 412, description = "`lock_lost` (with `current`: the record's live lock, or null): `lockToken` names a lock that no longer holds the record"),
        (status = 422, description = "A field is missing or invalid"),
        (status = 423, description = "`locked` (with `lock` and `lockable`): someone else holds it, or another tab of the user"),
    ))]
pub async fn guard(
    state: web::Data<AppState>,
    key: KeyHolder,
    body: Result<web::Json<GuardRequest>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let request = body.and_then(|body| Ok(guard_question(body.into_inner())?));
    let (named, case_slug, external_id, session_id, lock_token) =
        key_first(&state, &key, request).await?;
    let policy = state.policy;
    if state.settings.lock_fast_path {
        let question = GuardQuestion {
            key_hash: key.hash().to_owned(),
            kind: named.kind(),
            id: match &named {
                Named::Stored(_, id) => Some(*id),
                Named::External { .. } => None,
            },
            param: match &named {
                Named::External { param, .. } => Some(param.clone()),
                Named::Stored(..) => None,
            },
            case_slug: case_slug.clone(),
            user_external_id: external_id.clone(),
            session_id: session_id.clone(),
            lock_token,
        };
        if fast_path::guard(&state.db, question, &policy)
            .await
            .map_err(AppError::from)?
            .is_some()
        {
            return Ok(HttpResponse::NoContent().finish());
        }
    }
    state
        .db
        .write_retrying(None, move |tx| {
            key.check(tx.conn, tx.now)?;
            let case = case_by_slug(tx.conn, &case_slug)?;
            let kind = named.kind();
            let missing = |id: i64| {
                AppError::not_found(format!(
                    "{} {id} does not exist in case '{}'.",
                    kind.type_name, case.slug
                ))
            };
            // The record before the user (404 comes before 403), read
            // without locking its row: nothing is locked, and nothing
            // named, before the user's role on the case is known.
            if let Named::Stored(_, id) = &named {
                kind.find(tx.conn, *id)?
                    .filter(|t| t.case_id == case.id)
                    .ok_or_else(|| missing(*id))?;
            }
            let user = User::find_by_external_id(tx.conn, &external_id)?
                .filter(User::is_active)
                .ok_or_else(|| {
                    AppError::forbidden(format!(
                        "No user {external_id} is an editor of case '{}'; mint them a token with the role first (POST /auth/tokens).",
                        case.slug
                    ))
                })?;
            require(rank_on(tx.conn, &user, case.id)?, &case, Role::Editor)?;
            // Now the record's row, locked until the transaction ends.
            let target = match &named {
                Named::Stored(_, id) => kind
                    .find_for_update(tx.conn, *id)?
                    .filter(|t| t.case_id == case.id)
                    .ok_or_else(|| missing(*id))?,
                Named::External { param, .. } => {
                    let named = match kind.find_external(tx.conn, case.id, param)? {
                        Some(t) => kind.find_for_update(tx.conn, t.identity.id)?,
                        None => None,
                    };
                    // Never locked: no lock names it, but a deep lock on its
                    // case covers it all the same.
                    named
                        .or_else(|| kind.never_locked(case.id, param))
                        .ok_or_else(|| AppError::invalid("lockableType is not an external type."))?
                }
            };
            let actor = Actor {
                user,
                token_id: 0,
                session_id: session_id.clone(),
                user_agent: None,
            };
            let ctx = WriteContext {
                actor: &actor,
                preconditions: Preconditions {
                    if_match: None,
                    lock_token,
                },
                policy: &policy,
                tab_required: true,
            };
            guard::guard(tx, &ctx, &target)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a `POST /guard` body asks: the record, its case's slug, the user,
/// the tab and the token.
type GuardAsked = (Named, String, String, Option<String>, Option<LockId>);

fn guard_question(body: GuardRequest) -> AppResult<GuardAsked> {
    let GuardRequest {
        record,
        user_external_id,
        session_id,
        lock_token,
    } = body;
    let named = record.parse()?;
    let case_slug = record.case_slug().ok_or_else(|| {
        AppError::invalid("case is required: the slug of the case the record belongs to.")
    })?;
    let external_id = user_external_id
        .ok_or_else(|| AppError::invalid("userExternalId is required: who is writing."))?;
    let session_id = session_id
        .map(|s| valid_session_id(&s).map_err(|e| AppError::invalid(e.to_string())))
        .transpose()?;
    let lock_token = lock_token
        .map(|t| {
            t.id().map(LockId).ok_or_else(|| {
                AppError::invalid(format!(
                    "lockToken must be a lock's token, a decimal integer like \"12\"; got \"{t}\"."
                ))
            })
        })
        .transpose()?;
    Ok((named, case_slug, external_id, session_id, lock_token))
}

/// A change that happened in your backend, for the case's tabs.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostEvent {
    #[serde(rename = "type")]
    #[schema(required = true, nullable = false, value_type = Option<Change>)]
    change: Option<Change>,
    #[schema(required = true, nullable = false, value_type = Option<RelayedRecord>)]
    watchable: Option<serde_json::Map<String, serde_json::Value>>,
    /// The tab that made the change: it ignores its own frame.
    #[schema(max_length = 64, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    editor_session_id: Option<String>,
}

/// The record of an event, as the document describes it: `type`, one of the
/// external types of the schema in force, and `param`.
pub struct RelayedRecord;

impl utoipa::PartialSchema for RelayedRecord {
    fn schema() -> RefOr<Schema> {
        let external = external_types();
        let description = if external.is_empty() {
            "The record as your backend has it. This server's schema declares no type with \
             `store = \"external\"`, so no event can be right: every one is 422."
        } else {
            "The record as your backend has it: `type` (a type with `store = \"external\"`), \
             `param`, and any fields. Relayed as sent."
        };
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(external))
                    .description(Some(
                        "An external type: baton announces the records it stores itself.",
                    )),
            )
            .required("type")
            .property(
                "param",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .description(Some("The record's param, what tabs key it by.")),
            )
            .required("param")
            .description(Some(description))
            .into()
    }
}

impl ToSchema for RelayedRecord {}

/// The external types of the schema in force (`store = "external"`).
fn external_types() -> Vec<&'static str> {
    crate::schema::in_force()
        .types()
        .iter()
        .filter(|ty| ty.is_external())
        .map(|ty| ty.name.as_str())
        .collect()
}

/// `POST /cases/:slug/events` (API key): a `create`, `update` or `destroy`
/// frame for every tab of the case, on every instance, in the order baton
/// accepts them. Send it after your own commit.
#[utoipa::path(post, operation_id = "announce", path = "/cases/{slug}/events", tag = "host",
    params(("slug" = String, Path, description = "The case's slug")),
    request_body = HostEvent,
    security(("apiKey" = [])),
    responses(
        (status = 202, description = "Accepted: the frame goes to the case's tabs"),
        (status = 401, description = "No API key, a user's token, or an unknown or revoked key"),
        (status = 404, description = "No case has this slug"),
        (status = 422, description = "`type` or `watchable` is missing or invalid, or the watchable's type is not an external type (`store = \"external\"`)"),
    ))]
pub async fn announce(
    state: web::Data<AppState>,
    key: KeyHolder,
    slug: web::Path<String>,
    body: Result<web::Json<HostEvent>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let request = body.and_then(|body| Ok(host_event(body.into_inner())?));
    let (change, watchable, editor) = key_first(&state, &key, request).await?;
    let slug = slug.into_inner();
    state
        .db
        .write(None, move |tx| {
            key.check(tx.conn, tx.now)?;
            let case = case_by_slug(tx.conn, &slug)?;
            let frame = ServerFrame::relayed(change, Watchable::Relayed(watchable), editor)
                .for_case(case.id);
            tx.publish(Outgoing::Frame(frame));
            Ok::<_, AppError>(())
        })
        .await?;
    Ok(HttpResponse::Accepted().finish())
}

/// What a `POST /cases/:slug/events` body announces: the change, the
/// record, the tab.
type Announced = (
    Change,
    serde_json::Map<String, serde_json::Value>,
    Option<String>,
);

fn host_event(body: HostEvent) -> AppResult<Announced> {
    let HostEvent {
        change,
        watchable,
        editor_session_id,
    } = body;
    let change =
        change.ok_or_else(|| AppError::invalid("type is required: create, update or destroy."))?;
    let watchable = watchable.ok_or_else(|| {
        AppError::invalid("watchable is required: the record, like {\"type\": \"Invoice\", \"param\": \"inv-2031\", …}.")
    })?;
    relayable(&watchable)?;
    let editor = editor_session_id
        .map(|s| valid_session_id(&s).map_err(|e| AppError::invalid(e.to_string())))
        .transpose()?;
    Ok((change, watchable, editor))
}

/// The request's parsed body; or, once the key is known to be live, why
/// the body cannot be right. An unknown or revoked key is 401 before
/// anything about the body is said (one read, only for a refused body: a
/// good one has its key checked in the request's own statements).
async fn key_first<T>(
    state: &AppState,
    key: &KeyHolder,
    request: Result<T, actix_web::Error>,
) -> Result<T, actix_web::Error> {
    match request {
        Ok(request) => Ok(request),
        Err(refusal) => {
            let key = key.clone();
            state.db.read(move |conn| key.verify(conn)).await?;
            Err(refusal)
        }
    }
}

/// 422 unless the watchable names an external type (`store = "external"`)
/// and a param: never a type baton stores, nor one of baton's own (`Lock`,
/// `Waiter`, …), whose frames only baton sends.
fn relayable(watchable: &serde_json::Map<String, serde_json::Value>) -> AppResult<()> {
    let external = external_types();
    let which = || {
        if external.is_empty() {
            "this server's schema declares no type with store = \"external\", and baton \
             announces the records it stores itself"
                .to_owned()
        } else {
            format!(
                "use one of the external types ({}); baton announces the records it stores itself",
                external.join(", ")
            )
        }
    };
    let type_name = watchable
        .get("type")
        .and_then(|t| t.as_str())
        .ok_or_else(|| AppError::invalid(format!("watchable.type is required: {}.", which())))?;
    if !external.contains(&type_name) {
        return Err(AppError::invalid(format!(
            "watchable.type '{type_name}' is not an external type: {}.",
            which()
        )));
    }
    match watchable.get("param") {
        Some(serde_json::Value::String(p)) if !p.is_empty() => Ok(()),
        _ => Err(AppError::invalid(
            "watchable.param is required: the record's param as a string (what tabs key it by), like \"inv-2031\".",
        )),
    }
}
