//! One field of a schema file: its JSON Schema keywords read one group at a
//! time (the type and enum, the string keywords, the number keywords, the
//! annotations), then checked against the field's kind, then compiled, its
//! default checked against it.

use serde_json::{Map, Number, Value};
use toml::{Table, Value as Toml};

use super::{string, what, Problems, FIELD_TYPES, FORMATS, KEYWORDS};
use crate::schema::fields::{Field, FieldKind};
use crate::schema::names::{or_list, path_key};

/// What a field's keywords said, as they were read.
#[derive(Default)]
struct Keywords {
    /// The JSON Schema to compile, every keyword that was right.
    schema: Map<String, Value>,
    declared_type: Option<FieldKind>,
    enum_items: Option<Vec<Value>>,
    /// `minLength`, `maxLength`.
    lengths: (Option<i64>, Option<i64>),
    /// `minimum`, `maximum`.
    bounds: (Option<f64>, Option<f64>),
}

/// Checks one field's schema keyword by keyword, then compiles it and
/// checks its default against it. None, with the problems told, when it
/// cannot be right.
pub(super) fn read_field(
    path: &str,
    name: &str,
    value: &Toml,
    problems: &mut Problems,
) -> Option<Field> {
    let Some(table) = value.as_table() else {
        problems.add(
            path,
            format!(
                "must be a JSON Schema table, like {{ type = \"string\" }}, not {}",
                what(value)
            ),
        );
        return None;
    };
    let before = problems.count();
    let mut keywords = Keywords::default();
    for (key, value) in table {
        let key_path = format!("{path}.{}", path_key(key));
        match key.as_str() {
            "type" | "enum" => keywords.read_kind(key, &key_path, value, problems),
            "format" | "minLength" | "maxLength" | "pattern" => {
                keywords.read_string_keyword(key, &key_path, value, problems)
            }
            "minimum" | "maximum" => keywords.read_number_keyword(key, &key_path, value, problems),
            "default" | "title" | "description" => {
                keywords.read_annotation(key, &key_path, value, problems)
            }
            _ => problems.add(
                &key_path,
                format!("unknown keyword (expected {})", or_list(KEYWORDS)),
            ),
        }
    }
    let kind = keywords.kind(path, table, problems);
    if let Some(kind) = kind {
        keywords.check_applies(path, kind, problems);
    }
    keywords.check_ranges(path, problems);
    if problems.count() > before {
        return None;
    }
    compile(path, name, table, keywords.schema, kind?, problems)
}

impl Keywords {
    /// `type` and `enum`: what kind of values the field holds.
    fn read_kind(&mut self, key: &str, path: &str, value: &Toml, problems: &mut Problems) {
        if key == "type" {
            match value.as_str() {
                Some(t) if FIELD_TYPES.contains(&t) => {
                    self.declared_type = Some(kind_named(t));
                    self.schema.insert(key.to_owned(), Value::from(t));
                }
                _ => problems.add(
                    path,
                    "must be one of \"string\", \"integer\", \"number\" or \"boolean\" (one type, as a string)",
                ),
            }
            return;
        }
        match value.as_array() {
            Some(items) if !items.is_empty() => {
                let values: Vec<Option<Value>> = items.iter().map(scalar).collect();
                if values.iter().any(Option::is_none) {
                    problems.add(path, "its values must be strings, numbers or booleans");
                    return;
                }
                let values: Vec<Value> = values.into_iter().flatten().collect();
                for (i, v) in values.iter().enumerate() {
                    if values[..i].contains(v) {
                        problems.add(path, format!("{v} is listed twice"));
                    }
                }
                self.schema
                    .insert(key.to_owned(), Value::Array(values.clone()));
                self.enum_items = Some(values);
            }
            Some(_) => problems.add(path, "must list at least one value"),
            None => problems.add(
                path,
                format!(
                    "must be an array of values, like [\"draft\", \"done\"], not {}",
                    what(value)
                ),
            ),
        }
    }

    /// `format`, `minLength`, `maxLength` and `pattern`.
    fn read_string_keyword(
        &mut self,
        key: &str,
        path: &str,
        value: &Toml,
        problems: &mut Problems,
    ) {
        match key {
            "format" => match value.as_str() {
                Some(f) if FORMATS.contains(&f) => {
                    self.schema.insert(key.to_owned(), Value::from(f));
                }
                _ => problems.add(
                    path,
                    "must be one of \"date\", \"date-time\", \"email\" or \"uri\"",
                ),
            },
            "pattern" => {
                if let Some(p) = string(path, value, problems) {
                    self.schema.insert(key.to_owned(), Value::String(p));
                }
            }
            _ => match value {
                Toml::Integer(n) if *n >= 0 => {
                    if key == "minLength" {
                        self.lengths.0 = Some(*n);
                    } else {
                        self.lengths.1 = Some(*n);
                    }
                    self.schema.insert(key.to_owned(), Value::from(*n));
                }
                _ => problems.add(path, "must be a whole number, 0 or more"),
            },
        }
    }

    /// `minimum` and `maximum`.
    fn read_number_keyword(
        &mut self,
        key: &str,
        path: &str,
        value: &Toml,
        problems: &mut Problems,
    ) {
        match scalar(value).filter(Value::is_number) {
            Some(number) => {
                let n = number.as_f64();
                if key == "minimum" {
                    self.bounds.0 = n;
                } else {
                    self.bounds.1 = n;
                }
                self.schema.insert(key.to_owned(), number);
            }
            None => problems.add(path, format!("must be a number, not {}", what(value))),
        }
    }

