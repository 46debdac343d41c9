//! The application's error type and its one mapping to HTTP: every error
//! leaves baton as `{"error": {"code", "message", …}}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use serde_json::{json, Map, Value};

use crate::db::DbError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    /// A takeover or break refused because the holder outranks the caller.
    #[error("{message}")]
    Outranked { message: String, lock: Box<Value> },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    /// Someone else holds the lock the caller asked for. (Payloads are boxed
    /// to keep `Result<_, AppError>` small.)
    #[error("{message}")]
    LockHeld { message: String, lock: Box<Value> },
    #[error("{0}")]
    Conflict(String),
    /// `If-Match` named an older version than the record has.
    #[error("{message}")]
    StaleVersion {
        message: String,
        current: Box<Value>,
    },
    /// `Lock-Token` named a lock that no longer holds the record.
    #[error("{message}")]
    LockLost {
        message: String,
        current: Box<Value>,
    },
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    Invalid(String),
    /// A write to a record someone else holds the lock on.
    #[error("{message}")]
    Locked {
        message: String,
        lock: Box<Value>,
        lockable: Box<Value>,
    },
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<DieselError> for AppError {
    fn from(e: DieselError) -> Self {
        AppError::Db(DbError::Query(e))
    }
}

impl AppError {
    pub fn invalid(message: impl Into<String>) -> Self {
        AppError::Invalid(message.into())
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        AppError::NotFound(message.into())
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError::Forbidden(message.into())
    }

    fn parts(&self) -> (StatusCode, &'static str, String, Map<String, Value>) {
        use AppError::*;
        let mut extra = Map::new();
        let (status, code) = match self {
            BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            Outranked { lock, .. } => {
                extra.insert("lock".into(), (**lock).clone());
                (StatusCode::FORBIDDEN, "outranked")
            }
            NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            LockHeld { lock, .. } => {
                extra.insert("lock".into(), (**lock).clone());
                (StatusCode::CONFLICT, "lock_held")
            }
            Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            StaleVersion { current, .. } => {
                extra.insert("current".into(), (**current).clone());
                (StatusCode::PRECONDITION_FAILED, "stale_version")
            }
            LockLost { current, .. } => {
                extra.insert("current".into(), (**current).clone());
                (StatusCode::PRECONDITION_FAILED, "lock_lost")
            }
            PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            UnsupportedMediaType(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            Locked { lock, lockable, .. } => {
                extra.insert("lock".into(), (**lock).clone());
                extra.insert("lockable".into(), (**lockable).clone());
                (StatusCode::LOCKED, "locked")
            }
            Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            Db(e) => return db_error_parts(e),
        };
        (status, code, self.to_string(), extra)
    }
}

/// Database failures: the ones a client can cause or retry get their own
/// status; anything else is a 500 whose details stay in the log.
fn db_error_parts(e: &DbError) -> (StatusCode, &'static str, String, Map<String, Value>) {
    let none = Map::new();
    match e {
        DbError::Query(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => (
            StatusCode::CONFLICT,
            "conflict",
            "That record already exists (it was created at the same moment); reload and try again."
                .into(),
            none,
        ),
        DbError::Query(DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _)) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "A record this one refers to does not exist (any more).".into(),
            none,
        ),
        DbError::Query(DieselError::DatabaseError(_, info))
            if info.message().contains("database is locked") =>
        {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "The database is busy; try again in a moment.".into(),
                none,
            )
        }
        DbError::Pool(_) | DbError::Connection(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "The database is not answering; try again in a moment.".into(),
            none,
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Something went wrong on the server; it has been logged.".into(),
            none,
        ),
    }
}

/// The error envelope, for errors raised outside `AppError` too.
pub fn envelope(code: &str, message: &str, extra: Map<String, Value>) -> Value {
    let mut error = Map::new();
    error.insert("code".into(), json!(code));
    error.insert("message".into(), json!(message));
    error.extend(extra);
    json!({ "error": error })
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        self.parts().0
    }

    fn error_response(&self) -> HttpResponse {
        let (status, code, message, extra) = self.parts();
        if status.is_server_error() {
            tracing::error!(error = %self, ?self, "request failed");
        }
        HttpResponse::build(status).json(envelope(code, &message, extra))
    }
}

pub type AppResult<T> = Result<T, AppError>;
