//! Who is calling: passwords, tokens, the request's actor, and what their
//! role on a case lets them do.

pub mod access;
pub mod actor;
pub mod api_keys;
pub mod jwt;
pub mod password;
pub mod throttle;
pub mod tokens;

pub use access::Rank;
pub use actor::{Actor, Caller};
pub use jwt::{check_secret, JwtKeys, TokenClaims};

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error(
        "Sign in first: send `Authorization: Bearer <token>` (get a token from POST /auth/login)."
    )]
    MissingToken,
    #[error("Your session token is invalid or has expired; sign in again.")]
    InvalidToken,
    #[error(
        "This session has ended (signed out, password changed or account removed); sign in again."
    )]
    Ended,
    #[error("Wrong email or password.")]
    BadCredentials,
    #[error(
        "This route takes an API key: send `Authorization: Bearer <key>` with a key from `baton key add` (a user's token is not accepted here)."
    )]
    MissingKey,
    #[error("This API key is unknown or was revoked; make a new one with `baton key add`.")]
    KeyRefused,
    #[error("cannot sign tokens: {0}")]
    Signing(String),
    #[error(
        "BATON_JWT_SECRET has {0} byte(s); it needs at least 32 (a shorter one can be \
         guessed from any token it signed). Make one with `openssl rand -hex 32`."
    )]
    WeakSecret(usize),
}

impl From<AuthError> for crate::error::AppError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Signing(_) | AuthError::WeakSecret(_) => {
                crate::error::AppError::Unavailable(e.to_string())
            }
            _ => crate::error::AppError::Unauthorized(e.to_string()),
        }
    }
}
