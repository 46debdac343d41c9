//! What the handlers of lockable records share: reading one (reader+),
//! writing one through the guard in one transaction, finding its case, and
//! rendering it with its `ETag`.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;

use crate::auth::{Actor, Caller};
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::engine;
use crate::locks::guard::{Preconditions, WriteContext};
use crate::locks::{Lockable, Written};
use crate::models::{Case, CaseId, Role};
use crate::state::AppState;

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

pub use crate::locks::naming::case_by_slug;

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
/// `prepare` reads the request against the record (see
/// `locks::engine::write`), and `write` gets what it made.
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
    let guarded = engine::Guarded {
        caller,
        preconditions,
        min_role,
    };
    let written = engine::write(&state.db, guarded, key, &state.policy, prepare, write).await?;
    Ok(written_response(written))
}
