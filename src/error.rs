//! The application's error type and its one mapping to HTTP: every error
//! leaves baton as `{"error": {"code", "message", …}}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use diesel::result::{DatabaseErrorKind, Error as DieselError};

use crate::db::{DbError, TransientConflict};
use crate::views::errors::Current;
use crate::views::{ErrorBody, ErrorCode, LockView, RecordView};

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
    Outranked {
        message: String,
        lock: Box<LockView>,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    /// Someone else holds the lock the caller asked for. (Payloads are boxed
    /// to keep `Result<_, AppError>` small.)
    #[error("{message}")]
    LockHeld {
        message: String,
        lock: Box<LockView>,
        /// Every lock in the way (`lock` is the first).
        locks: Vec<LockView>,
    },
    /// A claim found every candidate held by someone else.
    #[error("{message}")]
    NoneFree {
        message: String,
        locks: Vec<LockView>,
    },
    #[error("{0}")]
    Conflict(String),
    /// `If-Match` named an older version than the record has.
    #[error("{message}")]
    StaleVersion {
        message: String,
        current: Box<RecordView>,
    },
    /// `Lock-Token` named a lock that no longer holds the record.
    #[error("{message}")]
    LockLost {
        message: String,
        current: Box<RecordView>,
    },
    /// `POST /guard`'s `lock_lost`: the record's live lock, if any.
    #[error("{message}")]
    LockGone {
        message: String,
        current: Option<Box<LockView>>,
    },
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    Invalid(String),
    /// Fields of a record that break their declared schemas: every one.
    #[error("{message}")]
    InvalidFields {
        message: String,
        fields: Vec<FieldProblem>,
    },
    /// A write to a record someone else holds the lock on.
    #[error("{message}")]
    Locked {
        message: String,
        lock: Box<LockView>,
        lockable: Box<RecordView>,
    },
    /// Too many failed sign-ins; try again after `retry_after`.
    #[error("{message}")]
    RateLimited {
        message: String,
        retry_after: std::time::Duration,
    },
    #[error("{0}")]
    Unavailable(String),
    /// A plain request to a WebSocket route (426, with `Upgrade: websocket`).
    #[error("{0}")]
    UpgradeRequired(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

pub use crate::views::FieldProblem;

impl TransientConflict for AppError {
    fn is_transient_conflict(&self) -> bool {
        matches!(self, AppError::Db(e) if e.is_transient_conflict())
    }
}

impl From<DieselError> for AppError {
    fn from(e: DieselError) -> Self {
        AppError::Db(DbError::Query(e))
    }
}

/// A record body that cannot be right: 422, naming every bad field.
impl From<crate::schema::body::BodyError> for AppError {
    fn from(e: crate::schema::body::BodyError) -> Self {
        use crate::schema::body::BodyError;
        match e {
            BodyError::Shape(message) => AppError::Invalid(message),
            BodyError::Fields(problems) => AppError::invalid_fields(
                problems
                    .into_iter()
                    .map(|p| FieldProblem {
                        field: p.field,
                        message: p.message,
                    })
                    .collect(),
            ),
        }
    }
}

impl AppError {
    pub fn invalid(message: impl Into<String>) -> Self {
        AppError::Invalid(message.into())
    }

    /// 422 `invalid` naming every bad field; the message repeats the first.
    pub fn invalid_fields(fields: Vec<FieldProblem>) -> Self {
        let message = fields
            .first()
            .map_or_else(|| "Invalid fields.".to_owned(), |f| f.message.clone());
        AppError::InvalidFields { message, fields }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        AppError::NotFound(message.into())
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError::Forbidden(message.into())
    }

    /// The status and the envelope this error leaves baton as.
    pub fn to_response_parts(&self) -> (StatusCode, ErrorBody) {
        use AppError::*;
        let (status, code) = match self {
            BadRequest(_) => (StatusCode::BAD_REQUEST, ErrorCode::BadRequest),
            Unauthorized(_) => (StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized),
            Forbidden(_) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden),
            Outranked { .. } => (StatusCode::FORBIDDEN, ErrorCode::Outranked),
            NotFound(_) => (StatusCode::NOT_FOUND, ErrorCode::NotFound),
            MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, ErrorCode::MethodNotAllowed),
            LockHeld { .. } => (StatusCode::CONFLICT, ErrorCode::LockHeld),
            NoneFree { .. } => (StatusCode::CONFLICT, ErrorCode::NoneFree),
            Conflict(_) => (StatusCode::CONFLICT, ErrorCode::Conflict),
            StaleVersion { .. } => (StatusCode::PRECONDITION_FAILED, ErrorCode::StaleVersion),
            LockLost { .. } | LockGone { .. } => {
                (StatusCode::PRECONDITION_FAILED, ErrorCode::LockLost)
            }
            PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::PayloadTooLarge),
            UnsupportedMediaType(_) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType,
            ),
            Invalid(_) | InvalidFields { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, ErrorCode::Invalid)
            }
            Locked { .. } => (StatusCode::LOCKED, ErrorCode::Locked),
            RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, ErrorCode::RateLimited),
            Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Unavailable),
            UpgradeRequired(_) => (StatusCode::UPGRADE_REQUIRED, ErrorCode::UpgradeRequired),
            Db(e) => return db_error_parts(e),
        };
        let mut body = ErrorBody::new(code, self.to_string());
        match self {
            Outranked { lock, .. } => body.error.lock = Some(lock.clone()),
            LockHeld { lock, locks, .. } => {
                body.error.lock = Some(lock.clone());
                body.error.locks = Some(locks.clone());
            }
            NoneFree { locks, .. } => body.error.locks = Some(locks.clone()),
            StaleVersion { current, .. } | LockLost { current, .. } => {
                body.error.current = Some(Some(Current::Record(current.clone())))
            }
            LockGone { current, .. } => {
                body.error.current = Some(current.clone().map(Current::Lock))
            }
            Locked { lock, lockable, .. } => {
                body.error.lock = Some(lock.clone());
                body.error.lockable = Some(lockable.clone());
            }
            InvalidFields { fields, .. } => body.error.fields = Some(fields.clone()),
            _ => {}
        }
        (status, body)
    }
}

