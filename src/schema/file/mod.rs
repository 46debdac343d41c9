//! Reading and checking a schema file.
//!
//! The file is walked as a `toml::Table` by hand rather than deserialized
//! with `deny_unknown_fields`: serde stops at the first error, and a file
//! that cannot be right should be reported whole, every problem with its
//! dotted path (`types.Ticket.lock.leas`), in one go.

use toml::{Table, Value as Toml};

mod across;
mod field;

use super::fields::{Field, FieldKind};
use super::names::{self, and_list, or_list, path_key};
use super::{LockRules, RecordType, Store, TakeoverRule, TAKEN_NAMES};

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
    across::check_across(&raws, &derived, &mut problems);
    across::check_cycles(&raws, &mut problems);
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
                    Some("baton") => Some(Store::Stored),
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
            compiled: field::read_field(
                &format!("{path}.{}", path_key(name)),
                name,
                value,
                problems,
            ),
        })
        .collect()
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
        store: raw.store.unwrap_or(Store::Stored),
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
