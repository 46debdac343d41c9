//! `POST /guard`: the guard as a call, for writes to your own database.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::openapi::schema::{KnownFormat, OneOfBuilder, Schema, SchemaFormat, SchemaType};
use utoipa::openapi::{ObjectBuilder, RefOr, Type};
use utoipa::ToSchema;

use super::key_first;
use crate::auth::api_keys::KeyHolder;
use crate::error::{AppError, AppResult};
use crate::http::extract::valid_session_id;
use crate::http::locks::{RecordParam, TargetRef};
use crate::locks::engine::{HostWrite, TargetName};
use crate::models::LockId;
use crate::state::AppState;

/// `POST /guard`'s body: flat, since it is a question, not a resource.
/// Its schema is written below ([`GuardRequest::schema`]): what the record's
/// param may be depends on its type.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardRequest {
    #[serde(flatten)]
    record: TargetRef,
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
            crate::locks::engine::registry()
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
    let asked = HostWrite {
        named,
        case_slug,
        user_external_id: external_id,
        session_id,
        lock_token,
    };
    state.engine.guard(key, asked).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a `POST /guard` body asks: the record, its case's slug, the user,
/// the tab and the token.
type GuardAsked = (TargetName, String, String, Option<String>, Option<LockId>);

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
