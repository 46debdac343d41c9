//! The OpenAPI 3.1 document: every route with its bodies, parameters,
//! responses and errors, the bearer scheme, and the edits channel's frames.
//! Served at `GET /openapi.json` and rendered at `GET /docs`.
//!
//! Each handler declares what is particular to it (`#[utoipa::path]`); the
//! conventions every route shares are added here by [`Conventions`], so they
//! are written once: the error envelope on every 4xx/5xx, 401 and the
//! `X-Session-ID` header on authenticated routes, 400/413/415/422 wherever a
//! JSON body is read, 404 wherever a path names a record, 422 wherever a
//! path or query string can hold a NUL, 503 everywhere. Last, every string
//! and object a request can carry says it may not hold U+0000
//! (`super::any_string::document_refusals`).

use actix_web::HttpResponse;
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, ObjectBuilder, OpenApi as Document, RefOr, Required, ResponseBuilder, Type,
};
use utoipa::{Modify, OpenApi};

use super::locks;
use crate::models::{Lock, LockEvent, Membership, User, Waiter, WireType};
use crate::views::{ErrorBody, ServerFrame};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "baton",
        description = "Pessimistic edit locks, guarded writes and live presence for \
                       collaborative web apps. Requests nest attributes under the resource's \
                       name (`{\"card\": {\"content\": \"…\"}}`); responses are camelCase and \
                       every record carries `type`, `table` and `param`. Send \
                       `Authorization: Bearer <token>` (from `POST /auth/login`) and, from a \
                       browser tab, `X-Session-ID: <uuid>`. Errors are \
                       `{\"error\": {\"code\", \"message\", …}}`.",
        license(name = "MIT"),
    ),
    components(schemas(ServerFrame, ErrorBody, locks::LockableType, locks::SessionSelector)),
    security(("bearer" = [])),
    tags(
        (name = "auth", description = "Signing in, the current user, users"),
        (name = "cases", description = "Cases and their members"),
        (name = "content", description = "The records of a case: every update and delete is guarded"),
        (name = "locks", description = "Taking, renewing, releasing and overriding locks; the audit trail"),
        (name = "realtime", description = "The edits channel (WebSocket)"),
        (name = "admin", description = "Open tabs, for site admins"),
        (name = "host", description = "For your own backend, with an API key (`baton key add`): tokens for your users, the guard for writes to your database, frames about them"),
        (name = "meta", description = "Health and this document"),
    )
)]
pub struct ApiDoc;

/// The document, as served: the paths of every route (from the one list in
/// `crate::http`), the shared schemas and tags, and the [`Conventions`].
pub fn document() -> Document {
    let mut doc = ApiDoc::openapi();
    doc.merge(super::RoutePaths::openapi());
    super::openapi_records::add_declared_types(&mut doc);
    Conventions.modify(&mut doc);
    tag_records(&mut doc);
    super::any_string::document_refusals(&mut doc);
    doc
}

/// Gives each record schema (`Ticket`, `Lock`, …) its `type` and `table` as
/// literals, beside the shared `Identity`, so generated clients get tagged
/// unions: a `Watchable` narrows on `type`. The names come from the lockable
/// registry and the models' [`WireType`] constants; a test checks that every
/// schema built on `Identity` is tagged.
fn tag_records(doc: &mut Document) {
    // The lockable types from the registry, and the other records.
    let lockables = crate::locks::engine::registry()
        .iter()
        .map(|kind| (kind.type_name, kind.table));
    let others = [
        (Lock::TYPE, Lock::TABLE),
        (LockEvent::TYPE, LockEvent::TABLE),
        (Membership::TYPE, Membership::TABLE),
        (User::TYPE, User::TABLE),
        (Waiter::TYPE, Waiter::TABLE),
    ];
    let records: Vec<_> = lockables.chain(others).collect();
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for (type_name, table) in records {
        let Some(RefOr::T(Schema::AllOf(all_of))) = components.schemas.get_mut(type_name) else {
            continue;
        };
        if all_of.items.is_empty() {
            continue;
        }
        let literal = |value: &str| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([value.to_owned()]))
        };
        let tags = ObjectBuilder::new()
            .property("type", literal(type_name))
            .property("table", literal(table))
            .required("type")
            .required("table");
        all_of
            .items
            .insert(1, RefOr::T(Schema::Object(tags.build())));
    }
}

/// `GET /openapi.json`: this document (OpenAPI 3.1).
#[utoipa::path(
    get, operation_id = "openapiDocument",
    path = "/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json"))
)]
pub async fn openapi_json(doc: actix_web::web::Data<Document>) -> HttpResponse {
    HttpResponse::Ok().json(doc.get_ref())
}

