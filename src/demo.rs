//! `serve --demo`: three people and a sample case, created only if absent,
//! with demo data for the schema in force; on a database of its own only.

use crate::auth::password;
use crate::db::{Database, DbError, Tx};
use crate::error::{AppError, AppResult};
use crate::models::{Case, CaseId, CaseMaker, Membership, Place, Role, StoredRecord, User};
use crate::schema::{self, RecordType, Store};
use serde_json::{Map, Value};

pub const DEMO_PASSWORD: &str = "demo";
pub const DEMO_CASE: &str = "sample-case";

/// (email, name, site admin, role on the sample case)
pub const PEOPLE: [(&str, &str, bool, Role); 3] = [
    ("alice@example.com", "Alice", true, Role::Manager),
    ("bob@example.com", "Bob", false, Role::Editor),
    ("carol@example.com", "Carol", false, Role::Editor),
];

/// The casebook's demo data (`examples/schemas/casebook.demo.json`).
const CASEBOOK_DEMO: &str = include_str!("../examples/schemas/casebook.demo.json");

/// The demo data for the schema in force: `FILE.demo.json` beside a schema
/// file `FILE.toml`, the casebook's for the built-in schema, else none (a
/// sample record of each type is made up).
pub fn demo_data(schema_file: Option<&std::path::Path>) -> Value {
    let text = match schema_file {
        Some(path) => std::fs::read_to_string(path.with_extension("demo.json")).ok(),
        None => Some(CASEBOOK_DEMO.to_owned()),
    };
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// Why the demo was not seeded.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The database holds people of its own: the demo would give them a
    /// site admin anyone can sign in as (alice, password `demo`).
    #[error(
        "--demo seeds alice (a site admin), bob and carol with the password `demo`, so it \
         runs only on a database of its own, and this one has {0} other user(s). Point \
         DATABASE_URL at a new file (DATABASE_URL=demo.sqlite3) or database, or serve \
         without --demo."
    )]
    NotItsOwn(i64),
    #[error(transparent)]
    Failed(#[from] AppError),
}

impl From<DbError> for SeedError {
    fn from(e: DbError) -> SeedError {
        SeedError::Failed(e.into())
    }
}

impl From<diesel::result::Error> for SeedError {
    fn from(e: diesel::result::Error) -> SeedError {
        SeedError::Failed(e.into())
    }
}

/// Seeds the demo's people and case where they are absent, in one
/// transaction; on a database with anyone else in it, nothing.
pub async fn seed(db: &Database, data: Value) -> Result<(), SeedError> {
    let hash = actix_web::web::block(|| password::hash(DEMO_PASSWORD))
        .await
        .map_err(|_| AppError::Db(DbError::Cancelled))?
        .map_err(AppError::Unavailable)?;
    db.write(None, move |tx| seed_in(tx, &hash, &data)).await
}

fn seed_in(tx: &mut Tx, hash: &str, seed: &Value) -> Result<(), SeedError> {
    let own: Vec<&str> = PEOPLE.iter().map(|(email, ..)| *email).collect();
    let others = User::count_others(tx.conn, &own)?;
    if others > 0 {
        return Err(SeedError::NotItsOwn(others));
    }
    let mut people = Vec::new();
    for (email, name, admin, role) in PEOPLE {
        let user = match User::find_by_email(tx.conn, email)? {
            Some(user) => user,
            None => User::create(tx.conn, email, name, hash, admin, tx.now)?,
        };
        people.push((user, role));
    }
    if Case::find_by_slug(tx.conn, DEMO_CASE)?.is_some() {
        return Ok(());
    }
    let title = seed
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("A sample case");
    let case = Case::create(tx.conn, DEMO_CASE, title, CaseMaker::Person, tx.now)?;
    for (user, role) in &people {
        Membership::create(tx.conn, case.id, user.id, *role, tx.now)?;
    }
    let mut made = 0;
    plant(tx, case.id, None, seed.get("records"), &mut made)?;
    Ok(())
}

/// Creates the records of `tree` (shaped as `GET /cases/:slug` nests them:
/// each type under its camelCase plural, children inside their parent)
/// under `parent`, validated as any create is.
fn plant(
    tx: &mut Tx,
    case_id: CaseId,
    parent: Option<(&'static RecordType, i64)>,
    tree: Option<&Value>,
    made: &mut usize,
) -> AppResult<()> {
    let schema = schema::in_force();
    for ty in schema.children_of(parent.map(|(p, _)| p.name.as_str())) {
        if ty.store != Store::Stored {
            continue;
        }
        let planted = tree
            .and_then(|t| t.get(&ty.nest_key))
            .and_then(Value::as_array);
        let sample = [sample_record(ty, *made)];
        let records: Vec<&Value> = match planted {
            Some(records) => records.iter().collect(),
            // No seed for this type: one sample record shows it.
            None => sample.iter().collect(),
        };
        for record in records {
            let Some(object) = record.as_object() else {
                continue;
            };
            let children: Vec<&str> = schema
                .children_of(Some(&ty.name))
                .iter()
                .map(|child| child.nest_key.as_str())
                .collect();
            let given: Map<String, Value> = object
                .iter()
                .filter(|(key, _)| !children.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            let fields = ty.check_create(&given).map_err(|problems| {
                AppError::invalid(format!(
                    "The demo data for {} does not fit the schema: {}",
                    ty.name,
                    problems
                        .iter()
                        .map(|p| p.message.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
            })?;
            let place = Place {
                case_id,
                parent_id: parent.map(|(_, id)| id),
            };
            let (created, _) = StoredRecord::create(tx.conn, ty, place, fields, None, tx.now)?;
            *made += 1;
            plant(
                tx,
                case_id,
                Some((ty, created.id.get())),
                Some(record),
                made,
            )?;
        }
    }
    Ok(())
}

/// A record of `ty` for a schema without demo data: every required field
/// given a value its schema accepts.
fn sample_record(ty: &RecordType, n: usize) -> Value {
    let mut record = Map::new();
    for field in &ty.fields {
        if !ty.required.contains(&field.name) {
            continue;
        }
        let schema = &field.schema;
        let value = if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            first.clone()
        } else {
            match (
                schema.get("type").and_then(Value::as_str),
                schema.get("format").and_then(Value::as_str),
            ) {
                (Some("integer" | "number"), _) => {
                    schema.get("minimum").cloned().unwrap_or(Value::from(0))
                }
                (Some("boolean"), _) => Value::Bool(false),
                (_, Some("date")) => Value::from("2026-01-01"),
                (_, Some("date-time")) => Value::from("2026-01-01T09:00:00Z"),
                (_, Some("email")) => Value::from("sample@example.com"),
                (_, Some("uri")) => Value::from("https://example.com/"),
                _ => Value::from(format!("Sample {} {}", ty.words, n + 1)),
            }
        };
        record.insert(field.name.clone(), value);
    }
    Value::Object(record)
}
