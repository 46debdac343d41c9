//! Reading and checking a schema file.
//!
//! The file is walked as a `toml::Table` by hand rather than deserialized
//! with `deny_unknown_fields`: serde stops at the first error, and a file
//! that cannot be right should be reported whole, every problem with its
//! dotted path (`types.Ticket.lock.leas`), in one go.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Number, Value};
use toml::{Table, Value as Toml};

use super::fields::{Field, FieldKind};
use super::names::{self, and_list, or_list, path_key};
use super::{LockRules, RecordType, Store, TakeoverRule, RESERVED_PLURALS, TAKEN_NAMES};

const TYPE_KEYS: &[&str] = &[
    "parent", "plural", "ordered", "movable", "fields", "required", "unique", "label", "store",
    "lock",
];
const LOCK_KEYS: &[&str] = &["lease", "takeover", "wait"];
const KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
    "title",
    "description",
];
const FIELD_TYPES: &[&str] = &["string", "integer", "number", "boolean"];
const FORMATS: &[&str] = &["date", "date-time", "email", "uri"];
/// Keys every stored record's JSON has besides its fields (the parent's id
/// key is added per type).
const RECORD_KEYS: &[&str] = &[
    "id",
    "type",
    "table",
    "param",
    "caseId",
    "position",
    "version",
    "createdAt",
    "updatedAt",
];
/// Keys of `GET /cases/:slug` beside the nested top types.
const CASE_KEYS: &[&str] = &[
    "id",
    "type",
    "table",
    "param",
    "slug",
    "title",
    "version",
    "createdAt",
    "updatedAt",
    "activeLocks",
    "waiters",
    "onlineUsers",
    "role",
];

/// Problem lines, without the file name. Each is tagged with the type it
/// is about (0 for the top level) so the lines come out type by type,
/// whichever pass found them.
#[derive(Default)]
struct Problems {
    lines: Vec<(usize, String)>,
    about: usize,
}

impl Problems {
    fn add(&mut self, path: &str, message: impl AsRef<str>) {
        self.lines
            .push((self.about, format!("{path}: {}", message.as_ref())));
    }

    /// The following problems are about the `i`th type.
    fn about_type(&mut self, i: usize) {
        self.about = i + 1;
    }

    fn count(&self) -> usize {
        self.lines.len()
    }

    fn into_lines(mut self) -> Vec<String> {
        self.lines.sort_by_key(|(about, _)| *about);
        self.lines.into_iter().map(|(_, line)| line).collect()
    }
}

/// A type as read, before the checks across types. Options are None when
/// the key is absent (or unusable, with a problem already told).
struct RawType {
    name: String,
    path: String,
    parent: Option<String>,
    plural: Option<String>,
    ordered: Option<bool>,
    movable: Option<bool>,
    fields: Option<Vec<RawField>>,
    required: Option<Vec<String>>,
    unique: Option<Vec<String>>,
    label: Option<String>,
    store: Option<Store>,
    lock: LockRules,
}

/// A declared field; `compiled` is None when its schema has problems, so
/// the checks that need its kind pass over it instead of piling up.
struct RawField {
    name: String,
    compiled: Option<Field>,
}

/// The names derived from a raw type, for the checks across types.
struct Derived {
    parent: Option<String>,
    plural: String,
    plural_declared: bool,
    body_key: String,
    nest_key: String,
    parent_key: String,
    store: Store,
}

