//! HTTP handlers: thin — parse, authorize, call the models and the lock
//! engine, render. This file is the route table ([`routes`]); what the
//! handlers of lockable records share is in [`lockables`].

pub mod admin;
pub mod any_string;
pub mod auth;
pub mod cases;
pub mod edits;
pub mod errors;
pub mod extract;
pub mod health;
pub mod host;
pub mod lock_sets;
pub mod lockables;
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

use actix_web::http::header;
use actix_web::{web, HttpResponse};

pub use lockables::{case_by_slug, case_of, lockable_response, show_lockable};

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
    "/auth/tokens" => { post: host::mint_token }
    "/auth/demo" => { get: auth::demo }
    "/me" => { get: auth::me }
    "/users" => { post: users::create_user }
    "/users/{id}" => { patch: users::update_user, delete: users::remove_user }
    "/cases" => { get: cases::index, post: cases::create }
    "/cases/{slug}" => { get: cases::show, patch: cases::update, delete: cases::destroy }
    "/cases/{slug}/memberships" => { get: memberships::index, post: memberships::create }
    "/memberships/{id}" => { delete: memberships::destroy }
    "/cases/{slug}/lock_events" => { get: locks::events }
    "/cases/{slug}/events" => { post: host::announce }
    "/guard" => { post: host::guard }
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
