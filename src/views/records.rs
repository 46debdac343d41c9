//! The lockable content records: cases, and the records of every declared
//! type.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::{Identity, LockView, OnlineUserView, WaiterView};
use crate::clock::utc;
use crate::models::{Case, StoredRecord};
use crate::schema::{Schema, Store};

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Case)]
pub struct CaseView {
    #[serde(flatten)]
    pub identity: Identity,
    pub slug: String,
    pub title: String,
    /// Starts at 1; every update increments it. Send it back as `If-Match`.
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A record of a declared type: `{type, table, param, id, caseId, <parent>Id,
/// position, …fields, version, createdAt, updatedAt}` (the parent's id only
/// below the case, `position` only for ordered types, every declared field
/// with optional ones `null`). Its schema in the OpenAPI document is built
/// from the schema in force, one component per type.
#[derive(Clone, Debug)]
pub struct StoredView {
    pub identity: Identity,
    /// The whole JSON object, in wire order.
    pub body: Map<String, Value>,
}

impl Serialize for StoredView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(serializer)
    }
}

impl From<&StoredRecord> for StoredView {
    fn from(record: &StoredRecord) -> StoredView {
        let ty = record.ty;
        let identity = Identity::new(&ty.name, &ty.plural, record.id.get());
        let mut body = Map::new();
        body.insert("type".into(), Value::from(identity.type_name));
        body.insert("table".into(), Value::from(identity.table));
        body.insert("param".into(), Value::from(identity.param.clone()));
        body.insert("id".into(), Value::from(identity.id));
        body.insert("caseId".into(), Value::from(record.case_id.get()));
        if let (Some(_), Some(parent_id)) = (&ty.parent, record.parent_id) {
            body.insert(ty.parent_key.clone(), Value::from(parent_id));
        }
        if ty.ordered {
            body.insert("position".into(), Value::from(record.position.unwrap_or(0)));
        }
        for field in &ty.fields {
            let value = record
                .fields
                .get(&field.name)
                .cloned()
                .unwrap_or(Value::Null);
            body.insert(field.name.clone(), value);
        }
        body.insert("version".into(), Value::from(record.version));
        body.insert("createdAt".into(), json_time(record.created_at));
        body.insert("updatedAt".into(), json_time(record.updated_at));
        StoredView { identity, body }
    }
}

fn json_time(at: chrono::NaiveDateTime) -> Value {
    serde_json::to_value(utc(at)).unwrap_or(Value::Null)
}

/// A record of an external type, as far as baton knows it: `{type, table,
/// param, caseId}` (its fields live in the host's database).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ExternalRecord)]
pub struct ExternalView {
    /// Its type name, e.g. `Invoice`.
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "Invoice")]
    pub type_name: &'static str,
    #[schema(value_type = String, example = "invoices")]
    pub table: &'static str,
    /// What the host calls it.
    #[schema(example = "inv-2031")]
    pub param: String,
    pub case_id: i64,
    /// Its identity inside baton (the id is baton's own, not on the wire).
    #[serde(skip)]
    pub identity: Identity,
}

impl ExternalView {
    pub fn new(identity: Identity, case_id: i64) -> ExternalView {
        ExternalView {
            type_name: identity.type_name,
            table: identity.table,
            param: identity.param.clone(),
            case_id,
            identity,
        }
    }
}

/// Any lockable record: in errors (`current`, `lockable`) and frames.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = Record)]
pub enum RecordView {
    Case(CaseView),
    /// A record of a declared type (the document lists each type's shape).
    #[schema(value_type = Object)]
    Stored(StoredView),
    /// A record of an external type.
    External(ExternalView),
}

impl RecordView {
    pub fn identity(&self) -> &Identity {
        match self {
            RecordView::Case(v) => &v.identity,
            RecordView::Stored(v) => &v.identity,
            RecordView::External(v) => &v.identity,
        }
    }
}

/// `GET /cases/:slug`: the case with everything in it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CaseDetail)]
pub struct CaseDetailView {
    #[serde(flatten)]
    pub case: CaseView,
    /// The records of the case as a tree: each type whose parent is the
    /// case under its camelCase plural (`pages`), each record carrying its
    /// children's types the same way (`cards`); ordered types by position.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub records: Map<String, Value>,
    pub active_locks: Vec<LockView>,
    /// Every live waiter of the case, line by line, first first.
    pub waiters: Vec<WaiterView>,
    pub online_users: Vec<OnlineUserView>,
    /// The caller's rank on the case: `reader`, `editor`, `manager` or `site admin`.
    #[schema(example = "editor")]
    pub role: String,
}

impl From<&Case> for CaseView {
    fn from(case: &Case) -> CaseView {
        CaseView {
            identity: Identity::of(case),
            slug: case.slug.clone(),
            title: case.title.clone(),
            version: case.version,
            created_at: utc(case.created_at),
            updated_at: utc(case.updated_at),
        }
    }
}

impl From<&Case> for RecordView {
    fn from(record: &Case) -> RecordView {
        RecordView::Case(record.into())
    }
}

impl From<&StoredRecord> for RecordView {
    fn from(record: &StoredRecord) -> RecordView {
        RecordView::Stored(record.into())
    }
}

/// The tree of a case's records, as `GET /cases/:slug` nests it: for each
/// type under `parent` (`None`: the case), its camelCase plural with its
/// records in order, each record with its own children the same way.
pub fn record_tree(
    schema: &Schema,
    records: &[StoredRecord],
    parent: Option<(&str, i64)>,
) -> Map<String, Value> {
    let mut tree = Map::new();
    for ty in schema.children_of(parent.map(|(type_name, _)| type_name)) {
        if ty.store != Store::Stored {
            continue;
        }
        let mut mine: Vec<&StoredRecord> = records
            .iter()
            .filter(|r| r.ty.name == ty.name && r.parent_id == parent.map(|(_, id)| id))
            .collect();
        if ty.ordered {
            mine.sort_by_key(|r| (r.position, r.id));
        } else {
            mine.sort_by_key(|r| r.id);
        }
        let nested: Vec<Value> = mine
            .into_iter()
            .map(|record| {
                let mut body = StoredView::from(record).body;
                body.extend(record_tree(
                    schema,
                    records,
                    Some((&ty.name, record.id.get())),
                ));
                Value::Object(body)
            })
            .collect();
        tree.insert(ty.nest_key.clone(), Value::Array(nested));
    }
    tree
}
