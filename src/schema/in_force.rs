//! The schema in force: one per process, set at start (`baton serve
//! --schema FILE`) before anything reads it, the casebook when none is
//! given. Every layer reads it from here, as it read a compiled-in
//! registry before: the routes, the lock engine's kinds, the views.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::{RecordType, Schema};

static IN_FORCE: OnceLock<Schema> = OnceLock::new();

/// Makes `schema` the one in force. A process serves one schema: asking
/// again for the same one is fine, another one is refused.
pub fn install(schema: Schema) -> Result<&'static Schema, String> {
    let wanted = schema.to_json();
    let installed = IN_FORCE.get_or_init(|| schema);
    if installed.to_json() == wanted {
        Ok(installed)
    } else {
        Err(
            "this process already serves another schema; one process serves one schema \
             (start another process for another)"
                .to_owned(),
        )
    }
}

/// The schema in force (the casebook unless another was installed first).
pub fn in_force() -> &'static Schema {
    IN_FORCE.get_or_init(Schema::casebook)
}

impl RecordType {
    /// A stored record's fields as the wire shows them: every declared
    /// field in declaration order (its default, else `null`, where none is
    /// stored), nothing the schema no longer declares.
    pub fn with_every_field(&self, mut stored: Map<String, Value>) -> Map<String, Value> {
        self.fields
            .iter()
            .map(|field| {
                // A field added to the schema after the record was stored
                // reads as its default (a stored null stays null).
                let value = stored
                    .remove(&field.name)
                    .or_else(|| field.default_value().cloned())
                    .unwrap_or(Value::Null);
                (field.name.clone(), value)
            })
            .collect()
    }
}
