//! HTTP handlers: thin — parse, authorize, call the models and the lock
//! engine, render. Routes are listed in [`routes`].

pub mod admin;
pub mod auth;
pub mod cases;
pub mod content;
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
pub mod params;
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
/// with `Allow`.
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
    "/cases/{slug}/pages" => { post: content::create_page }
    "/pages/{id}" => {
        get: content::show_page,
        patch: content::update_page,
        delete: content::destroy_page,
    }
    "/pages/{id}/cards" => { post: content::create_card }
    "/cards/{id}" => {
        get: content::show_card,
        patch: content::update_card,
        delete: content::destroy_card,
    }
    "/cases/{slug}/edgenotes" => { post: content::create_edgenote }
    "/edgenotes/{id}" => {
        get: content::show_edgenote,
        patch: content::update_edgenote,
        delete: content::destroy_edgenote,
    }
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

/// The methods served on a route pattern, for `Allow`.
pub fn allowed_methods(pattern: &str) -> Vec<&'static str> {
    ROUTES
        .iter()
        .filter(|(path, _)| *path == pattern)
        .map(|(_, method)| match *method {
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

fn missing<L: Lockable>(id: L::Id) -> AppError {
    AppError::not_found(format!(
        "{} {id} does not exist (it may have been deleted).",
        L::TYPE
    ))
}

/// `GET` of one lockable: reader+ of its case.
pub async fn show_lockable<L: Lockable>(
    state: &AppState,
    actor: Actor,
    id: L::Id,
) -> AppResult<HttpResponse> {
    let record = state
        .db
        .read(move |conn| {
            let record = L::find(conn, id.into())?.ok_or_else(|| missing::<L>(id))?;
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
    id: L::Id,
    min_role: Role,
    write: F,
) -> AppResult<HttpResponse>
where
    L: Lockable,
    F: FnOnce(&mut Tx, &WriteContext, L) -> AppResult<Written<L>> + Send + 'static,
{
    let policy = state.policy;
    let written = state
        .db
        .write(caller.session_id().cloned(), move |tx| {
            // The record's row first (it orders this write with others of
            // the same record), then caller, case and role in one query.
            let Some(record) = L::find_for_update(tx.conn, id.into())? else {
                caller.load(tx.conn)?; // 401 comes before 404
                return Err(missing::<L>(id));
            };
            let (actor, case, rank) = caller.load_on_case(tx.conn, record.case_id())?;
            crate::auth::access::require(rank, &case, min_role)?;
            let ctx = WriteContext {
                actor: &actor,
                preconditions,
                policy: &policy,
            };
            guarded_write(tx, &ctx, record, |tx, record| write(tx, &ctx, record))
        })
        .await?;
    Ok(written_response(written))
}
