//! Writing lockable records: creating a record in a case or a parent,
//! saving one (its fields, a reorder, a move), deleting one with
//! everything inside it, and saving or deleting a case. Each is one
//! transaction whose broadcasts go out after commit, and every save and
//! delete goes through the guard (`crate::locks::guard::guarded_write`).
//!
//! The order of a guarded write: the record, then the caller and their
//! role on its case before anything is locked (401 before 404); then the
//! record's row locked (it orders this write with others of the same
//! record) and read again; then the request read against the record (a
//! body that cannot be right is 400 or 422, never 412 or 423: RFC 9110
//! §13.2.1); then the guard, then the write.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::read::case_of;
use super::{missing, Engine, Parent};
use crate::auth::access::{authorize, require};
use crate::auth::{Actor, Caller};
use crate::db::Tx;
use crate::error::{AppError, AppResult};
use crate::locks::fast_path::{self, FastSave};
use crate::locks::guard::{clear_child_locks, guarded_write, Preconditions, WriteContext, Written};
use crate::locks::naming::case_by_slug;
use crate::locks::policy::LockPolicy;
use crate::locks::subtree;
use crate::locks::target::Lockable;
use crate::models::case::CaseChanges;
use crate::models::{
    Case, CaseId, Lock, Place, RecordChanges, RecordId, Role, StoredKey, StoredRecord,
};
use crate::schema::body::RecordInput;
use crate::schema::{self, RecordType};
use crate::views::{Change, Identity, Watchable};

impl Engine {
    /// `POST …/<plural>` (editors): a new record of `ty` under `parent`,
    /// with its siblings moved up to make room. `input` is the body as read;
    /// its refusal is told after 401, 404 and 403.
    pub async fn create_in(
        &self,
        actor: Actor,
        ty: &'static RecordType,
        parent: Parent,
        input: AppResult<RecordInput>,
    ) -> AppResult<StoredRecord> {
        let policy = self.policy;
        self.db
            .write(actor.editor(), move |tx| {
                let place = match parent {
                    Parent::Case(slug) => {
                        let case = case_by_slug(tx.conn, &slug)?;
                        authorize(tx.conn, &actor.user, &case, Role::Editor)?;
                        subtree::refuse_creation_in(tx, &actor, &case, &policy)?;
                        Place {
                            case_id: case.id,
                            parent_id: None,
                        }
                    }
                    Parent::Record(key) => {
                        let parent = lock_parent(tx, &actor, key)?;
                        subtree::refuse_creation_in(tx, &actor, &parent, &policy)?;
                        Place {
                            case_id: parent.case_id,
                            parent_id: Some(key.id.get()),
                        }
                    }
                };
                create(tx, ty, place, input?)
            })
            .await
    }

    /// `PATCH /<plural>/:id` (editors, guarded): the fields given change,
    /// `position` reorders, `<parent>Id` moves a movable type. Fields alone
    /// are saved in one statement when the fast path is on.
    pub async fn save(
        &self,
        caller: Caller,
        preconditions: Preconditions,
        key: StoredKey,
        input: AppResult<RecordInput>,
    ) -> AppResult<StoredRecord> {
        let fields = input
            .as_ref()
            .ok()
            .and_then(|input| FastSave::of(key.ty, input));
        if let (Some(fast), Some(fields)) = (&self.fast, fields) {
            let saved = fast_path::save(
                fast,
                &self.db,
                &caller,
                key,
                preconditions,
                fields,
                &self.policy,
            );
            if let Some(record) = saved.await? {
                return Ok(record);
            }
        }
        let policy = self.policy;
        let written = guarded::<StoredRecord, _, _, _>(
            self,
            Guarded {
                caller,
                preconditions,
                min_role: Role::Editor,
            },
            key,
            move |tx, _, record| {
                let input = input?;
                // A move's target: 404 unknown, 422 in another case.
                let target = match input.parent_id.filter(|&p| Some(p) != record.parent_id) {
                    Some(parent_id) => Some(move_target(tx, record, parent_id)?),
                    None => None,
                };
                Ok((input, target))
            },
            move |tx, ctx, record, (input, target)| {
                ensure_unique(tx, key.ty, record.case_id, &input.fields, Some(record.id))?;
                if let Some(target) = &target {
                    // The record's own parent and case were guarded with it.
                    subtree::refuse_creation_in(tx, ctx.actor, target, &policy)?;
                }
                let changes = RecordChanges {
                    fields: input.fields,
                    position: input.position,
                    parent_id: target.map(|t| t.id.get()),
                };
                let (updated, moved) = record.update(tx.conn, changes, tx.now)?;
                emit_moved(tx, &moved);
                Ok(Written::Updated(updated))
            },
        )
        .await?;
        updated(written, key)
    }

