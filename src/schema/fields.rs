//! A declared field's compiled JSON Schema, and the checks of request bodies
//! against a type's fields, with messages meant for people.

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

use super::{FieldError, RecordType};

/// What kind of JSON value a field holds: its `type`, or for an enum
/// without one, the kind all its values share (`Mixed` when they differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    String,
    Integer,
    Number,
    Boolean,
    Mixed,
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::String => "string",
            FieldKind::Integer => "integer",
            FieldKind::Number => "number",
            FieldKind::Boolean => "boolean",
            FieldKind::Mixed => "mixed",
        }
    }
}

/// One declared field: its wire name, its JSON Schema as declared, and the
/// validator compiled from it once at load.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub schema: Value,
    kind: FieldKind,
    validator: jsonschema::Validator,
}

/// Two fields are equal when they are declared the same; the validator is
/// derived from the schema.
impl PartialEq for Field {
    fn eq(&self, other: &Field) -> bool {
        self.name == other.name && self.schema == other.schema
    }
}

impl Field {
    /// Compiles `schema` (already checked keyword by keyword) as a 2020-12
    /// schema with format assertion on: 2020-12 treats `format` as an
    /// annotation unless told otherwise, and a date field should refuse
    /// `2026-13-40`. Err: the compiler's message.
    pub(crate) fn compile(name: &str, schema: Value, kind: FieldKind) -> Result<Field, String> {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        Ok(Field {
            name: name.to_string(),
            schema,
            kind,
            validator,
        })
    }

    pub fn kind(&self) -> FieldKind {
        self.kind
    }

    /// The declared `default`, if any.
    pub fn default_value(&self) -> Option<&Value> {
        self.schema.get("default")
    }

    /// The declared `format` (`date`, `date-time`, `email`, `uri`), if any.
    pub fn format(&self) -> Option<&str> {
        self.schema.get("format").and_then(Value::as_str)
    }

    /// The value as it should be stored: JSON Schema counts `2.0` as an
    /// integer, so an integer field keeps it as `2`.
    fn normalized(&self, value: &Value) -> Value {
        if self.kind == FieldKind::Integer {
            if let Some(f) = value.as_f64().filter(|_| value.is_f64()) {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    return Value::from(f as i64);
                }
            }
        }
        value.clone()
    }

    /// Whether a (non-null) value fits the schema.
    pub fn accepts(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Why a value does not fit, as the end of a sentence whose subject is
    /// the field ("must be a string.", "can't be blank."); None when it
    /// fits. When several keywords fail, the most basic one is told.
    pub fn problem(&self, value: &Value) -> Option<String> {
        let mut best: Option<(u8, String)> = None;
        for error in self.validator.iter_errors(value) {
            let (rank, text) = self.describe(error.kind(), value);
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, text));
            }
        }
        best.map(|(_, text)| text)
    }

    fn describe(&self, kind: &ValidationErrorKind, value: &Value) -> (u8, String) {
        let blank = value.as_str().is_some_and(|s| s.trim().is_empty());
        match kind {
            ValidationErrorKind::Type { .. } => (0, self.type_message()),
            ValidationErrorKind::Enum { .. } => (1, self.enum_message()),
            ValidationErrorKind::MinLength { .. } | ValidationErrorKind::Pattern { .. }
                if blank =>
            {
                (2, "can't be blank.".to_string())
            }
            ValidationErrorKind::Format { format } => (3, format_message(format)),
            ValidationErrorKind::MinLength { limit } => (
                4,
                format!("is too short (at least {}).", characters(*limit)),
            ),
            ValidationErrorKind::MaxLength { limit } => {
                (5, format!("is too long (at most {}).", characters(*limit)))
            }
            ValidationErrorKind::Pattern { .. }
            | ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => (6, self.pattern_message()),
            ValidationErrorKind::Minimum { limit } => (7, format!("must be {limit} or more.")),
            ValidationErrorKind::Maximum { limit } => (8, format!("must be {limit} or less.")),
            _ => (9, "is not valid.".to_string()),
        }
    }

    fn type_message(&self) -> String {
        match self.kind {
            FieldKind::String => "must be a string.".to_string(),
            FieldKind::Integer => "must be a whole number.".to_string(),
            FieldKind::Number => "must be a number.".to_string(),
            FieldKind::Boolean => "must be true or false.".to_string(),
            FieldKind::Mixed => self.enum_message(),
        }
    }

    fn enum_message(&self) -> String {
        let options: Vec<String> = self
            .schema
            .get("enum")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(plain).collect())
            .unwrap_or_default();
        format!("must be one of: {}.", options.join(", "))
    }

    fn pattern_message(&self) -> String {
        let pattern = self
            .schema
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or("");
        match self.schema.get("description").and_then(Value::as_str) {
            Some(description) if !description.trim().is_empty() => {
                // The sentence ends with its own full stop, so the
                // description's is dropped inside the parentheses.
                let description = description.trim().trim_end_matches('.');
                format!("must match the pattern {pattern} ({description}).")
            }
            _ => format!("must match the pattern {pattern}."),
        }
    }
}