    /// `default`, `title` and `description`.
    fn read_annotation(&mut self, key: &str, path: &str, value: &Toml, problems: &mut Problems) {
        if key != "default" {
            if let Some(text) = string(path, value, problems) {
                self.schema.insert(key.to_owned(), Value::String(text));
            }
            return;
        }
        match scalar(value) {
            Some(v) => {
                self.schema.insert(key.to_owned(), v);
            }
            None if matches!(value, Toml::Datetime(_)) => problems.add(
                path,
                "write a date as a string in quotes, like \"2026-11-25\"",
            ),
            None => problems.add(
                path,
                format!("must be a string, number or boolean, not {}", what(value)),
            ),
        }
    }

    /// The field's kind: its `type`, else what its `enum` values are; an
    /// enum value of another type than the declared one is a problem.
    fn kind(&self, path: &str, table: &Table, problems: &mut Problems) -> Option<FieldKind> {
        if let (Some(declared), Some(items)) = (self.declared_type, &self.enum_items) {
            for item in items.iter().filter(|v| !fits_kind(v, declared)) {
                problems.add(
                    &format!("{path}.enum"),
                    format!("{item} is not of the field's type, {}", declared.as_str()),
                );
            }
        }
        match (self.declared_type, &self.enum_items) {
            (Some(kind), _) => Some(kind),
            (None, Some(items)) => {
                let first = kind_of_value(&items[0]);
                let all_numbers = items.iter().all(Value::is_number);
                Some(if items.iter().all(|v| kind_of_value(v) == first) {
                    first
                } else if all_numbers {
                    FieldKind::Number
                } else {
                    FieldKind::Mixed
                })
            }
            (None, None) => {
                if !table.contains_key("type") && !table.contains_key("enum") {
                    problems.add(
                        path,
                        "a field needs a type (string, integer, number or boolean) or an enum",
                    );
                }
                None
            }
        }
    }

    /// The string keywords on strings only, the number keywords on numbers.
    fn check_applies(&self, path: &str, kind: FieldKind, problems: &mut Problems) {
        if self.schema.contains_key("format") && self.declared_type != Some(FieldKind::String) {
            problems.add(
                &format!("{path}.format"),
                "applies only to a field of type = \"string\"",
            );
        }
        for keyword in ["minLength", "maxLength", "pattern"] {
            if self.schema.contains_key(keyword) && kind != FieldKind::String {
                problems.add(
                    &format!("{path}.{keyword}"),
                    format!(
                        "applies only to strings, and this field is {}",
                        kind.as_str()
                    ),
                );
            }
        }
        for keyword in ["minimum", "maximum"] {
            if self.schema.contains_key(keyword)
                && !matches!(kind, FieldKind::Integer | FieldKind::Number)
            {
                problems.add(
                    &format!("{path}.{keyword}"),
                    format!(
                        "applies only to numbers, and this field is {}",
                        kind.as_str()
                    ),
                );
            }
        }
    }

    /// A least value above a greatest one, for lengths and for numbers.
    fn check_ranges(&self, path: &str, problems: &mut Problems) {
        if let (Some(min), Some(max)) = self.lengths {
            if min > max {
                problems.add(
                    &format!("{path}.minLength"),
                    format!("{min} is more than maxLength, {max}"),
                );
            }
        }
        if let (Some(min), Some(max)) = self.bounds {
            if min > max {
                problems.add(
                    &format!("{path}.minimum"),
                    format!("{min} is more than maximum, {max}"),
                );
            }
        }
    }
}

/// Compiles the checked keywords, and checks the default against them.
fn compile(
    path: &str,
    name: &str,
    table: &Table,
    schema: Map<String, Value>,
    kind: FieldKind,
    problems: &mut Problems,
) -> Option<Field> {
    let field = match Field::compile(name, Value::Object(schema), kind) {
        Ok(field) => field,
        Err(message) => {
            // With every keyword checked, the pattern is the only thing the
            // compiler can still refuse.
            match table.get("pattern").and_then(Toml::as_str) {
                Some(pattern) => problems.add(
                    &format!("{path}.pattern"),
                    format!("{pattern:?} is not a valid regular expression"),
                ),
                None => problems.add(path, format!("doesn't compile: {message}")),
            }
            return None;
        }
    };
    if let Some(default) = field.default_value() {
        if let Some(problem) = field.problem(default) {
            problems.add(&format!("{path}.default"), format!("the default {problem}"));
            return None;
        }
    }
    Some(field)
}

/// A TOML scalar as JSON; None for anything a field's values can't be.
fn scalar(value: &Toml) -> Option<Value> {
    match value {
        Toml::String(s) => Some(Value::String(s.clone())),
        Toml::Integer(i) => Some(Value::from(*i)),
        Toml::Float(f) => Number::from_f64(*f).map(Value::Number),
        Toml::Boolean(b) => Some(Value::Bool(*b)),
        _ => None,
    }
}

fn kind_named(name: &str) -> FieldKind {
    match name {
        "string" => FieldKind::String,
        "integer" => FieldKind::Integer,
        "number" => FieldKind::Number,
        _ => FieldKind::Boolean,
    }
}

fn kind_of_value(value: &Value) -> FieldKind {
    match value {
        Value::String(_) => FieldKind::String,
        Value::Bool(_) => FieldKind::Boolean,
        Value::Number(n) if n.is_i64() || n.is_u64() => FieldKind::Integer,
        Value::Number(_) => FieldKind::Number,
        _ => FieldKind::Mixed,
    }
}

/// Whether an enum value fits a declared type (JSON Schema counts 2.0 as
/// an integer).
fn fits_kind(value: &Value, kind: FieldKind) -> bool {
    match kind {
        FieldKind::String => value.is_string(),
        FieldKind::Boolean => value.is_boolean(),
        FieldKind::Number => value.is_number(),
        FieldKind::Integer => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        FieldKind::Mixed => true,
    }
}
