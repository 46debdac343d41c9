//! HTTP handlers: thin — parse, authorize, call the models and the lock
//! engine, render. Routes are listed in [`routes`].

pub mod admin;
pub mod auth;
pub mod cases;
pub mod edits;
pub mod errors;
pub mod extract;
pub mod health;
pub mod lock_sets;
pub mod locks;
pub mod memberships;
pub mod metrics;
pub mod observe;
pub mod openapi;
pub mod openapi_records;
pub mod params;
pub mod records;
pub mod schema;
pub mod users;
pub mod waiters;
pub mod web_app;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};

use crate::auth::{Actor, Caller};
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::guard::{guarded_write, Preconditions, WriteContext};
use crate::locks::{Lockable, Written};
use crate::models::{Case, CaseId, Role};
use crate::state::AppState;

/// The one list of routes: registers every handler with actix, lists them
/// in [`ROUTES`] (for `Allow` on a 405), and lists their `#[utoipa::path]`
/// declarations in [`RoutePaths`], from which the OpenAPI document takes its
/// paths (a test checks each declaration's path and method against this
/// list). Each path is one resource: a method it does not serve gets 405
/// with `Allow`. The declared types' routes are registered beside them,
/// from the schema in force ([`records::routes`]).
macro_rules! routes {
    ($( $path:literal => { $( $method:ident : $module:ident :: $handler:ident ),+ $(,)? } )*) => {
        /// Every route the app serves, as `(path, method)`.
        pub const ROUTES: &[(&str, &str)] = &[ $( $( ($path, stringify!($method)) ),+ ),* ];

        /// Registers every route of [`ROUTES`].
        pub fn routes(cfg: &mut web::ServiceConfig) {
            $(
                cfg.service(
                    web::resource($path)
                        $( .route(web::$method().to($module::$handler)) )+
                        .default_service(web::to(errors::method_not_allowed)),
                );
            )*
            records::routes(cfg);
            cfg.route("/docs", web::get().to(docs_redirect)).service(
                utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
                    .config(utoipa_swagger_ui::Config::new(["/openapi.json"])),
            );
        }

        /// The documented operation of every route, in the order above.
        #[derive(utoipa::OpenApi)]
        #[openapi(paths( $( $( $module::$handler ),+ ),* ))]
        pub struct RoutePaths;
    };
}

routes! {
    "/healthz" => { get: health::healthz }
    "/openapi.json" => { get: openapi::openapi_json }
    "/schema" => { get: schema::show }
    "/auth/login" => { post: auth::login }
    "/auth/logout" => { post: auth::logout }
    "/auth/demo" => { get: auth::demo }
    "/me" => { get: auth::me }
    "/users" => { post: users::create_user }
    "/users/{id}" => { patch: users::update_user, delete: users::remove_user }
    "/cases" => { get: cases::index, post: cases::create }
    "/cases/{slug}" => { get: cases::show, patch: cases::update, delete: cases::destroy }
    "/cases/{slug}/memberships" => { get: memberships::index, post: memberships::create }
    "/memberships/{id}" => { delete: memberships::destroy }
    "/cases/{slug}/lock_events" => { get: locks::events }
    "/locks" => { get: locks::index, post: locks::create, delete: locks::destroy_mine }
    "/locks/status" => { get: locks::status }
    "/locks/batch" => { post: lock_sets::batch }
    "/locks/claim" => { post: lock_sets::claim }
    "/locks/{id}" => { get: locks::show, delete: locks::destroy }
    "/locks/{id}/refresh" => { post: locks::refresh }
    "/waiters/{id}" => { delete: waiters::leave }
    "/waiters/{id}/refresh" => { post: waiters::refresh }
    "/cases/{slug}/edits" => { get: edits::edits }
    "/admin/sessions" => { get: admin::index }
    "/admin/sessions/{sessionId}" => { delete: admin::kick }
}

/// Every route served, static and declared, as `(path, method)`: the
/// routes above, then each declared type's (`records::served`).
pub fn served_routes() -> Vec<(String, &'static str)> {
    ROUTES
        .iter()
        .map(|(path, method)| ((*path).to_owned(), *method))
        .chain(records::served())
        .collect()
}

/// The methods served on a route pattern, for `Allow`.
pub fn allowed_methods(pattern: &str) -> Vec<&'static str> {
    served_routes()
        .into_iter()
        .filter(|(path, _)| path == pattern)
        .map(|(_, method)| match method {
            "get" => "GET",
            "post" => "POST",
            "patch" => "PATCH",
            "put" => "PUT",
            "delete" => "DELETE",
            other => other,
        })
        .collect()
}

