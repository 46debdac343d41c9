//! What the handlers of lockable records share: reading one (reader+),
//! finding a case, and rendering a record with its `ETag`.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;

use crate::auth::Actor;
use crate::error::{AppError, AppResult};
use crate::locks::engine::{self, Lockable};
use crate::models::Role;
use crate::state::AppState;

/// A lockable's JSON with its `ETag: "<version>"`.
pub fn lockable_response<L: Lockable>(status: StatusCode, record: &L) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    if let Ok(etag) = HeaderValue::from_str(&format!("\"{}\"", record.version())) {
        response.insert_header((header::ETAG, etag));
    }
    response.json(record.view())
}

pub use crate::locks::engine::{case_by_slug, case_of};

/// `GET` of one lockable: reader+ of its case.
pub async fn show_lockable<L: Lockable>(
    state: &AppState,
    actor: Actor,
    key: L::Key,
) -> AppResult<HttpResponse> {
    let record = state
        .db
        .read(move |conn| {
            let record = L::find(conn, key)?.ok_or_else(|| engine::missing(key))?;
            let case = case_of(conn, record.case_id())?;
            crate::auth::access::authorize(conn, &actor.user, &case, Role::Reader)?;
            Ok::<_, AppError>(record)
        })
        .await?;
    Ok(lockable_response(StatusCode::OK, &record))
}
