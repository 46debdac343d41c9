//! The schema in force: the record types a site declares in a TOML file
//! (`baton serve --schema FILE`), or the built-in casebook.
//!
//! `file` reads and checks the file, `names` derives plurals and keys,
//! `fields` validates request bodies against the declared JSON Schemas,
//! `print` writes the schema back as TOML, `in_force` holds the one schema
//! a process serves.

pub mod body;
mod fields;
mod file;
mod in_force;
mod names;
mod print;

use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Map, Value};

pub use fields::{Field, FieldKind};
pub use in_force::{in_force, install};

/// The built-in schema, also `examples/schemas/casebook.toml`.
const CASEBOOK: &str = include_str!("../../examples/schemas/casebook.toml");

/// Type names baton uses for its own records.
pub const TAKEN_NAMES: &[&str] = &["Case", "User", "Lock", "Waiter", "Membership", "LockEvent"];

/// First path segments of baton's own routes: a declared plural may not be
/// one of them.
pub const RESERVED_PLURALS: &[&str] = &[
    "users",
    "cases",
    "locks",
    "memberships",
    "waiters",
    "admin",
    "auth",
    "me",
    "healthz",
    "docs",
    "schema",
    "guard",
    "metrics",
    "assets",
    "lock_events",
    "edits",
    "events",
];

/// The declared record types, in declaration order.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    types: Vec<RecordType>,
}

/// A schema file that cannot be right. `problems` are without the file
/// name; `Display` gives one line per problem, each starting with it
/// (`kanban.toml: types.Ticket.lock.leas: unknown key (…)`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SchemaError {
    pub file: String,
    pub problems: Vec<String>,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {problem}", self.file)?;
        }
        Ok(())
    }
}

/// Where a type's records live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// baton stores them (fields, routes, nesting): `store = "baton"`.
    Stored,
    /// The host's database: baton only locks them, by param.
    External,
}

impl Store {
    pub fn as_str(self) -> &'static str {
        match self {
            Store::Stored => "baton",
            Store::External => "external",
        }
    }
}

/// The least case role that may "Edit anyway" (take over, or break, someone
/// else's lock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakeoverRule {
    Editor,
    Manager,
    None,
}

impl TakeoverRule {
    pub fn as_str(self) -> &'static str {
        match self {
            TakeoverRule::Editor => "editor",
            TakeoverRule::Manager => "manager",
            TakeoverRule::None => "none",
        }
    }
}

/// A type's lock policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockRules {
    /// None: the server's `BATON_LOCK_TTL` applies.
    pub lease: Option<Duration>,
    /// The lease as declared (`"2m"`), for `GET /schema` and printing.
    pub lease_text: Option<String>,
    pub takeover: TakeoverRule,
    /// Whether waiting lines are allowed on this type.
    pub wait: bool,
}

impl LockRules {
    /// The lock rules of records of `type_name`, as its type declares them:
    /// the one answer to a lock's lease, who may take it over and whether
    /// a tab may wait for it. The case (and a name no type has) has the
    /// defaults.
    pub fn of(type_name: &str) -> &'static LockRules {
        static DEFAULTS: std::sync::OnceLock<LockRules> = std::sync::OnceLock::new();
        match in_force().get(type_name) {
            Some(ty) => &ty.lock,
            None => DEFAULTS.get_or_init(LockRules::default),
        }
    }

    /// The lease of its locks: its own, else the server's `ttl`.
    pub fn lease_or(&self, ttl: Duration) -> Duration {
        self.lease.unwrap_or(ttl)
    }
}

impl Default for LockRules {
    fn default() -> LockRules {
        LockRules {
            lease: None,
            lease_text: None,
            takeover: TakeoverRule::Editor,
            wait: true,
        }
    }
}

/// One declared record type, with every name derived from it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordType {
    /// `BookComponent`
    pub name: String,
    /// `book_components`: routes and `table`.
    pub plural: String,
    /// `bookComponent`: the camelCase singular, request bodies.
    pub body_key: String,
    /// `bookComponents`: the camelCase plural, nesting in `GET /cases/:slug`.
    pub nest_key: String,
    /// `book component`: messages ("Add book component").
    pub words: String,
    /// None: the case.
    pub parent: Option<String>,
    /// `caseId` under the case, else the parent's camelCase name + `Id`.
    pub parent_key: String,
    pub store: Store,
    pub ordered: bool,
    pub movable: bool,
    /// Declared, else the first required string field, else None.
    pub label: Option<String>,
    pub fields: Vec<Field>,
    pub required: Vec<String>,
    pub unique: Vec<String>,
    pub lock: LockRules,
}