/// Adds what every route shares; see the module docs.
struct Conventions;

impl Modify for Conventions {
    fn modify(&self, doc: &mut Document) {
        add_security_schemes(doc.components.get_or_insert_with(Default::default));
        for (path, item) in doc.paths.paths.iter_mut() {
            for operation in operations(item) {
                add_shared_errors(path, operation);
                describe_errors(operation);
            }
        }
    }
}

/// The two ways to authenticate: a session's token, or a backend's API key.
fn add_security_schemes(components: &mut utoipa::openapi::Components) {
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some("A token from POST /auth/login (or `baton token`)."))
                .build(),
        ),
    );
    components.add_security_scheme(
        "apiKey",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "An API key from `baton key add`, for your own backend: \
                     `Authorization: Bearer baton_key_…`. It opens `POST /auth/tokens`, \
                     `POST /guard` and `POST /cases/{slug}/events` only.",
                ))
                .build(),
        ),
    );
}

/// The errors an operation can answer because of what it takes: a token, a
/// tab header, a body, an id in its path, strings.
fn add_shared_errors(path: &str, operation: &mut Operation) {
    let names_record = path.contains('{');
    let public = operation
        .security
        .as_ref()
        .is_some_and(|s| s.iter().all(|r| r == &Default::default()));
    // The key routes read no tab header: a host names the tab in
    // the body (`sessionId`, `editorSessionId`).
    let by_key = operation.security.as_ref().is_some_and(|s| {
        !s.is_empty()
            && s.iter()
                .all(|r| r == &SecurityRequirement::new("apiKey", [] as [&str; 0]))
    });
    if !public && !by_key {
        add_session_header(operation);
        add_error(
            operation,
            400,
            "A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`).",
        );
    }
    if !public {
        add_error(
            operation,
            401,
            "No token, or an invalid or expired one: sign in again.",
        );
    }
    if operation.request_body.is_some() {
        add_error(operation, 400, "The body is not valid JSON.");
        add_error(operation, 413, "The body is larger than the limit.");
        add_error(
            operation,
            415,
            "The body is not sent as `application/json`.",
        );
        add_error(
            operation,
            422,
            "A field is missing or invalid; the message names it.",
        );
    }
    if names_record {
        add_error(operation, 404, "Nothing has this id (any more).");
    }
    // `http::any_string`: a string with U+0000 anywhere in the
    // request (login answers it as wrong credentials).
    let takes_strings = names_record
        || operation
            .parameters
            .iter()
            .flatten()
            .any(|p| matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Query));
    if takes_strings && path != "/auth/login" {
        add_error(
            operation,
            422,
            "A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it.",
        );
    }
    add_error(
        operation,
        503,
        "The database is busy or not answering; try again.",
    );
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.post.as_mut(),
        item.put.as_mut(),
        item.patch.as_mut(),
        item.delete.as_mut(),
    ]
    .into_iter()
    .flatten()
}

fn session_header() -> Parameter {
    ParameterBuilder::new()
        .name("X-Session-ID")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "The browser tab's id (a UUID it made at load). Locks taken with it belong to \
             that tab, and broadcasts carry it as `editorSessionId`.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[A-Za-z0-9_-]{1,64}$")),
        ))
        .build()
}

/// `X-Session-ID` with its pattern. A route that needs it declares it itself
/// (as required); it keeps that, and gets the shared schema.
fn add_session_header(operation: &mut Operation) {
    let shared = session_header();
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    let declared = parameters.iter_mut().find_map(|p| match p {
        RefOr::T(p) if p.name == shared.name => Some(p),
        _ => None,
    });
    match declared {
        Some(declared) => declared.schema = shared.schema,
        None => parameters.push(RefOr::T(shared)),
    }
}

/// Adds an error response unless the route documents that status itself.
fn add_error(operation: &mut Operation, status: u16, description: &str) {
    let responses = &mut operation.responses.responses;
    responses
        .entry(status.to_string())
        .or_insert_with(|| RefOr::T(ResponseBuilder::new().description(description).build()));
}

/// Every 4xx/5xx carries the error envelope.
fn describe_errors(operation: &mut Operation) {
    for (status, response) in operation.responses.responses.iter_mut() {
        let is_error = status.starts_with('4') || status.starts_with('5');
        if let (true, RefOr::T(response)) = (is_error, response) {
            if response.content.is_empty() {
                response.content.insert(
                    "application/json".into(),
                    RefOr::T(
                        ContentBuilder::new()
                            .schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                                "ErrorBody",
                            ))))
                            .build(),
                    ),
                );
            }
        }
    }
}
