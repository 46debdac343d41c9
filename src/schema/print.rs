//! The schema as a TOML file (`baton schema print`), in the shape people
//! write: one `[types.Name]` table per type, one inline table per field.
//! Derived values (parent, plural, label) are written out so the reader
//! sees what is in force; the output parses back to an equal schema.

use std::fmt::Write as _;

use serde_json::Value;

use super::names::path_key;
use super::{RecordType, Store, TakeoverRule};

pub(super) fn to_toml(types: &[RecordType]) -> String {
    let mut out = String::from(
        "# The schema in force, as `baton schema print` writes it: each [types.Name]\n\
         # is a record type; parent, plural and label are shown even where they are\n\
         # the defaults.\n",
    );
    for t in types {
        // Writing to a String cannot fail.
        let _ = write_type(&mut out, t);
    }
    out
}

fn write_type(out: &mut String, t: &RecordType) -> std::fmt::Result {
    writeln!(out)?;
    writeln!(out, "[types.{}]", path_key(&t.name))?;
    writeln!(
        out,
        "parent = {}",
        string(t.parent.as_deref().unwrap_or("Case"))
    )?;
    writeln!(out, "plural = {}", string(&t.plural))?;
    if t.store == Store::External {
        writeln!(out, "store = \"external\"")?;
    } else {
        if t.ordered {
            writeln!(out, "ordered = true")?;
        }
        if t.movable {
            writeln!(out, "movable = true")?;
        }
        for field in &t.fields {
            writeln!(
                out,
                "fields.{} = {}",
                path_key(&field.name),
                inline(&field.schema)
            )?;
        }
        if !t.required.is_empty() {
            writeln!(out, "required = {}", list(&t.required))?;
        }
        if !t.unique.is_empty() {
            writeln!(out, "unique = {}", list(&t.unique))?;
        }
        if let Some(label) = &t.label {
            writeln!(out, "label = {}", string(label))?;
        }
    }
    if let Some(lease) = &t.lock.lease_text {
        writeln!(out, "lock.lease = {}", string(lease))?;
    }
    if t.lock.takeover != TakeoverRule::Editor {
        writeln!(out, "lock.takeover = {}", string(t.lock.takeover.as_str()))?;
    }
    if !t.lock.wait {
        writeln!(out, "lock.wait = false")?;
    }
    Ok(())
}

/// A TOML basic string on one line: toml's own writer would pick a
/// multi-line string for a value holding a newline, which reads badly
/// inside an inline table.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", items.join(", "))
}

/// A field's JSON Schema as a one-line TOML inline table, keys in declared
/// order. Schemas come from TOML, so every value has a TOML form.
fn inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} = {}", path_key(k), inline(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(s) => string(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => toml::Value::Float(f).to_string(),
            (None, None) => n.to_string(),
        },
        // Not reachable from a parsed file; an empty string keeps the
        // output well-formed if a hand-built schema has one.
        Value::Null => string(""),
    }
}
