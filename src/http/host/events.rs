//! `POST /cases/:slug/events`: frames about your own records, for every tab
//! of the case.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{ObjectBuilder, RefOr, Type};
use utoipa::ToSchema;

use super::key_first;
use crate::auth::api_keys::KeyHolder;
use crate::db::Outgoing;
use crate::error::{AppError, AppResult};
use crate::http::case_by_slug;
use crate::http::extract::valid_session_id;
use crate::state::AppState;
use crate::views::{Change, ServerFrame, Watchable};

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
        let (description, type_name) =
            if external.is_empty() {
                // Still a schema a request can satisfy (an empty `enum` would
                // be none): the document says the server refuses it, and why.
                (
                "The record as your backend has it. This server's schema declares no type with \
                 `store = \"external\"`, so no event can be right: every one is 422.",
                ObjectBuilder::new().schema_type(Type::String).description(Some(
                    "Must name a type declared with `store = \"external\"`; this server's \
                     schema declares none, so every event is refused (422).",
                )),
            )
            } else {
                (
                "The record as your backend has it: `type` (a type with `store = \"external\"`), \
                 `param`, and any fields. Relayed as sent.",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(external))
                    .description(Some(
                        "An external type: baton announces the records it stores itself.",
                    )),
            )
            };
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("type", type_name)
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
