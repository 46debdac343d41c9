//! The wire contract as types: every JSON shape baton sends — records,
//! users, locks, audit events, sessions, the error envelope and every channel
//! frame — is a struct here deriving `Serialize` and `utoipa::ToSchema`, built
//! from the models in one place. Responses use camelCase, and every record
//! carries its identity `{type, table, param, id}` so a client can key
//! anything by `${type}/${param}`.
//!
//! The OpenAPI document that publishes these shapes with the routes is
//! assembled in `crate::http::openapi`.

pub mod errors;
pub mod frames;
pub mod locks;
pub mod people;
pub mod records;
pub mod schema;

use serde::Serialize;
use utoipa::ToSchema;

use crate::models::WireType;

pub use errors::{ErrorBody, ErrorCode, ErrorDetail, FieldProblem};
pub use frames::{Change, ServerFrame, Watchable};
pub use locks::{
    EndedLockView, EndedWaiterView, LockEventView, LockSetView, LockStatusView, LockView,
    WaiterView,
};
pub use people::{LoginView, MembershipView, OnlineUserView, RoleView, SessionView, UserView};
pub use records::{record_tree, CaseDetailView, CaseView, ExternalView, RecordView, StoredView};
pub use schema::{DeclaredTypeView, LockRulesView, SchemaView};

/// `{type, table, param, id}`: what identifies a record, even a destroyed one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Identity)]
pub struct Identity {
    /// The record's type name, e.g. `Ticket`.
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "Ticket")]
    pub type_name: &'static str,
    /// Its table, e.g. `tickets`.
    #[schema(value_type = String, example = "tickets")]
    pub table: &'static str,
    /// Its id as a string: key records by `${type}/${param}`.
    #[schema(example = "12")]
    pub param: String,
    pub id: i64,
}

impl Identity {
    pub fn new(type_name: &'static str, table: &'static str, id: i64) -> Identity {
        Identity {
            type_name,
            table,
            param: id.to_string(),
            id,
        }
    }

    pub fn of<R: WireType>(record: &R) -> Identity {
        Identity::new(R::TYPE, R::TABLE, record.id())
    }

    /// "Ticket 12", for messages.
    pub fn label(&self) -> String {
        format!("{} {}", self.type_name, self.param)
    }
}

/// `{type, table, param}`: the record a lock is on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = RecordKey)]
pub struct RecordKey {
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "Ticket")]
    pub type_name: String,
    #[schema(value_type = String, example = "tickets")]
    pub table: String,
    #[schema(example = "12")]
    pub param: String,
}

/// `GET /healthz`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = Health)]
pub struct HealthView {
    #[schema(example = "ok")]
    pub status: String,
    /// `sqlite` or `postgres`.
    #[schema(example = "sqlite")]
    pub database: String,
}
