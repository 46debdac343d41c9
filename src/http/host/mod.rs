//! The routes a team's own backend calls with an API key (`baton key add`),
//! and nothing else may: minting tokens for its users, the guard as a call
//! for writes to its own database, and frames about those writes.
//!
//! One file per route: `tokens.rs`, `guard.rs`, `events.rs`; this one holds
//! what they share (the key checked before anything about the body).

mod events;
mod guard;
mod tokens;

pub use events::*;
pub use guard::*;
pub use tokens::*;

use crate::auth::api_keys::KeyHolder;
use crate::state::AppState;

/// The request's parsed body; or, once the key is known to be live, why
/// the body cannot be right. An unknown or revoked key is 401 before
/// anything about the body is said (one read, only for a refused body: a
/// good one has its key checked in the request's own statements).
pub(super) async fn key_first<T>(
    state: &AppState,
    key: &KeyHolder,
    request: Result<T, actix_web::Error>,
) -> Result<T, actix_web::Error> {
    match request {
        Ok(request) => Ok(request),
        Err(refusal) => {
            let key = key.clone();
            state.db.read(move |conn| key.verify(conn)).await?;
            Err(refusal)
        }
    }
}
