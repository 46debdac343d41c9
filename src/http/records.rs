//! The routes of every declared type, registered at start from the schema
//! in force: `POST /<parent plural>/:id/<plural>` (or
//! `POST /cases/:slug/<plural>` for a type under the case), and
//! `GET`/`PATCH`/`DELETE /<plural>/:id`. A body is read as the type
//! declares it (`schema::body`); the lock engine writes it, every update
//! and delete through the guard.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde_json::Value;

use super::{errors, lockable_response, show_lockable};
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::engine::{Parent, Preconditions};
use crate::models::{RecordId, StoredKey, StoredRecord};
use crate::schema::{self, body, RecordType, Store};
use crate::state::AppState;

/// The declared type a resource serves, set on it at registration.
#[derive(Clone, Copy)]
pub struct Served(pub &'static RecordType);

/// The collection path a type's records are created at.
pub fn create_path(ty: &RecordType) -> String {
    match ty.parent.as_deref().and_then(|p| schema::in_force().get(p)) {
        Some(parent) => format!("/{}/{{id}}/{}", parent.plural, ty.plural),
        None => format!("/cases/{{slug}}/{}", ty.plural),
    }
}

/// The path of one record of a type.
pub fn member_path(ty: &RecordType) -> String {
    format!("/{}/{{id}}", ty.plural)
}

/// The types with routes: those baton stores.
fn stored_types() -> impl Iterator<Item = &'static RecordType> {
    schema::in_force()
        .types()
        .iter()
        .filter(|ty| ty.store == Store::Stored)
}

/// Every declared route as `(path, method)`, as [`routes`] registers them.
pub fn served() -> Vec<(String, &'static str)> {
    stored_types()
        .flat_map(|ty| {
            [
                (create_path(ty), "post"),
                (member_path(ty), "get"),
                (member_path(ty), "patch"),
                (member_path(ty), "delete"),
            ]
        })
        .collect()
}

/// Registers every declared type's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    for ty in stored_types() {
        let served = web::Data::new(Served(ty));
        let collection = web::resource(create_path(ty)).app_data(served.clone());
        let collection = match ty.parent {
            Some(_) => collection.route(web::post().to(create_in_record)),
            None => collection.route(web::post().to(create_in_case)),
        };
        cfg.service(collection.default_service(web::to(errors::method_not_allowed)));
        cfg.service(
            web::resource(member_path(ty))
                .app_data(served)
                .route(web::get().to(show))
                .route(web::patch().to(update))
                .route(web::delete().to(destroy))
                .default_service(web::to(errors::method_not_allowed)),
        );
    }
}

fn key(ty: &'static RecordType, id: i64) -> StoredKey {
    StoredKey {
        ty,
        id: RecordId(id),
    }
}

/// A body read as `ty` declares it, for a create or an update.
fn read_body(ty: &RecordType, body: Value, creating: bool) -> AppResult<body::RecordInput> {
    Ok(body::read(ty, body, creating)?)
}

/// `POST /cases/:slug/<plural>` (editors): 201.
pub async fn create_in_case(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let input = read_body(ty, body.into_inner(), true);
    let parent = Parent::Case(slug.into_inner());
    let record = state.engine.create_in(actor, ty, parent, input).await?;
    Ok(lockable_response(StatusCode::CREATED, &record))
}

/// `POST /<parent plural>/:id/<plural>` (editors): 201.
pub async fn create_in_record(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    parent_id: web::Path<i64>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let parent_ty = ty
        .parent
        .as_deref()
        .and_then(|p| schema::in_force().get(p))
        .ok_or_else(|| AppError::not_found("This type has no parent record."))?;
    let input = read_body(ty, body.into_inner(), true);
    let parent = Parent::Record(key(parent_ty, parent_id.into_inner()));
    let record = state.engine.create_in(actor, ty, parent, input).await?;
    Ok(lockable_response(StatusCode::CREATED, &record))
}

/// `GET /<plural>/:id` (readers).
pub async fn show(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    show_lockable::<StoredRecord>(&state, actor, key(served.0, id.into_inner())).await
}

/// `PATCH /<plural>/:id` (editors, guarded): the fields given change,
/// `position` reorders, `<parent>Id` moves a movable type.
pub async fn update(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<i64>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let input = read_body(ty, body.into_inner(), false);
    let key = key(ty, id.into_inner());
    let saved = state.engine.save(caller, preconditions, key, input).await?;
    Ok(lockable_response(StatusCode::OK, &saved))
}

/// `DELETE /<plural>/:id` (editors, guarded): the record and everything
/// inside it, refused (423) while someone else holds a lock on any of it.
pub async fn destroy(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let key = key(served.0, id.into_inner());
    state.engine.destroy(caller, preconditions, key).await?;
    Ok(HttpResponse::NoContent().finish())
}
