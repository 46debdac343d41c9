//! The error envelope: `{"error": {"code", "message", …}}`.

use serde::Serialize;
use utoipa::ToSchema;

use super::{LockView, RecordView};

/// Machine-readable error codes; `message` says the same for a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    Unauthorized,
    Forbidden,
    /// A takeover or break refused: the holder outranks the caller (403).
    Outranked,
    NotFound,
    MethodNotAllowed,
    /// Someone else holds the lock asked for (409).
    LockHeld,
    /// A claim found every candidate held (409).
    NoneFree,
    Conflict,
    /// `If-Match` named an older version (412).
    StaleVersion,
    /// `Lock-Token` named a lock that is gone (412).
    LockLost,
    PayloadTooLarge,
    UnsupportedMediaType,
    /// Invalid fields (422).
    Invalid,
    /// Someone else holds the record's lock; the write was refused (423).
    Locked,
    RateLimited,
    Unavailable,
    /// A plain request to the edits channel: connect with a WebSocket (426).
    UpgradeRequired,
    Internal,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// What went wrong and what to do, for a person.
    pub message: String,
    /// The lock in the way (`lock_held`, `locked`, `outranked`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub lock: Option<Box<LockView>>,
    /// Every lock in the way (`lock_held`, `none_free`): of a lock set, a
    /// claim's candidates, or a deep lock's subtree.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub locks: Option<Vec<LockView>>,
    /// The record the refused write was for (`locked`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub lockable: Option<Box<RecordView>>,
    /// The record as it is now (`stale_version`, `lock_lost`); from
    /// `POST /guard`, the record's live lock, or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = true, value_type = Option<Current>)]
    pub current: Option<Option<Current>>,
    /// Every field that breaks its declared schema (`invalid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub fields: Option<Vec<FieldProblem>>,
}

/// What a 412 says is there now: the record (baton's own writes), or its
/// live lock (`POST /guard`: baton keeps no copy of a host's record).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Current {
    Record(Box<RecordView>),
    Lock(Box<LockView>),
}

impl utoipa::PartialSchema for Current {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        // anyOf: a lock is an object a stored record's schema may also match.
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(utoipa::openapi::Ref::from_schema_name(RecordView::name()))
            .item(utoipa::openapi::Ref::from_schema_name(LockView::name()))
            .description(Some(
                "The record as it is now; from POST /guard, the record's live lock.",
            ))
            .into()
    }
}

impl ToSchema for Current {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.extend([
            (RecordView::name().into(), RecordView::schema()),
            (LockView::name().into(), LockView::schema()),
        ]);
        RecordView::schemas(schemas);
        LockView::schemas(schemas);
    }
}

/// One bad field of a request body.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FieldProblem {
    /// The field's declared name.
    pub field: String,
    /// What is wrong with it, for a person.
    pub message: String,
}

/// Every error response's body.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code,
                message: message.into(),
                lock: None,
                locks: None,
                lockable: None,
                current: None,
                fields: None,
            },
        }
    }
}