pub(super) fn parse(text: &str) -> Result<Vec<RecordType>, Vec<String>> {
    let table: Table = text.parse().map_err(|e| vec![syntax_problem(text, &e)])?;
    let mut problems = Problems::default();
    let mut types: Option<&Table> = None;
    for (key, value) in &table {
        if key == "types" {
            match value.as_table() {
                Some(t) => types = Some(t),
                None => problems.add("types", "must be a table of types, like [types.Ticket]"),
            }
        } else {
            problems.add(&path_key(key), "unknown key (expected types)");
        }
    }
    let raws: Vec<RawType> = types
        .map(|t| {
            t.iter()
                .enumerate()
                .map(|(i, (name, value))| {
                    problems.about_type(i);
                    read_type(name, value, &mut problems)
                })
                .collect()
        })
        .unwrap_or_default();
    if raws.is_empty() && (types.is_some() || !table.contains_key("types")) {
        problems.about = 0;
        problems.add(
            "types",
            "no types declared (declare at least one, like [types.Ticket])",
        );
    }
    let derived: Vec<Derived> = raws.iter().map(derive).collect();
    check_across(&raws, &derived, &mut problems);
    check_cycles(&raws, &mut problems);
    if problems.count() > 0 {
        return Err(problems.into_lines());
    }
    Ok(raws.into_iter().zip(derived).map(build).collect())
}

/// A TOML syntax error: its line and column, and the parser's message.
fn syntax_problem(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim();
    match error.span() {
        Some(span) => {
            // The span is in bytes; step back to a character boundary so
            // slicing can't panic whatever the parser reports.
            let start = (0..=span.start.min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let before = &text[..start];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            match text
                .lines()
                .nth(line - 1)
                .map(str::trim)
                .filter(|l| !l.is_empty())
            {
                Some(source) => {
                    format!("line {line}, column {column}: {message} (in `{source}`)")
                }
                None => format!("line {line}, column {column}: {message}"),
            }
        }
        None => message.to_string(),
    }
}

/// "a string", "an integer", … for "must be …, not …" messages.
fn what(value: &Toml) -> &'static str {
    match value {
        Toml::String(_) => "a string",
        Toml::Integer(_) => "an integer",
        Toml::Float(_) => "a number",
        Toml::Boolean(_) => "true or false",
        Toml::Datetime(_) => "a date",
        Toml::Array(_) => "an array",
        Toml::Table(_) => "a table",
    }
}

fn read_type(name: &str, value: &Toml, problems: &mut Problems) -> RawType {
    let path = format!("types.{}", path_key(name));
    if !names::is_pascal_case(name) {
        problems.add(
            &path,
            "a type name is PascalCase: a capital letter, then letters and digits (like BookComponent)",
        );
    } else if TAKEN_NAMES.contains(&name) {
        problems.add(
            &path,
            format!(
                "the name {name} is taken by baton's own records ({} are)",
                and_list(TAKEN_NAMES)
            ),
        );
    }
    let mut raw = RawType {
        name: name.to_string(),
        path: path.clone(),
        parent: None,
        plural: None,
        ordered: None,
        movable: None,
        fields: None,
        required: None,
        unique: None,
        label: None,
        store: None,
        lock: LockRules::default(),
    };
    let Some(table) = value.as_table() else {
        problems.add(
            &path,
            format!("must be a table of the type's keys, not {}", what(value)),
        );
        return raw;
    };
    for (key, value) in table {
        let key_path = format!("{path}.{}", path_key(key));
        match key.as_str() {
            "parent" => raw.parent = string(&key_path, value, problems),
            "plural" => {
                raw.plural = string(&key_path, value, problems);
                if let Some(plural) = &raw.plural {
                    if !names::is_plural_name(plural) {
                        problems.add(
                            &key_path,
                            format!(
                                "{plural:?} must be lower case: a letter, then letters, digits or _ (like book_components)"
                            ),
                        );
                    }
                }
            }
            "ordered" => raw.ordered = boolean(&key_path, value, problems),
            "movable" => raw.movable = boolean(&key_path, value, problems),
            "fields" => raw.fields = Some(read_fields(&key_path, value, problems)),
            "required" => raw.required = string_list(&key_path, value, problems),
            "unique" => raw.unique = string_list(&key_path, value, problems),
            "label" => raw.label = string(&key_path, value, problems),
            "store" => {
                raw.store = match value.as_str() {
                    Some("baton") => Some(Store::Baton),
                    Some("external") => Some(Store::External),
                    _ => {
                        problems.add(&key_path, "must be \"baton\" or \"external\"");
                        None
                    }
                }
            }
            "lock" => raw.lock = read_lock(&key_path, value, problems),
            _ => problems.add(
                &key_path,
                format!("unknown key (expected {})", or_list(TYPE_KEYS)),
            ),
        }
    }
    raw
}

