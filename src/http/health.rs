use actix_web::{web, HttpResponse};
use diesel::connection::SimpleConnection;

use crate::db::{Backend, DbError};
use crate::error::AppResult;
use crate::state::AppState;
use crate::views::HealthView;

/// `GET /healthz`: 200 when the database answers.
#[utoipa::path(get, operation_id = "health", path = "/healthz", tag = "meta", security(()),
    responses((status = 200, description = "The database answers", body = HealthView)))]
pub async fn healthz(state: web::Data<AppState>) -> AppResult<HttpResponse> {
    state
        .db
        .read(|conn| conn.batch_execute("SELECT 1").map_err(DbError::from))
        .await?;
    let database = match state.db.backend() {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    Ok(HttpResponse::Ok().json(HealthView {
        status: "ok".into(),
        database: database.into(),
    }))
}
