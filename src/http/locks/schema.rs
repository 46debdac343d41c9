//! What lock requests send and how the OpenAPI document describes it: a
//! record's reference (`lockableType`, `lockableParam`, `case`) and its
//! parsing into a [`TargetName`] record, the lockable types, record params, and
//! the shapes a handler answers with more than one schema.

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::error::{AppError, AppResult};
use crate::locks::engine::{kind_named, known_types, registry, TargetName};
use crate::models::external_record::valid_param;
use crate::views::{LockView, WaiterView};

/// The lockable types, as the OpenAPI document lists them: the case and
/// every type of the schema in force ([`crate::locks::engine::registry`]).
pub struct LockableType;

impl utoipa::PartialSchema for LockableType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .description(Some("A lockable type's name."))
            .enum_values(Some(registry().iter().map(|k| k.type_name)))
            .into()
    }
}

impl ToSchema for LockableType {}

/// Which record: `lockableType` + `lockableParam` (snake_case accepted too).
#[derive(Clone, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TargetRef {
    /// The record's type name.
    #[serde(alias = "lockable_type", rename = "lockableType")]
    #[schema(required = true, nullable = false, value_type = Option<LockableType>)]
    #[param(required = true, value_type = LockableType)]
    lockable_type: Option<String>,
    /// The record's id: `"12"` or `12`.
    #[serde(alias = "lockable_param", rename = "lockableParam")]
    #[schema(required = true, nullable = false, value_type = Option<RecordParam>)]
    #[param(required = true, value_type = ParamText, inline, example = "12")]
    lockable_param: Option<RecordParam>,
    /// The case's slug: required for an external type (`store =
    /// "external"`), whose records are named per case; ignored otherwise.
    #[schema(required = false, nullable = false, value_type = Option<String>)]
    #[param(required = false, value_type = Option<String>)]
    case: Option<String>,
}

/// Whether the schema in force declares an external type: only then may a
/// `lockableParam` be more than digits.
fn any_external_type() -> bool {
    crate::schema::in_force()
        .types()
        .iter()
        .any(|ty| ty.is_external())
}

/// The pattern of a `lockableParam` string: an id, or (with external types
/// declared) a host's name for its record.
fn param_pattern() -> &'static str {
    if any_external_type() {
        "^[A-Za-z0-9._:-]{1,200}$"
    } else {
        "^[0-9]{1,18}$"
    }
}

/// `lockableParam` in a query string.
pub struct ParamText;

impl utoipa::PartialSchema for ParamText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .pattern(Some(param_pattern()))
            .description(Some(
                "The record's id; for an external type, what your backend calls it.",
            ))
            .into()
    }
}

impl ToSchema for ParamText {}

/// The largest id a request may name: 18 digits, like `^[0-9]{1,18}$`.
const MAX_ID: i64 = 999_999_999_999_999_999;

/// A record's id in a request body, as a string (`"12"`, what `param` says)
/// or a number (`12`, as the Gala seed sends it).
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub enum RecordParam {
    Text(String),
    Number(serde_json::Number),
}

impl RecordParam {
    /// What a host calls an external record: 1–200 of `A-Za-z0-9._:-`, or
    /// an integral number as its decimal string.
    pub(crate) fn external(&self) -> Option<String> {
        match self {
            RecordParam::Text(s) => valid_param(s).then(|| s.clone()),
            RecordParam::Number(n) => n
                .as_i64()
                .map(|i| i.to_string())
                .or_else(|| n.as_u64().map(|u| u.to_string()))
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                        .map(|f| (f as i64).to_string())
                }),
        }
    }

    /// The id, if it is one: 1 to 18 digits, or a number that is not negative.
    pub(crate) fn id(&self) -> Option<i64> {
        match self {
            RecordParam::Text(s) => crate::http::extract::digits(s),
            // JSON does not tell 12 from 12.0; both name record 12 (as JSON
            // Schema says). At most 18 digits, as a string.
            RecordParam::Number(n) => n
                .as_i64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e18)
                        .map(|f| f as i64)
                })
                .filter(|id| (0..=MAX_ID).contains(id)),
        }
    }
}

impl std::fmt::Display for RecordParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordParam::Text(s) => f.write_str(s),
            RecordParam::Number(n) => write!(f, "{n}"),
        }
    }
}

impl utoipa::PartialSchema for RecordParam {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(param_pattern()))
                    .examples(["12"]),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Int64,
                    )))
                    .minimum(Some(0))
                    .maximum(Some(MAX_ID)),
            )
            .description(Some(
                "A record's id: a string of digits, or a number. For an external type: \
                 what your backend calls the record (1–200 of `A-Za-z0-9._:-`), with `case`.",
            ))
            .into()
    }
}

impl ToSchema for RecordParam {}

impl TargetRef {
    /// The record asked for: 422 for an unknown type, a bad id or param,
    /// or an external type without `case`.
    pub(crate) fn parse(&self) -> AppResult<TargetName> {
        let type_name = self.lockable_type.as_deref().ok_or_else(|| {
            AppError::invalid(format!(
                "lockableType is required (one of {}).",
                known_types()
            ))
        })?;
        let kind = kind_named(type_name).ok_or_else(|| {
            AppError::invalid(format!(
                "'{type_name}' is not a lockable type; use one of {}.",
                known_types()
            ))
        })?;
        if kind.is_external() {
            let param = self.lockable_param.as_ref().ok_or_else(|| {
                AppError::invalid(format!(
                    "lockableParam is required: what your backend calls the {type_name}, like \"inv-2031\"."
                ))
            })?;
            let param = param.external().ok_or_else(|| {
                AppError::invalid(format!(
                    "lockableParam must be 1 to 200 letters, digits or '.', '_', ':', '-'; got \"{param}\"."
                ))
            })?;
            let case = self.case.clone().ok_or_else(|| {
                AppError::invalid(format!(
                    "case is required for {type_name}: the slug of the case the record belongs to \
                     ({type_name} records live in your database and are named per case)."
                ))
            })?;
            return Ok(TargetName::External { kind, case, param });
        }
        let param = self.lockable_param.as_ref().ok_or_else(|| {
            AppError::invalid("lockableParam is required: the record's id, like \"12\".")
        })?;
        let id = param.id().ok_or_else(|| {
            AppError::invalid(format!(
                "lockableParam must be the record's id, like \"12\"; got \"{param}\"."
            ))
        })?;
        Ok(TargetName::Stored(kind, id))
    }

    /// The `case` it names, if any.
    pub(crate) fn case_slug(&self) -> Option<String> {
        self.case.clone()
    }
}

/// What `POST /locks` answers with 200: the lock this tab holds, or (with
/// `wait`) its place in line. Their `type` tells them apart.
pub struct LockOrWaiter;

impl utoipa::PartialSchema for LockOrWaiter {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{OneOfBuilder, Ref};
        OneOfBuilder::new()
            .item(Ref::from_schema_name(LockView::name()))
            .item(Ref::from_schema_name(WaiterView::name()))
            .description(Some(
                "The lock this tab holds, or (with `wait`) its place in line; `type` says which.",
            ))
            .into()
    }
}

impl ToSchema for LockOrWaiter {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.extend([
            (LockView::name().into(), LockView::schema()),
            (WaiterView::name().into(), WaiterView::schema()),
        ]);
        LockView::schemas(schemas);
        WaiterView::schemas(schemas);
    }
}

/// Only `mine` (the calling tab, from `X-Session-ID`).
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "lowercase")]
pub enum SessionSelector {
    Mine,
}