    /// `DELETE /<plural>/:id` (editors, guarded): the record and everything
    /// inside it, refused (423) while someone else holds a lock on any of it.
    pub async fn destroy(
        &self,
        caller: Caller,
        preconditions: Preconditions,
        key: StoredKey,
    ) -> AppResult<()> {
        let asked = Guarded {
            caller,
            preconditions,
            min_role: Role::Editor,
        };
        guarded::<StoredRecord, _, _, _>(
            self,
            asked,
            key,
            |_, _, _| Ok(()),
            |tx, ctx, record, ()| destroy_record(tx, ctx, record),
        )
        .await?;
        Ok(())
    }

    /// `PATCH /cases/:slug` (managers, guarded).
    pub async fn update_case(
        &self,
        caller: Caller,
        preconditions: Preconditions,
        slug: String,
        changes: CaseChanges,
    ) -> AppResult<Case> {
        let id = self.case_id(slug).await?;
        let asked = Guarded {
            caller,
            preconditions,
            min_role: Role::Manager,
        };
        let written = guarded::<Case, _, _, _>(
            self,
            asked,
            id,
            |_, _, _| Ok(()),
            move |tx, _, case, ()| Ok(Written::Updated(case.update(tx.conn, &changes, tx.now)?)),
        )
        .await?;
        updated(written, id)
    }

    /// `DELETE /cases/:slug` (managers, guarded): refused while someone else
    /// holds a lock anywhere in the case.
    pub async fn destroy_case(
        &self,
        caller: Caller,
        preconditions: Preconditions,
        slug: String,
    ) -> AppResult<()> {
        let id = self.case_id(slug).await?;
        let asked = Guarded {
            caller,
            preconditions,
            min_role: Role::Manager,
        };
        guarded::<Case, _, _, _>(
            self,
            asked,
            id,
            |_, _, _| Ok(()),
            |tx, ctx, case, ()| {
                case.lock_for_delete(tx.conn)?;
                // Every lock in the case, the case's own included: the cascade
                // would otherwise remove them unaudited and unannounced.
                let locks = Lock::of_case(tx.conn, case.id)?;
                clear_child_locks(tx, ctx, locks)?;
                case.delete(tx)?;
                Ok(Written::Destroyed)
            },
        )
        .await?;
        Ok(())
    }

    async fn case_id(&self, slug: String) -> AppResult<CaseId> {
        self.db
            .read(move |conn| case_by_slug(conn, &slug).map(|c| c.id))
            .await
    }
}

/// Who writes a lockable through the guard, with which preconditions, and
/// the least role on its case the write needs.
struct Guarded {
    caller: Caller,
    preconditions: Preconditions,
    min_role: Role,
}

/// One guarded write of the lockable `key` names, in the order of this
/// module's head: `prepare` reads the request against the record, and
/// `write` runs through the guard with what it made.
async fn guarded<L, T, P, F>(
    engine: &Engine,
    asked: Guarded,
    key: L::Key,
    prepare: P,
    write: F,
) -> AppResult<Written<L>>
where
    L: Lockable,
    P: FnOnce(&mut Tx, &Actor, &L) -> AppResult<T> + Send + 'static,
    F: FnOnce(&mut Tx, &WriteContext, L, T) -> AppResult<Written<L>> + Send + 'static,
    T: Send + 'static,
{
    let policy: LockPolicy = engine.policy;
    let Guarded {
        caller,
        preconditions,
        min_role,
    } = asked;
    engine
        .db
        .write(caller.editor(), move |tx| {
            let Some(record) = L::find(tx.conn, key)? else {
                caller.load(tx.conn)?; // 401 comes before 404
                return Err(missing(key));
            };
            let (actor, case, rank) = caller.load_on_case(tx.conn, record.case_id())?;
            require(rank, &case, min_role)?;
            let record = if tx.conn.locks_rows() {
                L::find_for_update(tx.conn, key)?.ok_or_else(|| missing(key))?
            } else {
                record
            };
            let prepared = prepare(tx, &actor, &record)?;
            let ctx = WriteContext {
                actor: &actor,
                preconditions,
                policy: &policy,
                tab_required: false,
            };
            guarded_write(tx, &ctx, record, |tx, record| {
                write(tx, &ctx, record, prepared)
            })
        })
        .await
}

