//! `GET /schema`: the schema in force as JSON, every key present.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::schema::{self, RecordType, Store, TakeoverRule};

/// The record types in force, in declaration order.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = Schema)]
pub struct SchemaView {
    pub types: Vec<DeclaredTypeView>,
}

/// One declared type.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = DeclaredType)]
pub struct DeclaredTypeView {
    /// PascalCase, e.g. `BookComponent`: `lockableType` and the records' `type`.
    #[schema(example = "Ticket")]
    pub name: String,
    /// snake_case: its routes (`/tickets/{id}`).
    #[schema(example = "tickets")]
    pub plural: String,
    /// The records' `table`: its plural.
    #[schema(example = "tickets")]
    pub table: String,
    /// `Case` or another declared type.
    #[schema(example = "Case")]
    pub parent: String,
    /// `baton` (baton stores its records) or `external` (a host's records
    /// that baton only names and locks).
    #[schema(example = "baton")]
    pub store: String,
    /// Records keep a 0-based `position` among their siblings.
    pub ordered: bool,
    /// A PATCH may give a record another parent of the same case.
    pub movable: bool,
    /// The string field that names a record to people, if any.
    pub label: Option<String>,
    /// The key a request body nests a record under (`apiEndpoint`).
    #[schema(example = "ticket")]
    pub body_key: String,
    /// The key of a record's parent id (`columnId`, or `caseId` under the case).
    #[schema(example = "caseId")]
    pub parent_key: String,
    /// The key `GET /cases/:slug` (or the parent record) nests the records under (`apiEndpoints`).
    #[schema(example = "tickets")]
    pub nest_key: String,
    /// Each field's JSON Schema (2020-12), by name, in declaration order.
    #[schema(value_type = Object)]
    pub fields: Map<String, Value>,
    /// Fields a create must give.
    pub required: Vec<String>,
    /// Fields whose values are unique among the type's records in a case.
    pub unique: Vec<String>,
    pub lock: LockRulesView,
}

/// A type's lock policy.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = LockRules)]
pub struct LockRulesView {
    /// Its locks' lease (`"2m"`); `null` where the server's `BATON_LOCK_TTL` applies.
    #[schema(example = "2m")]
    pub lease: Option<String>,
    /// The least case role that may "Edit anyway" (or break a lock):
    /// `editor`, `manager` or `none`.
    #[schema(example = "editor")]
    pub takeover: String,
    /// Whether `wait: true` may join a waiting line on it.
    pub wait: bool,
}

impl From<&RecordType> for DeclaredTypeView {
    fn from(ty: &RecordType) -> DeclaredTypeView {
        DeclaredTypeView {
            name: ty.name.clone(),
            plural: ty.plural.clone(),
            table: ty.plural.clone(),
            parent: ty.parent.clone().unwrap_or_else(|| "Case".to_owned()),
            store: match ty.store {
                Store::Stored => "baton",
                Store::External => "external",
            }
            .to_owned(),
            ordered: ty.ordered,
            movable: ty.movable,
            label: ty.label.clone(),
            body_key: ty.body_key.clone(),
            parent_key: ty.parent_key.clone(),
            nest_key: ty.nest_key.clone(),
            fields: ty
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.schema.clone()))
                .collect(),
            required: ty.required.clone(),
            unique: ty.unique.clone(),
            lock: LockRulesView {
                lease: ty.lock.lease_text.clone(),
                takeover: match ty.lock.takeover {
                    TakeoverRule::Editor => "editor",
                    TakeoverRule::Manager => "manager",
                    TakeoverRule::None => "none",
                }
                .to_owned(),
                wait: ty.lock.wait,
            },
        }
    }
}

impl SchemaView {
    pub fn in_force() -> SchemaView {
        SchemaView {
            types: schema::in_force()
                .types()
                .iter()
                .map(DeclaredTypeView::from)
                .collect(),
        }
    }
}