async fn docs_redirect() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}

/// A lockable's JSON with its `ETag: "<version>"`.
pub fn lockable_response<L: Lockable>(status: StatusCode, record: &L) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    if let Ok(etag) = HeaderValue::from_str(&format!("\"{}\"", record.version())) {
        response.insert_header((header::ETAG, etag));
    }
    response.json(record.view())
}

/// Renders what a guarded write did: 200 with the record, or 204.
pub fn written_response<L: Lockable>(written: Written<L>) -> HttpResponse {
    match written {
        Written::Updated(record) => lockable_response(StatusCode::OK, &record),
        Written::Destroyed => HttpResponse::NoContent().finish(),
    }
}

/// The case a record belongs to, or 404.
pub fn case_of(conn: &mut crate::db::DbConn, case_id: CaseId) -> AppResult<Case> {
    Case::find(conn, case_id)?
        .ok_or_else(|| AppError::not_found(format!("Case {case_id} does not exist.")))
}

/// The case with this slug, or 404.
pub fn case_by_slug(conn: &mut crate::db::DbConn, slug: &str) -> AppResult<Case> {
    Case::find_by_slug(conn, slug)?
        .ok_or_else(|| AppError::not_found(format!("There is no case '{slug}'.")))
}

fn missing(key: impl std::fmt::Display) -> AppError {
    AppError::not_found(format!("{key} does not exist (it may have been deleted)."))
}

/// `GET` of one lockable: reader+ of its case.
pub async fn show_lockable<L: Lockable>(
    state: &AppState,
    actor: Actor,
    key: L::Key,
) -> AppResult<HttpResponse> {
    let record = state
        .db
        .read(move |conn| {
            let record = L::find(conn, key)?.ok_or_else(|| missing(key))?;
            let case = case_of(conn, record.case_id())?;
            crate::auth::access::authorize(conn, &actor.user, &case, Role::Reader)?;
            Ok::<_, AppError>(record)
        })
        .await?;
    Ok(lockable_response(StatusCode::OK, &record))
}

/// `PATCH`/`DELETE` of one lockable: loads the caller and the record (for
/// update), checks the caller's role on its case, and runs `write` through
/// the guard — all in one transaction, whose broadcasts go out after commit.
pub async fn guarded<L, F>(
    state: &AppState,
    caller: Caller,
    preconditions: Preconditions,
    key: L::Key,
    min_role: Role,
    write: F,
) -> AppResult<HttpResponse>
where
    L: Lockable,
    F: FnOnce(&mut Tx, &WriteContext, L) -> AppResult<Written<L>> + Send + 'static,
{
    guarded_after(
        state,
        caller,
        preconditions,
        key,
        min_role,
        |_, _, _| Ok(()),
        move |tx, ctx, record, ()| write(tx, ctx, record),
    )
    .await
}

/// [`guarded`], with a step between the role check and the guard:
/// `prepare` reads the request against the record (a body that cannot be
/// right is 400 or 422, never 412 or 423: RFC 9110 §13.2.1), and `write`
/// gets what it made.
pub async fn guarded_after<L, T, P, F>(
    state: &AppState,
    caller: Caller,
    preconditions: Preconditions,
    key: L::Key,
    min_role: Role,
    prepare: P,
    write: F,
) -> AppResult<HttpResponse>
where
    L: Lockable,
    P: FnOnce(&mut Tx, &Actor, &L) -> AppResult<T> + Send + 'static,
    F: FnOnce(&mut Tx, &WriteContext, L, T) -> AppResult<Written<L>> + Send + 'static,
    T: Send + 'static,
{
    let policy = state.policy;
    let written = state
        .db
        .write(caller.session_id().cloned(), move |tx| {
            // The record's row first (it orders this write with others of
            // the same record), then caller, case and role in one query.
            let Some(record) = L::find_for_update(tx.conn, key)? else {
                caller.load(tx.conn)?; // 401 comes before 404
                return Err(missing(key));
            };
            let (actor, case, rank) = caller.load_on_case(tx.conn, record.case_id())?;
            crate::auth::access::require(rank, &case, min_role)?;
            let prepared = prepare(tx, &actor, &record)?;
            let ctx = WriteContext {
                actor: &actor,
                preconditions,
                policy: &policy,
            };
            guarded_write(tx, &ctx, record, |tx, record| {
                write(tx, &ctx, record, prepared)
            })
        })
        .await?;
    Ok(written_response(written))
}
