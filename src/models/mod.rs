//! Records, their queries, and their JSON. Every model's JSON carries `type`,
//! `table` and `param` (its id as a string) so clients can key anything by
//! `${type}/${param}`.

pub mod card;
pub mod case;
pub mod edgenote;
pub mod lock;
pub mod lock_event;
pub mod membership;
pub mod page;
pub mod presence;
pub mod user;

pub use card::Card;
pub use case::Case;
pub use edgenote::Edgenote;
pub use lock::Lock;
pub use lock_event::{LockAction, LockEvent};
pub use membership::Membership;
pub use page::Page;
pub use presence::Presence;
pub use user::{User, UserRef};

use serde_json::{json, Value};

/// `{type, table, param, id}`: what identifies a record, even a destroyed one.
pub fn identity(type_name: &str, table: &str, id: i64) -> Value {
    json!({ "type": type_name, "table": table, "param": id.to_string(), "id": id })
}

/// A record's JSON: its identity followed by its own fields.
pub fn record_json(type_name: &str, table: &str, id: i64, fields: Value) -> Value {
    let mut out = identity(type_name, table, id);
    if let (Some(out), Value::Object(fields)) = (out.as_object_mut(), fields) {
        out.extend(fields);
    }
    out
}