/// A value as people read it in a list: strings without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn characters(n: u64) -> String {
    if n == 1 {
        "1 character".to_string()
    } else {
        format!("{n} characters")
    }
}

fn format_message(format: &str) -> String {
    match format {
        "date" => "must be a date like 2026-11-25.".to_string(),
        "date-time" => "must be a date and time like 2026-11-25T10:42:00Z.".to_string(),
        "email" => "must be an email address like bob@example.com.".to_string(),
        "uri" => "must be an address like https://example.com/.".to_string(),
        other => format!("must be a valid {other}."),
    }
}

impl RecordType {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// A create body's object (the caller has already taken out `position`
    /// and the parent id key). Null counts as absent.
    /// Ok: every declared field in declaration order, defaults filled in,
    /// optional fields without default as null.
    /// Err: every bad field (declared fields in declaration order, then
    /// unknown keys in the body's order).
    pub fn check_create(
        &self,
        body: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut record = Map::new();
        for field in &self.fields {
            match body.get(&field.name).filter(|v| !v.is_null()) {
                Some(value) => match field.problem(value) {
                    Some(problem) => errors.push(self.field_error(&field.name, &problem)),
                    None => {
                        record.insert(field.name.clone(), field.normalized(value));
                    }
                },
                None if self.required.contains(&field.name) => {
                    errors.push(self.field_error(&field.name, "is required."));
                }
                None => {
                    let value = field.default_value().cloned().unwrap_or(Value::Null);
                    record.insert(field.name.clone(), value);
                }
            }
        }
        self.unknown_keys(body, &mut errors);
        if errors.is_empty() {
            Ok(record)
        } else {
            Err(errors)
        }
    }

    /// An update's object (same preparation); null counts as absent
    /// (unchanged). Ok: only the given fields, in declaration order.
    pub fn check_update(
        &self,
        body: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut changes = Map::new();
        for field in &self.fields {
            let Some(value) = body.get(&field.name).filter(|v| !v.is_null()) else {
                continue;
            };
            match field.problem(value) {
                Some(problem) => errors.push(self.field_error(&field.name, &problem)),
                None => {
                    changes.insert(field.name.clone(), field.normalized(value));
                }
            }
        }
        self.unknown_keys(body, &mut errors);
        if errors.is_empty() {
            Ok(changes)
        } else {
            Err(errors)
        }
    }

    /// Whether a stored value (as JSON) still fits the field's schema: for
    /// start-up checks of schema against data. Null fits an optional field
    /// only; an undeclared field fits nothing.
    pub fn value_fits(&self, field: &str, value: &Value) -> bool {
        let Some(declared) = self.field(field) else {
            return false;
        };
        if value.is_null() {
            return !self.required.iter().any(|r| r == field);
        }
        declared.accepts(value)
    }

    fn field_error(&self, field: &str, problem: &str) -> FieldError {
        FieldError {
            field: field.to_string(),
            message: format!("{}.{field} {problem}", self.body_key),
        }
    }

    fn unknown_keys(&self, body: &Map<String, Value>, errors: &mut Vec<FieldError>) {
        for key in body.keys() {
            if self.field(key).is_some() {
                continue;
            }
            let known = if self.fields.is_empty() {
                "it has no fields".to_string()
            } else {
                let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
                format!("its fields: {}", names.join(", "))
            };
            errors.push(FieldError {
                field: key.clone(),
                message: format!(
                    "{}.{key} is not a field of {} ({known}).",
                    self.body_key, self.name
                ),
            });
        }
    }
}
