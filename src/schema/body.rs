//! Reading a record's request body as its type declares it: the fields
//! (validated by their JSON Schemas), an ordered type's `position`, and a
//! movable type's new parent. What comes out is a [`RecordInput`], the
//! value the lock engine writes; what cannot be right is a [`BodyError`]
//! naming every problem at once.

use serde_json::{Map, Value};

use super::{FieldError, RecordType};

/// The largest `position` a request may give: far below `i32::MAX`, so
/// that moving siblings up to make room never runs out of numbers.
pub const MAX_POSITION: i32 = 1_000_000_000;

/// A create or an update of one record, validated against its type.
#[derive(Clone, Debug)]
pub struct RecordInput {
    /// The declared fields given, each valid.
    pub fields: Map<String, Value>,
    /// Where among its siblings (an ordered type only).
    pub position: Option<i32>,
    /// A move: the new parent's id (a movable type's update only).
    pub parent_id: Option<i64>,
}

impl RecordInput {
    /// Only fields: no position and no move.
    pub fn is_fields_only(&self) -> bool {
        self.position.is_none() && self.parent_id.is_none()
    }
}

/// Why a body cannot be right.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Not `{"<bodyKey>": {…}}`.
    #[error("{0}")]
    Shape(String),
    /// Fields that are wrong, every one of them.
    #[error("{}", .0.first().map_or("Invalid fields.", |f| f.message.as_str()))]
    Fields(Vec<FieldError>),
}

/// `{"<bodyKey>": {…}}` read as `ty` declares it, for a create (`creating`:
/// required fields must be there, no move) or an update.
pub fn read(ty: &RecordType, body: Value, creating: bool) -> Result<RecordInput, BodyError> {
    let mut map = inner_object(ty, body)?;
    let mut problems = Vec::new();
    let position = take_position(ty, &mut map, &mut problems);
    let parent_id = if creating {
        None
    } else {
        take_parent(ty, &mut map, &mut problems)
    };
    let checked = if creating {
        ty.check_create(&map)
    } else {
        ty.check_update(&map)
    };
    let fields = match checked {
        Ok(fields) => fields,
        Err(bad) => {
            problems.extend(bad);
            Map::new()
        }
    };
    if !problems.is_empty() {
        return Err(BodyError::Fields(problems));
    }
    Ok(RecordInput {
        fields,
        position,
        parent_id,
    })
}

/// `{"<bodyKey>": {…}}` → the object inside (the type's snake_case name is
/// accepted too). Every other key is refused.
fn inner_object(ty: &RecordType, body: Value) -> Result<Map<String, Value>, BodyError> {
    let example = format!("{{\"{}\": {{…}}}}", ty.body_key);
    let Value::Object(mut outer) = body else {
        return Err(BodyError::Shape(format!(
            "The body must be a JSON object like {example}."
        )));
    };
    let snake = ty.snake_body_key();
    let inner = outer.remove(&ty.body_key).or_else(|| outer.remove(&snake));
    if let Some(extra) = outer.keys().next() {
        return Err(BodyError::Shape(format!(
            "{extra} is not part of this request; send {example}."
        )));
    }
    match inner {
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(BodyError::Shape(format!(
            "{} must be an object, like {example}.",
            ty.body_key
        ))),
        None => Err(BodyError::Shape(format!(
            "{} is required: send {example}.",
            ty.body_key
        ))),
    }
}

/// `position`: a whole number from 0 (`3.0` counts), `null` as absent.
fn take_position(
    ty: &RecordType,
    map: &mut Map<String, Value>,
    problems: &mut Vec<FieldError>,
) -> Option<i32> {
    let value = map.remove("position")?;
    let field = |message: String| FieldError {
        field: "position".into(),
        message,
    };
    if !ty.ordered {
        problems.push(field(format!(
            "{}.position is not a field of {}: its records are not ordered.",
            ty.body_key, ty.name
        )));
        return None;
    }
    match value {
        Value::Null => None,
        Value::Number(n) => {
            let whole = n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map(|f| f as i64)
            });
            match whole.and_then(|w| i32::try_from(w).ok()) {
                Some(p) if (0..=MAX_POSITION).contains(&p) => Some(p),
                _ => {
                    problems.push(field(format!(
                        "{}.position must be a whole number from 0 to {MAX_POSITION}.",
                        ty.body_key
                    )));
                    None
                }
            }
        }
        _ => {
            problems.push(field(format!(
                "{}.position must be a whole number, 0 or more.",
                ty.body_key
            )));
            None
        }
    }
}

/// The new parent's id of a move (`<parent>Id`, or its snake_case), as a
/// number or a string of 1 to 18 digits.
fn take_parent(
    ty: &RecordType,
    map: &mut Map<String, Value>,
    problems: &mut Vec<FieldError>,
) -> Option<i64> {
    // Below the case there is nothing to move to: `caseId` is left in the
    // body, an unknown key.
    let snake = ty.snake_parent_key()?;
    let value = map.remove(&ty.parent_key).or_else(|| map.remove(&snake))?;
    if value.is_null() {
        // `null` is "not given": no move.
        return None;
    }
    let field = |message: String| FieldError {
        field: ty.parent_key.clone(),
        message,
    };
    if !ty.movable {
        problems.push(field(format!(
            "{}.{} cannot change: {} records do not move (the type is not movable).",
            ty.body_key, ty.parent_key, ty.name
        )));
        return None;
    }
    let id = match &value {
        Value::String(s) => digits(s),
        Value::Number(n) => n.as_i64().filter(|id| *id >= 0),
        _ => None,
    };
    if id.is_none() {
        let parent = ty.parent.as_deref().unwrap_or("parent");
        problems.push(field(format!(
            "{}.{} must be a {}'s id, like \"12\"; got {value}.",
            ty.body_key,
            ty.parent_key,
            parent.to_lowercase()
        )));
    }
    id
}

/// 1 to 18 digits: an id (never overflows an i64).
fn digits(s: &str) -> Option<i64> {
    let ok = (1..=18).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| s.parse().ok()).flatten()
}
