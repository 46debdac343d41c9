//! The routes of every declared type, registered at start from the schema
//! in force: `POST /<parent plural>/:id/<plural>` (or
//! `POST /cases/:slug/<plural>` for a type under the case), and
//! `GET`/`PATCH`/`DELETE /<plural>/:id`. Every update and delete goes
//! through the guard (see [`super::guarded_after`]); a body is read and
//! validated against the type's fields before the guard runs.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde_json::{Map, Value};

use super::{case_by_slug, case_of, errors, lockable_response, show_lockable};
use crate::auth::access::authorize;
use crate::auth::{Actor, Caller};
use crate::db::Tx;
use crate::error::{AppError, AppResult, FieldProblem};
use crate::locks::guard::{clear_child_locks, Preconditions};
use crate::locks::{engine, fast_path, subtree, Lockable, Written};
use crate::models::record::MAX_POSITION;
use crate::models::{Lock, Place, RecordChanges, RecordId, Role, StoredKey, StoredRecord};
use crate::schema::{self, FieldError, RecordType, Store};
use crate::state::AppState;
use crate::views::{Change, Identity, Watchable};

/// The declared type a resource serves, set on it at registration.
#[derive(Clone, Copy)]
pub struct Served(pub &'static RecordType);

/// The collection path a type's records are created at.
pub fn create_path(ty: &RecordType) -> String {
    match ty.parent.as_deref().and_then(|p| schema::in_force().get(p)) {
        Some(parent) => format!("/{}/{{id}}/{}", parent.plural, ty.plural),
        None => format!("/cases/{{slug}}/{}", ty.plural),
    }
}

/// The path of one record of a type.
pub fn member_path(ty: &RecordType) -> String {
    format!("/{}/{{id}}", ty.plural)
}

/// The types with routes: those baton stores.
fn stored_types() -> impl Iterator<Item = &'static RecordType> {
    schema::in_force()
        .types()
        .iter()
        .filter(|ty| ty.store == Store::Stored)
}

/// Every declared route as `(path, method)`, as [`routes`] registers them.
pub fn served() -> Vec<(String, &'static str)> {
    stored_types()
        .flat_map(|ty| {
            [
                (create_path(ty), "post"),
                (member_path(ty), "get"),
                (member_path(ty), "patch"),
                (member_path(ty), "delete"),
            ]
        })
        .collect()
}

/// Registers every declared type's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    for ty in stored_types() {
        let served = web::Data::new(Served(ty));
        let collection = web::resource(create_path(ty)).app_data(served.clone());
        let collection = match ty.parent {
            Some(_) => collection.route(web::post().to(create_in_record)),
            None => collection.route(web::post().to(create_in_case)),
        };
        cfg.service(collection.default_service(web::to(errors::method_not_allowed)));
        cfg.service(
            web::resource(member_path(ty))
                .app_data(served)
                .route(web::get().to(show))
                .route(web::patch().to(update))
                .route(web::delete().to(destroy))
                .default_service(web::to(errors::method_not_allowed)),
        );
    }
}

fn key(ty: &'static RecordType, id: i64) -> StoredKey {
    StoredKey {
        ty,
        id: RecordId(id),
    }
}

// ---- reading a body ----

/// What a create or an update asks for, validated.
struct Asked {
    fields: Map<String, Value>,
    position: Option<i32>,
    /// A move: the new parent's id.
    parent_id: Option<i64>,
}