/// One bad field of a request body: `field` is the declared name (or the
/// unknown key), `message` a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl RecordType {
    /// The body key's snake_case spelling (`api_endpoint`), also accepted.
    pub fn snake_body_key(&self) -> String {
        names::snake_case(&self.name)
    }

    /// The parent key's snake_case spelling (`column_id`); None under the case.
    pub fn snake_parent_key(&self) -> Option<String> {
        self.parent
            .as_deref()
            .map(|p| format!("{}_id", names::snake_case(p)))
    }

    /// The type's table: its plural.
    pub fn table(&self) -> &str {
        &self.plural
    }

    pub fn is_external(&self) -> bool {
        self.store == Store::External
    }

    /// The `GET /schema` entry: every key present.
    pub fn to_json(&self) -> Value {
        let fields: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.schema.clone()))
            .collect();
        json!({
            "name": self.name,
            "plural": self.plural,
            "table": self.plural,
            "parent": self.parent.as_deref().unwrap_or("Case"),
            "store": self.store.as_str(),
            "ordered": self.ordered,
            "movable": self.movable,
            "label": self.label,
            "fields": fields,
            "required": self.required,
            "unique": self.unique,
            "lock": {
                "lease": self.lock.lease_text,
                "takeover": self.lock.takeover.as_str(),
                "wait": self.lock.wait,
            },
        })
    }
}

impl Schema {
    /// The embedded default. Panics only if the embedded file is broken,
    /// which a unit test rules out.
    pub fn casebook() -> Schema {
        match Schema::parse(CASEBOOK, "casebook.toml") {
            Ok(schema) => schema,
            Err(e) => panic!("the built-in casebook schema is broken:\n{e}"),
        }
    }

    /// Parses and checks a schema file's text; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<Schema, SchemaError> {
        file::parse(text)
            .map(|types| Schema { types })
            .map_err(|problems| SchemaError {
                file: file.to_string(),
                problems,
            })
    }

    /// Reads and parses a schema file; an unreadable file is an error
    /// naming it.
    pub fn load(path: &std::path::Path) -> Result<Schema, SchemaError> {
        let name = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Schema::parse(&text, &name),
            Err(e) => Err(SchemaError {
                file: name,
                problems: vec![format!("can't read it: {e}")],
            }),
        }
    }

    pub fn types(&self) -> &[RecordType] {
        &self.types
    }

    /// By exact type name.
    pub fn get(&self, name: &str) -> Option<&RecordType> {
        self.types.iter().find(|t| t.name == name)
    }

    pub fn by_plural(&self, plural: &str) -> Option<&RecordType> {
        self.types.iter().find(|t| t.plural == plural)
    }

    /// The types whose parent is `parent` (None: the case), in declaration
    /// order.
    pub fn children_of(&self, parent: Option<&str>) -> Vec<&RecordType> {
        self.types
            .iter()
            .filter(|t| t.parent.as_deref() == parent)
            .collect()
    }

    /// Parent first, up to (not including) the case. Empty for an unknown
    /// name.
    pub fn ancestors(&self, name: &str) -> Vec<&RecordType> {
        let mut out: Vec<&RecordType> = Vec::new();
        let mut current = self.get(name).and_then(|t| t.parent.as_deref());
        while let Some(parent) = current {
            // A checked schema has no cycles; the length bound only keeps a
            // hand-built one from looping.
            let Some(record_type) = self.get(parent) else {
                break;
            };
            if out.len() > self.types.len() {
                break;
            }
            out.push(record_type);
            current = record_type.parent.as_deref();
        }
        out
    }

    /// Every type below `name` at any depth, in declaration order.
    pub fn descendants(&self, name: &str) -> Vec<&RecordType> {
        self.types
            .iter()
            .filter(|t| self.ancestors(&t.name).iter().any(|a| a.name == name))
            .collect()
    }

    /// `baton schema print`: a TOML file that parses back to an equal
    /// schema.
    pub fn to_toml(&self) -> String {
        print::to_toml(&self.types)
    }

    /// `GET /schema`: `{"types": [...]}` in declaration order.
    pub fn to_json(&self) -> Value {
        let types: Vec<Value> = self.types.iter().map(RecordType::to_json).collect();
        json!({ "types": types })
    }
}