fn string(path: &str, value: &Toml, problems: &mut Problems) -> Option<String> {
    match value {
        Toml::String(s) => Some(s.clone()),
        other => {
            problems.add(path, format!("must be a string, not {}", what(other)));
            None
        }
    }
}

fn boolean(path: &str, value: &Toml, problems: &mut Problems) -> Option<bool> {
    match value {
        Toml::Boolean(b) => Some(*b),
        other => {
            problems.add(path, format!("must be true or false, not {}", what(other)));
            None
        }
    }
}

fn string_list(path: &str, value: &Toml, problems: &mut Problems) -> Option<Vec<String>> {
    let items = value
        .as_array()
        .filter(|items| items.iter().all(Toml::is_str));
    match items {
        Some(items) => Some(
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        ),
        None => {
            problems.add(path, "must be an array of field names, like [\"title\"]");
            None
        }
    }
}

fn read_lock(path: &str, value: &Toml, problems: &mut Problems) -> LockRules {
    let mut lock = LockRules::default();
    let Some(table) = value.as_table() else {
        problems.add(
            path,
            format!(
                "must be a table (lock.lease, lock.takeover, lock.wait), not {}",
                what(value)
            ),
        );
        return lock;
    };
    for (key, value) in table {
        let key_path = format!("{path}.{}", path_key(key));
        match key.as_str() {
            "lease" => {
                let Some(text) = string(&key_path, value, problems) else {
                    continue;
                };
                match humantime::parse_duration(&text) {
                    Ok(d) if d.is_zero() => problems.add(&key_path, "must be more than zero"),
                    Ok(d) => {
                        lock.lease = Some(d);
                        lock.lease_text = Some(text);
                    }
                    Err(_) => problems.add(
                        &key_path,
                        format!("{text:?} is not a duration (like \"90s\", \"2m\" or \"1h\")"),
                    ),
                }
            }
            "takeover" => match value.as_str() {
                Some("editor") => lock.takeover = TakeoverRule::Editor,
                Some("manager") => lock.takeover = TakeoverRule::Manager,
                Some("none") => lock.takeover = TakeoverRule::None,
                _ => problems.add(&key_path, "must be \"editor\", \"manager\" or \"none\""),
            },
            "wait" => {
                if let Some(wait) = boolean(&key_path, value, problems) {
                    lock.wait = wait;
                }
            }
            _ => problems.add(
                &key_path,
                format!("unknown key (expected {})", or_list(LOCK_KEYS)),
            ),
        }
    }
    lock
}