/// The record a save wrote. A save's write never deletes; were it to, the
/// record is gone, and 404 says so.
fn updated<L: Lockable>(written: Written<L>, key: L::Key) -> AppResult<L> {
    match written {
        Written::Updated(record) => Ok(record),
        Written::Destroyed => Err(missing(key)),
    }
}

/// The parent a new record goes under: read, the caller's role on its case
/// checked, then read again, locked, so that a delete of the parent (which
/// takes its row for update) waits for this insert, or this one for it.
fn lock_parent(tx: &mut Tx, actor: &Actor, key: StoredKey) -> AppResult<StoredRecord> {
    let gone = || AppError::not_found(format!("{} {} does not exist.", key.ty.name, key.id));
    let parent = StoredRecord::find(tx.conn, key)?.ok_or_else(gone)?;
    let case = case_of(tx.conn, parent.case_id)?;
    authorize(tx.conn, &actor.user, &case, Role::Editor)?;
    if tx.conn.locks_rows() {
        StoredRecord::find_for_key_share(tx.conn, key)?.ok_or_else(gone)
    } else {
        Ok(parent)
    }
}

fn create(
    tx: &mut Tx,
    ty: &'static RecordType,
    place: Place,
    input: RecordInput,
) -> AppResult<StoredRecord> {
    ensure_unique(tx, ty, place.case_id, &input.fields, None)?;
    let (record, moved) =
        StoredRecord::create(tx.conn, ty, place, input.fields, input.position, tx.now)?;
    emit_moved(tx, &moved);
    tx.emit(record.case_id, Change::Create, record.view().into());
    Ok(record)
}

/// The parent a record moves to: of the parent's type, in the same case.
fn move_target(tx: &mut Tx, record: &StoredRecord, parent_id: i64) -> AppResult<StoredRecord> {
    let ty = record.ty;
    let parent_ty = ty
        .parent
        .as_deref()
        .and_then(|p| schema::in_force().get(p))
        .ok_or_else(|| AppError::invalid(format!("{} records do not move.", ty.name)))?;
    let key = StoredKey {
        ty: parent_ty,
        id: RecordId(parent_id),
    };
    let target = StoredRecord::find_for_key_share(tx.conn, key)?.ok_or_else(|| {
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

/// Deletes a record and everything inside it. A type with children takes
/// the record's strongest row lock, then its descendants': a record being
/// added inside meanwhile waits, then finds its parent gone.
fn destroy_record(
    tx: &mut Tx,
    ctx: &WriteContext,
    record: StoredRecord,
) -> AppResult<Written<StoredRecord>> {
    let ty = record.ty;
    let holds_records = !schema::in_force().children_of(Some(&ty.name)).is_empty();
    let inside = if holds_records {
        StoredRecord::lock_subtree(tx.conn, &ty.name, record.id.get())?
    } else {
        Vec::new()
    };
    if !inside.is_empty() {
        let inside_set: HashSet<&(String, i64)> = inside.iter().collect();
        let locks: Vec<_> = Lock::of_case(tx.conn, record.case_id)?
            .into_iter()
            .filter(|held| {
                inside_set.contains(&(held.lock.lockable_type.clone(), held.lock.lockable_id))
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
}

/// 409 when a `unique` field's value is another record's in the case.
fn ensure_unique(
    tx: &mut Tx,
    ty: &RecordType,
    case_id: CaseId,
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

/// Queues the `update` of each sibling that moved up to make room.
fn emit_moved(tx: &mut Tx, moved: &[StoredRecord]) {
    for sibling in moved {
        tx.emit(sibling.case_id, Change::Update, sibling.view().into());
    }
}
