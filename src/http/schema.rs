//! `GET /schema`: the record types in force, as the client kit and the web
//! app read them.

use actix_web::HttpResponse;

use crate::auth::Actor;
use crate::views::SchemaView;

/// `GET /schema` (any signed-in user).
#[utoipa::path(get, operation_id = "showSchema", path = "/schema", tag = "meta",
    responses(
        (status = 200, description = "The schema in force: every declared type with its plural, table, parent, store, order, moves, label, keys (bodyKey, parentKey, nestKey: clients take these, never derive them), fields (JSON Schemas), required and unique fields and lock policy, in declaration order", body = SchemaView),
    ))]
pub async fn show(_actor: Actor) -> HttpResponse {
    HttpResponse::Ok().json(SchemaView::in_force())
}