/// `{"<bodyKey>": {…}}` → the object inside (the type's snake_case name is
/// accepted too), or 422. Every other key is refused.
fn inner_object(ty: &RecordType, body: Value) -> AppResult<Map<String, Value>> {
    let example = format!("{{\"{}\": {{…}}}}", ty.body_key);
    let Value::Object(mut outer) = body else {
        return Err(AppError::invalid(format!(
            "The body must be a JSON object like {example}."
        )));
    };
    let snake = ty.snake_body_key();
    let inner = outer.remove(&ty.body_key).or_else(|| outer.remove(&snake));
    if let Some(extra) = outer.keys().next() {
        return Err(AppError::invalid(format!(
            "{extra} is not part of this request; send {example}."
        )));
    }
    match inner {
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(AppError::invalid(format!(
            "{} must be an object, like {example}.",
            ty.body_key
        ))),
        None => Err(AppError::invalid(format!(
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
/// number or a string of digits.
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
        Value::String(s) => super::extract::digits(s),
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

/// A body's fields as the type declares them: every problem at once, 422.
fn read_body(ty: &RecordType, body: Value, creating: bool) -> AppResult<Asked> {
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
        return Err(AppError::invalid_fields(
            problems
                .into_iter()
                .map(|p| FieldProblem {
                    field: p.field,
                    message: p.message,
                })
                .collect(),
        ));
    }
    Ok(Asked {
        fields,
        position,
        parent_id,
    })
}

/// 409 when a `unique` field's value is another record's in the case.
fn ensure_unique(
    tx: &mut Tx,
    ty: &RecordType,
    case_id: crate::models::CaseId,
    fields: &Map<String, Value>,
    except: Option<RecordId>,
) -> AppResult<()> {
    for name in &ty.unique {
        let Some(value) = fields.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        if StoredRecord::value_taken(tx.conn, ty, case_id, name, value, except)? {
            let shown = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            return Err(AppError::Conflict(format!(
                "{}.{name} '{shown}' is already used in this case; pick another.",
                ty.body_key
            )));
        }
    }
    Ok(())
}

/// Queues the creation (or update) of a record and the `update` of each
/// sibling that moved up to make room for it.
fn emit_moved(tx: &mut Tx, moved: &[StoredRecord]) {
    for sibling in moved {
        tx.emit(sibling.case_id, Change::Update, sibling.view().into());
    }
}

// ---- handlers ----

/// `POST /cases/:slug/<plural>` (editors): 201.
pub async fn create_in_case(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let (slug, body, policy) = (slug.into_inner(), body.into_inner(), state.policy);
    let record = state
        .db
        .write(actor.editor(), move |tx| {
            let case = case_by_slug(tx.conn, &slug)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            let asked = read_body(ty, body, true)?;
            subtree::refuse_creation_in(tx, &actor, &case, &policy)?;
            let place = Place {
                case_id: case.id,
                parent_id: None,
            };
            create(tx, ty, place, asked)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &record))
}

/// `POST /<parent plural>/:id/<plural>` (editors): 201.
pub async fn create_in_record(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    parent_id: web::Path<i64>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let parent_ty = ty
        .parent
        .as_deref()
        .and_then(|p| schema::in_force().get(p))
        .ok_or_else(|| AppError::not_found("This type has no parent record."))?;
    let (parent_id, body, policy) = (parent_id.into_inner(), body.into_inner(), state.policy);
    let record = state
        .db
        .write(actor.editor(), move |tx| {
            let missing =
                || AppError::not_found(format!("{} {parent_id} does not exist.", parent_ty.name));
            let parent =
                StoredRecord::find(tx.conn, key(parent_ty, parent_id))?.ok_or_else(missing)?;
            let case = case_of(tx.conn, parent.case_id)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            // Then read again, locked, so that a delete of the parent (which
            // takes its row for update) waits for this insert, or this one
            // for it.
            let parent = if tx.conn.locks_rows() {
                StoredRecord::find_for_key_share(tx.conn, key(parent_ty, parent_id))?
                    .ok_or_else(missing)?
            } else {
                parent
            };
            let asked = read_body(ty, body, true)?;
            subtree::refuse_creation_in(tx, &actor, &parent, &policy)?;
            let place = Place {
                case_id: case.id,
                parent_id: Some(parent_id),
            };
            create(tx, ty, place, asked)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &record))
}

fn create(
    tx: &mut Tx,
    ty: &'static RecordType,
    place: Place,
    asked: Asked,
) -> AppResult<StoredRecord> {
    ensure_unique(tx, ty, place.case_id, &asked.fields, None)?;
    let (record, moved) =
        StoredRecord::create(tx.conn, ty, place, asked.fields, asked.position, tx.now)?;
    emit_moved(tx, &moved);
    tx.emit(record.case_id, Change::Create, record.view().into());
    Ok(record)
}

/// `GET /<plural>/:id` (readers).
pub async fn show(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    actor: Actor,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    show_lockable::<StoredRecord>(&state, actor, key(served.0, id.into_inner())).await
}

/// `PATCH /<plural>/:id` (editors, guarded): the fields given change,
/// `position` reorders, `<parent>Id` moves a movable type.
pub async fn update(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<i64>,
    body: web::Json<Value>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    let (id, body, policy) = (id.into_inner(), body.into_inner(), state.policy);
    let asked = engine::Guarded {
        caller,
        preconditions,
        min_role: Role::Editor,
    };
    let written = engine::save(
        &state.db,
        asked,
        key(ty, id),
        fast_path::FastSave::of(ty, &body),
        &policy,
        state.fast_path(),
        move |tx, _, record| {
            let asked = read_body(ty, body, false)?;
            // A move's target: 404 unknown, 422 in another case.
            let target = match asked.parent_id.filter(|&p| Some(p) != record.parent_id) {
                Some(parent_id) => Some(move_target(tx, record, parent_id)?),
                None => None,
            };
            Ok((asked, target))
        },
        move |tx, ctx, record, (asked, target)| {
            ensure_unique(tx, ty, record.case_id, &asked.fields, Some(record.id))?;
            if let Some(target) = &target {
                // The record's own parent and case were guarded with it.
                subtree::refuse_creation_in(tx, ctx.actor, target, &policy)?;
            }
            let changes = RecordChanges {
                fields: asked.fields,
                position: asked.position,
                parent_id: target.map(|t| t.id.get()),
            };
            let (updated, moved) = record.update(tx.conn, changes, tx.now)?;
            emit_moved(tx, &moved);
            Ok(Written::Updated(updated))
        },
    )
    .await?;
    Ok(super::written_response(written))
}

/// The parent a record moves to: of the parent's type, in the same case.
fn move_target(tx: &mut Tx, record: &StoredRecord, parent_id: i64) -> AppResult<StoredRecord> {
    let ty = record.ty;
    let parent_ty = ty
        .parent
        .as_deref()
        .and_then(|p| schema::in_force().get(p))
        .ok_or_else(|| AppError::invalid(format!("{} records do not move.", ty.name)))?;
    let target =
        StoredRecord::find_for_key_share(tx.conn, key(parent_ty, parent_id))?.ok_or_else(|| {
            AppError::not_found(format!("{} {parent_id} does not exist.", parent_ty.name))
        })?;
    if target.case_id != record.case_id {
        return Err(AppError::invalid(format!(
            "{} {parent_id} is in another case; a {} moves between the {} of its own case.",
            parent_ty.name,
            ty.words,
            parent_ty.plural.replace('_', " ")
        )));
    }
    Ok(target)
}

/// `DELETE /<plural>/:id` (editors, guarded): the record and everything
/// inside it, refused (423) while someone else holds a lock on any of it.
pub async fn destroy(
    state: web::Data<AppState>,
    served: web::Data<Served>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<i64>,
) -> AppResult<HttpResponse> {
    let ty = served.0;
    super::guarded::<StoredRecord, _>(
        &state,
        caller,
        preconditions,
        key(ty, id.into_inner()),
        Role::Editor,
        move |tx, ctx, record| {
            // A type with children takes the record's strongest row lock,
            // then its descendants': a record being added inside meanwhile
            // waits, then finds its parent gone.
            let holds_records = !schema::in_force().children_of(Some(&ty.name)).is_empty();
            let inside = if holds_records {
                StoredRecord::lock_subtree(tx.conn, &ty.name, record.id.get())?
            } else {
                Vec::new()
            };
            if !inside.is_empty() {
                let inside_set: std::collections::HashSet<&(String, i64)> = inside.iter().collect();
                let locks: Vec<_> = Lock::of_case(tx.conn, record.case_id)?
                    .into_iter()
                    .filter(|held| {
                        inside_set
                            .contains(&(held.lock.lockable_type.clone(), held.lock.lockable_id))
                    })
                    .collect();
                clear_child_locks(tx, ctx, locks)?;
                StoredRecord::delete_all(tx.conn, &inside)?;
            }
            record.delete(tx.conn)?;
            for (type_name, id) in inside.iter().rev() {
                if let Some(child) = schema::in_force().get(type_name) {
                    let gone = Identity::new(&child.name, &child.plural, *id);
                    tx.emit(record.case_id, Change::Destroy, Watchable::Gone(gone));
                }
            }
            Ok(Written::Destroyed)
        },
    )
    .await
}