/// What PostgreSQL says when it cancels a statement (`statement_timeout`,
/// an operator) or ends the session (`idle_in_transaction_session_timeout`,
/// a shutdown or restart): the database is unavailable for this request,
/// which a client retries.
const UNAVAILABLE_MESSAGES: [&str; 6] = [
    "canceling statement due to",
    "terminating connection",
    "server closed the connection",
    "the database system is",
    "no connection to the server",
    "could not receive data from server",
];

/// Database failures: the ones a client can cause or retry get their own
/// status; anything else is a 500 whose details stay in the log.
fn db_error_parts(e: &DbError) -> (StatusCode, ErrorBody) {
    if let DbError::Timeout { .. } = e {
        // The message says how long baton waited and whether anything changed.
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorBody::new(ErrorCode::Unavailable, e.to_string()),
        );
    }
    if e.is_transient_conflict() {
        // PostgreSQL aborted this transaction to let another go on (a
        // deadlock between lock writes, say): it changed nothing.
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorBody::new(
                ErrorCode::Unavailable,
                "The database stopped this request to let a conflicting one finish; nothing \
                 was changed. Try again.",
            ),
        );
    }
    let (status, code, message) = match e {
        DbError::Query(query) => query_error_parts(query),
        DbError::Pool(_) | DbError::Connection(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "The database is not answering; nothing was changed. Try again in a moment.",
        ),
        DbError::Lost(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "The connection to the database was lost; nothing was changed. Try again in a moment.",
        ),
        DbError::CommitUnknown(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "The connection to the database was lost while saving; the change may have been \
             saved. Reload before you try again (a retry with If-Match or Lock-Token is refused \
             with 412 if it was).",
        ),
        _ => INTERNAL_DB_ERROR,
    };
    (status, ErrorBody::new(code, message))
}

/// Anything the client can neither cause nor retry: its details stay in the log.
const INTERNAL_DB_ERROR: (StatusCode, ErrorCode, &str) = (
    StatusCode::INTERNAL_SERVER_ERROR,
    ErrorCode::Internal,
    "Something went wrong on the server; it has been logged.",
);

/// A statement the database refused: a constraint the request broke, or a
/// database that is busy, restarting or gone.
fn query_error_parts(e: &DieselError) -> (StatusCode, ErrorCode, &'static str) {
    let DieselError::DatabaseError(kind, info) = e else {
        return INTERNAL_DB_ERROR;
    };
    match kind {
        DatabaseErrorKind::UniqueViolation => (
            StatusCode::CONFLICT,
            ErrorCode::Conflict,
            "That record already exists (it was created at the same moment); reload and try again.",
        ),
        DatabaseErrorKind::ForeignKeyViolation => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Invalid,
            "A record this one refers to does not exist (any more).",
        ),
        _ if info.message().contains("database is locked") => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "The database is busy; nothing was changed. Try again in a moment.",
        ),
        // Refused before it reaches the database (`http::any_string`);
        // what slips through is still the client's string, not a 500.
        _ if crate::db::cannot_hold_nul(info.message()) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Invalid,
            "A value holds a NUL character (U+0000), which cannot be stored; remove it.",
        ),
        DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "The connection to the database was lost; nothing was changed. Try again in a moment.",
        ),
        _ if UNAVAILABLE_MESSAGES
            .iter()
            .any(|m| info.message().contains(m)) =>
        {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Unavailable,
                "The database stopped this request (restarting, or too slow); nothing was \
                 changed. Try again in a moment.",
            )
        }
        _ => INTERNAL_DB_ERROR,
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        self.to_response_parts().0
    }

    fn error_response(&self) -> HttpResponse {
        let (status, body) = self.to_response_parts();
        if status.is_server_error() {
            tracing::error!(error = %self, ?self, "request failed");
        }
        let mut response = HttpResponse::build(status);
        if let AppError::UpgradeRequired(_) = self {
            response.insert_header((actix_web::http::header::UPGRADE, "websocket"));
        }
        if let AppError::RateLimited { retry_after, .. } = self {
            // Whole seconds, rounded up: a client that waits this long is let in.
            let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
            response.insert_header((actix_web::http::header::RETRY_AFTER, secs.max(1)));
        }
        response.json(body)
    }
}

pub type AppResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadlock_victim_is_unavailable_not_internal() {
        let victim = AppError::Db(DbError::Query(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("deadlock detected".to_owned()),
        )));
        let (status, body) = victim.to_response_parts();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body.error.code, ErrorCode::Unavailable);
        assert!(body.error.message.contains("nothing was changed"));
    }
}