fn read_fields(path: &str, value: &Toml, problems: &mut Problems) -> Vec<RawField> {
    let Some(table) = value.as_table() else {
        problems.add(
            path,
            format!(
                "must be a table of fields (fields.title = {{ type = \"string\" }}), not {}",
                what(value)
            ),
        );
        return Vec::new();
    };
    table
        .iter()
        .map(|(name, value)| RawField {
            name: name.clone(),
            compiled: read_field(&format!("{path}.{}", path_key(name)), name, value, problems),
        })
        .collect()
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

/// Checks one field's schema keyword by keyword, then compiles it and
/// checks its default against it.
fn read_field(path: &str, name: &str, value: &Toml, problems: &mut Problems) -> Option<Field> {
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
    let mut schema = Map::new();
    let mut declared_type: Option<FieldKind> = None;
    let mut enum_items: Option<Vec<Value>> = None;
    let mut lengths: (Option<i64>, Option<i64>) = (None, None);
    let mut bounds: (Option<f64>, Option<f64>) = (None, None);
    for (key, value) in table {
        let key_path = format!("{path}.{}", path_key(key));
        match key.as_str() {
            "type" => match value.as_str() {
                Some(t) if FIELD_TYPES.contains(&t) => {
                    declared_type = Some(kind_named(t));
                    schema.insert(key.clone(), Value::from(t));
                }
                _ => problems.add(
                    &key_path,
                    "must be one of \"string\", \"integer\", \"number\" or \"boolean\" (one type, as a string)",
                ),
            },
            "enum" => match value.as_array() {
                Some(items) if !items.is_empty() => {
                    let values: Vec<Option<Value>> = items.iter().map(scalar).collect();
                    if values.iter().any(Option::is_none) {
                        problems.add(&key_path, "its values must be strings, numbers or booleans");
                        continue;
                    }
                    let values: Vec<Value> = values.into_iter().flatten().collect();
                    for (i, v) in values.iter().enumerate() {
                        if values[..i].contains(v) {
                            problems.add(&key_path, format!("{v} is listed twice"));
                        }
                    }
                    schema.insert(key.clone(), Value::Array(values.clone()));
                    enum_items = Some(values);
                }
                Some(_) => problems.add(&key_path, "must list at least one value"),
                None => problems.add(
                    &key_path,
                    format!(
                        "must be an array of values, like [\"draft\", \"done\"], not {}",
                        what(value)
                    ),
                ),
            },
            "format" => match value.as_str() {
                Some(f) if FORMATS.contains(&f) => {
                    schema.insert(key.clone(), Value::from(f));
                }
                _ => problems.add(
                    &key_path,
                    "must be one of \"date\", \"date-time\", \"email\" or \"uri\"",
                ),
            },
            "minLength" | "maxLength" => match value {
                Toml::Integer(n) if *n >= 0 => {
                    if key == "minLength" {
                        lengths.0 = Some(*n);
                    } else {
                        lengths.1 = Some(*n);
                    }
                    schema.insert(key.clone(), Value::from(*n));
                }
                _ => problems.add(&key_path, "must be a whole number, 0 or more"),
            },
            "pattern" => {
                if let Some(p) = string(&key_path, value, problems) {
                    schema.insert(key.clone(), Value::String(p));
                }
            }
            "minimum" | "maximum" => match scalar(value).filter(Value::is_number) {
                Some(number) => {
                    let n = number.as_f64();
                    if key == "minimum" {
                        bounds.0 = n;
                    } else {
                        bounds.1 = n;
                    }
                    schema.insert(key.clone(), number);
                }
                None => problems.add(&key_path, format!("must be a number, not {}", what(value))),
            },
            "default" => match scalar(value) {
                Some(v) => {
                    schema.insert(key.clone(), v);
                }
                None if matches!(value, Toml::Datetime(_)) => problems.add(
                    &key_path,
                    "write a date as a string in quotes, like \"2026-11-25\"",
                ),
                None => problems.add(
                    &key_path,
                    format!("must be a string, number or boolean, not {}", what(value)),
                ),
            },
            "title" | "description" => {
                if let Some(text) = string(&key_path, value, problems) {
                    schema.insert(key.clone(), Value::String(text));
                }
            }
            _ => problems.add(
                &key_path,
                format!("unknown keyword (expected {})", or_list(KEYWORDS)),
            ),
        }
    }

    let kind = match (declared_type, &enum_items) {
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
    };
    if let (Some(declared), Some(items)) = (declared_type, &enum_items) {
        for item in items.iter().filter(|v| !fits_kind(v, declared)) {
            problems.add(
                &format!("{path}.enum"),
                format!("{item} is not of the field's type, {}", declared.as_str()),
            );
        }
    }
    if let Some(kind) = kind {
        if schema.contains_key("format") && declared_type != Some(FieldKind::String) {
            problems.add(
                &format!("{path}.format"),
                "applies only to a field of type = \"string\"",
            );
        }
        for keyword in ["minLength", "maxLength", "pattern"] {
            if schema.contains_key(keyword) && kind != FieldKind::String {
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
            if schema.contains_key(keyword)
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
    if let (Some(min), Some(max)) = lengths {
        if min > max {
            problems.add(
                &format!("{path}.minLength"),
                format!("{min} is more than maxLength, {max}"),
            );
        }
    }
    if let (Some(min), Some(max)) = bounds {
        if min > max {
            problems.add(
                &format!("{path}.minimum"),
                format!("{min} is more than maximum, {max}"),
            );
        }
    }
    if problems.count() > before {
        return None;
    }
    let kind = kind?;

    let field = match Field::compile(name, Value::Object(schema), kind) {
        Ok(field) => field,
        Err(message) => {
            // With every keyword checked above, the pattern is the only
            // thing the compiler can still refuse.
            match schema_pattern(table) {
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

fn schema_pattern(table: &Table) -> Option<&str> {
    table.get("pattern").and_then(Toml::as_str)
}

fn derive(raw: &RawType) -> Derived {
    let snake = names::snake_case(&raw.name);
    let plural = raw.plural.clone().unwrap_or_else(|| names::plural(&snake));
    let parent = raw.parent.clone().filter(|p| p != "Case");
    Derived {
        parent_key: names::parent_key(parent.as_deref()),
        parent,
        nest_key: names::camel_case(&plural),
        plural_declared: raw.plural.is_some(),
        plural,
        body_key: names::camel_case(&snake),
        store: raw.store.unwrap_or(Store::Baton),
    }
}

fn check_across(raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let index: HashMap<&str, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let declared: Vec<&str> = raws.iter().map(|r| r.name.as_str()).collect();

    for (i, (raw, d)) in raws.iter().zip(derived).enumerate() {
        problems.about_type(i);
        let path = &raw.path;

        if d.store == Store::External {
            let given = [
                ("fields", raw.fields.is_some()),
                ("required", raw.required.is_some()),
                ("unique", raw.unique.is_some()),
                ("label", raw.label.is_some()),
                ("ordered", raw.ordered.is_some()),
                ("movable", raw.movable.is_some()),
            ];
            for (key, _) in given.iter().filter(|(_, given)| *given) {
                problems.add(
                    &format!("{path}.{key}"),
                    "not allowed on an external type (its records live in your database; baton only locks them)",
                );
            }
            if let Some(parent) = &d.parent {
                problems.add(
                    &format!("{path}.parent"),
                    format!("an external type's parent is the case, not {parent} (write \"Case\" or leave parent out)"),
                );
            }
        }

        if let Some(parent) = &d.parent {
            match index.get(parent.as_str()) {
                None => problems.add(
                    &format!("{path}.parent"),
                    format!(
                        "no type named {parent} is declared (a parent is \"Case\" or one of: {})",
                        declared.join(", ")
                    ),
                ),
                Some(&p) if derived[p].store == Store::External && d.store == Store::Baton => {
                    problems.add(
                        &format!("{path}.parent"),
                        format!("{parent} is an external type, so it can't have children"),
                    )
                }
                Some(_) => {}
            }
        }

        if d.store == Store::Baton && raw.movable == Some(true) && d.parent.is_none() {
            problems.add(
                &format!("{path}.movable"),
                "a type under the case can't be movable (there is no other parent to move it to)",
            );
        }

        check_plural(i, raws, derived, problems);

        if d.store == Store::Baton {
            check_field_names(i, raws, derived, problems);
            check_field_lists(raw, problems);
        }
    }
}

fn check_plural(i: usize, raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let (raw, d) = (&raws[i], &derived[i]);
    let path = format!("{}.plural", raw.path);
    let whose = if d.plural_declared {
        String::new()
    } else {
        format!(
            " (the default plural of {}; declare another with plural = \"…\")",
            raw.name
        )
    };
    // A declared plural of the wrong shape is already told; a default one
    // from a wrong or taken name would only repeat the name's problem.
    let name_told = !names::is_pascal_case(&raw.name) || TAKEN_NAMES.contains(&raw.name.as_str());
    if !names::is_plural_name(&d.plural) || (name_told && !d.plural_declared) {
        return;
    }
    if RESERVED_PLURALS.contains(&d.plural.as_str()) {
        problems.add(
            &path,
            format!(
                "{} is one of baton's own routes (/{}){whose}",
                d.plural, d.plural
            ),
        );
    }
    if let Some(j) = (0..i).find(|&j| derived[j].plural == d.plural) {
        problems.add(
            &path,
            format!("{} is also the plural of {}{whose}", d.plural, raws[j].name),
        );
    } else if let Some(j) = (0..i).find(|&j| derived[j].nest_key == d.nest_key) {
        problems.add(
            &path,
            format!(
                "{} nests as {}, as {} does{whose}",
                d.plural, d.nest_key, raws[j].name
            ),
        );
    }
    if let Some(j) = (0..i).find(|&j| derived[j].body_key == d.body_key) {
        problems.add(
            &raw.path,
            format!(
                "its body key {} is also {}'s (rename one of them)",
                d.body_key, raws[j].name
            ),
        );
    }
    if d.store == Store::External {
        return;
    }
    // The nest key sits beside the keys of whatever holds it in
    // `GET /cases/:slug`: the case's own keys, or the parent record's.
    match &d.parent {
        None => {
            if CASE_KEYS.contains(&d.nest_key.as_str()) {
                problems.add(
                    &path,
                    format!(
                        "{} would nest as {}, a key a case's JSON already has{whose}",
                        d.plural, d.nest_key
                    ),
                );
            }
        }
        Some(parent) => {
            let parent_key = raws
                .iter()
                .zip(derived)
                .find(|(r, _)| &r.name == parent)
                .map(|(_, pd)| pd.parent_key.clone());
            if RECORD_KEYS.contains(&d.nest_key.as_str())
                || parent_key.as_deref() == Some(d.nest_key.as_str())
            {
                problems.add(
                    &path,
                    format!(
                        "{} would nest as {}, a key every {} record already has{whose}",
                        d.plural, d.nest_key, parent
                    ),
                );
            }
        }
    }
}

fn check_field_names(i: usize, raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let (raw, d) = (&raws[i], &derived[i]);
    let Some(fields) = &raw.fields else {
        return;
    };
    for field in fields {
        let path = format!("{}.fields.{}", raw.path, path_key(&field.name));
        let name = field.name.as_str();
        if !names::is_field_name(name) {
            problems.add(
                &path,
                "a field name is a lower-case letter, then letters, digits or _ (like dueOn)",
            );
        } else if RECORD_KEYS.contains(&name) {
            problems.add(
                &path,
                format!("{name} is reserved: every record's JSON has it"),
            );
        } else if name == d.parent_key {
            let parent = d.parent.as_deref().unwrap_or("Case");
            problems.add(
                &path,
                format!("{name} is reserved: it carries the record's {parent} id"),
            );
        } else if let Some(j) = (0..raws.len()).find(|&j| {
            derived[j].parent.as_deref() == Some(raw.name.as_str()) && derived[j].nest_key == name
        }) {
            problems.add(
                &path,
                format!(
                    "{name} is where a {}'s {} records nest in GET /cases/:slug (rename the field or declare another plural for {})",
                    raw.name, raws[j].name, raws[j].name
                ),
            );
        }
    }
}

/// `required`, `unique` and `label` name declared fields of fitting kinds.
fn check_field_lists(raw: &RawType, problems: &mut Problems) {
    let fields: &[RawField] = raw.fields.as_deref().unwrap_or(&[]);
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let known = if names.is_empty() {
        "the type has no fields".to_string()
    } else {
        format!("its fields: {}", names.join(", "))
    };
    let kind = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.compiled.as_ref())
            .map(Field::kind)
    };
    for (key, list) in [("required", &raw.required), ("unique", &raw.unique)] {
        let path = format!("{}.{key}", raw.path);
        let mut seen = HashSet::new();
        for name in list.iter().flatten() {
            if !names.contains(&name.as_str()) {
                problems.add(&path, format!("{name} is not a declared field ({known})"));
            } else if !seen.insert(name.as_str()) {
                problems.add(&path, format!("{name} is listed twice"));
            } else if key == "unique" && kind(name) == Some(FieldKind::Boolean) {
                problems.add(
                    &path,
                    format!("{name} is true or false, so it can't be unique"),
                );
            }
        }
    }
    if let Some(label) = &raw.label {
        let path = format!("{}.label", raw.path);
        if !names.contains(&label.as_str()) {
            problems.add(&path, format!("{label} is not a declared field ({known})"));
        } else if let Some(k) = kind(label).filter(|k| *k != FieldKind::String) {
            problems.add(
                &path,
                format!("{label} is {}; a label must be a string field", k.as_str()),
            );
        }
    }
}

/// Each cycle of parents once, naming every type in it, from its first
/// declared member.
fn check_cycles(raws: &[RawType], problems: &mut Problems) {
    let index: HashMap<&str, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let parent_of = |i: usize| {
        raws[i]
            .parent
            .as_deref()
            .and_then(|p| index.get(p).copied())
    };
    let mut reported: HashSet<usize> = HashSet::new();
    for start in 0..raws.len() {
        let mut chain = vec![start];
        let mut current = start;
        while let Some(parent) = parent_of(current) {
            if let Some(at) = chain.iter().position(|&c| c == parent) {
                let cycle = &chain[at..];
                if cycle.iter().all(|c| !reported.contains(c)) {
                    reported.extend(cycle.iter().copied());
                    problems.about_type(cycle.iter().copied().min().unwrap_or(start));
                    // Start the story at the cycle's first declared type.
                    let first = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, &c)| c)
                        .map_or(0, |(p, _)| p);
                    let mut order: Vec<&str> = cycle[first..]
                        .iter()
                        .chain(&cycle[..first])
                        .map(|&c| raws[c].name.as_str())
                        .collect();
                    order.push(order[0]);
                    let paths: Vec<String> = cycle
                        .iter()
                        .copied()
                        .collect::<std::collections::BTreeSet<usize>>()
                        .into_iter()
                        .map(|c| format!("{}.parent", raws[c].path))
                        .collect();
                    problems.add(
                        &paths.join(", "),
                        format!(
                            "the parents form a cycle: {} (every chain of parents must end at the case)",
                            order.join(" → ")
                        ),
                    );
                }
                break;
            }
            if chain.len() > raws.len() {
                break;
            }
            chain.push(parent);
            current = parent;
        }
    }
}

fn build(pair: (RawType, Derived)) -> RecordType {
    let (raw, d) = pair;
    let fields: Vec<Field> = raw
        .fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| f.compiled)
        .collect();
    let required = raw.required.unwrap_or_default();
    let label = raw.label.or_else(|| {
        fields
            .iter()
            .find(|f| f.kind() == FieldKind::String && required.contains(&f.name))
            .map(|f| f.name.clone())
    });
    let snake = names::snake_case(&raw.name);
    RecordType {
        words: names::words(&snake),
        body_key: d.body_key,
        nest_key: d.nest_key,
        plural: d.plural,
        parent: d.parent,
        parent_key: d.parent_key,
        store: d.store,
        ordered: raw.ordered.unwrap_or(false),
        movable: raw.movable.unwrap_or(false),
        label,
        fields,
        required,
        unique: raw.unique.unwrap_or_default(),
        lock: raw.lock,
        name: raw.name,
    }
}
