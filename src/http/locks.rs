//! Lock routes: acquire (and take over), read, status, refresh, release,
//! break, release a whole tab, and the audit trail.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::{case_by_slug, case_of};
use crate::auth::access::{authorize, require};
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::engine::{self, active_locks, LockStatus};
use crate::locks::fast_path;
use crate::locks::line::{self, Joined};
use crate::locks::lockable::{kind_named, known_types};
use crate::locks::render::{lock_event_view, lock_view, lock_views, waiter_view, waiter_views};
use crate::locks::{AcquireMode, Acquired, LockableKind, Target};
use crate::models::external_record::valid_param;
use crate::models::{ExternalRecord, Lock, LockEvent, LockEventId, LockId, Role, User, UserId};
use crate::state::AppState;
use crate::views::locks::{LockDepth, LockState};
use crate::views::{LockEventView, LockStatusView, LockView, WaiterView};

/// The lockable types, as the OpenAPI document lists them: the case and
/// every type of the schema in force ([`crate::locks::lockable::registry`]).
pub struct LockableType;

impl utoipa::PartialSchema for LockableType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .description(Some("A lockable type's name."))
            .enum_values(Some(
                crate::locks::lockable::registry()
                    .iter()
                    .map(|k| k.type_name),
            ))
            .into()
    }
}

impl ToSchema for LockableType {}

/// Which record: `lockableType` + `lockableParam` (snake_case accepted too).
#[derive(Clone, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LockableRef {
    /// The record's type name.
    #[serde(alias = "lockable_type", rename = "lockableType")]
    #[schema(required = true, nullable = false, value_type = Option<LockableType>)]
    #[param(required = true, value_type = LockableType)]
    lockable_type: Option<String>,
    /// The record's id: `"12"` or `12`.
    #[serde(alias = "lockable_param", rename = "lockableParam")]
    #[schema(required = true, nullable = false, value_type = Option<RecordParam>)]
    #[param(required = true, value_type = ParamText, inline, example = "12")]
    lockable_param: Option<RecordParam>,
    /// The case's slug: required for an external type (`store =
    /// "external"`), whose records are named per case; ignored otherwise.
    #[schema(required = false, nullable = false, value_type = Option<String>)]
    #[param(required = false, value_type = Option<String>)]
    case: Option<String>,
}

/// Whether the schema in force declares an external type: only then may a
/// `lockableParam` be more than digits.
fn any_external_type() -> bool {
    crate::schema::in_force()
        .types()
        .iter()
        .any(|ty| ty.is_external())
}

/// The pattern of a `lockableParam` string: an id, or (with external types
/// declared) a host's name for its record.
fn param_pattern() -> &'static str {
    if any_external_type() {
        "^[A-Za-z0-9._:-]{1,200}$"
    } else {
        "^[0-9]{1,18}$"
    }
}

/// `lockableParam` in a query string.
pub struct ParamText;

impl utoipa::PartialSchema for ParamText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .pattern(Some(param_pattern()))
            .description(Some(
                "The record's id; for an external type, what your backend calls it.",
            ))
            .into()
    }
}

impl ToSchema for ParamText {}

/// A record a request names.
#[derive(Clone, Debug)]
pub enum Named {
    /// One of baton's own (a case, a record baton stores), by id.
    Stored(&'static LockableKind, i64),
    /// A record of an external type: what case `case` (a slug) calls `param`.
    External {
        kind: &'static LockableKind,
        case: String,
        param: String,
    },
}

impl Named {
    pub fn kind(&self) -> &'static LockableKind {
        match self {
            Named::Stored(kind, _) | Named::External { kind, .. } => kind,
        }
    }

    /// The record's id, naming an external record (giving it an id) if it
    /// was never locked. 404 for an external record's unknown case.
    pub fn id_naming(&self, tx: &mut crate::db::Tx) -> AppResult<i64> {
        match self {
            Named::Stored(_, id) => Ok(*id),
            Named::External { kind, case, param } => {
                let case = case_by_slug(tx.conn, case)?;
                let record = ExternalRecord::name(tx.conn, kind.type_name, &case, param, tx.now)?;
                Ok(record.id)
            }
        }
    }
}

/// The largest id a request may name: 18 digits, like `^[0-9]{1,18}$`.
const MAX_ID: i64 = 999_999_999_999_999_999;

/// A record's id in a request body, as a string (`"12"`, what `param` says)
/// or a number (`12`, as the Gala seed sends it).
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub enum RecordParam {
    Text(String),
    Number(serde_json::Number),
}

impl RecordParam {
    /// What a host calls an external record: 1–200 of `A-Za-z0-9._:-`, or
    /// an integral number as its decimal string.
    pub(super) fn external(&self) -> Option<String> {
        match self {
            RecordParam::Text(s) => valid_param(s).then(|| s.clone()),
            RecordParam::Number(n) => n
                .as_i64()
                .map(|i| i.to_string())
                .or_else(|| n.as_u64().map(|u| u.to_string()))
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                        .map(|f| (f as i64).to_string())
                }),
        }
    }

    /// The id, if it is one: 1 to 18 digits, or a number that is not negative.
    pub(super) fn id(&self) -> Option<i64> {
        match self {
            RecordParam::Text(s) => super::extract::digits(s),
            // JSON does not tell 12 from 12.0; both name record 12 (as JSON
            // Schema says). At most 18 digits, as a string.
            RecordParam::Number(n) => n
                .as_i64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e18)
                        .map(|f| f as i64)
                })
                .filter(|id| (0..=MAX_ID).contains(id)),
        }
    }
}

impl std::fmt::Display for RecordParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordParam::Text(s) => f.write_str(s),
            RecordParam::Number(n) => write!(f, "{n}"),
        }
    }
}

impl utoipa::PartialSchema for RecordParam {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(param_pattern()))
                    .examples(["12"]),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Int64,
                    )))
                    .minimum(Some(0))
                    .maximum(Some(MAX_ID)),
            )
            .description(Some(
                "A record's id: a string of digits, or a number. For an external type: \
                 what your backend calls the record (1–200 of `A-Za-z0-9._:-`), with `case`.",
            ))
            .into()
    }
}

impl ToSchema for RecordParam {}

impl LockableRef {
    /// The record asked for: 422 for an unknown type, a bad id or param,
    /// or an external type without `case`.
    pub(super) fn parse(&self) -> AppResult<Named> {
        let type_name = self.lockable_type.as_deref().ok_or_else(|| {
            AppError::invalid(format!(
                "lockableType is required (one of {}).",
                known_types()
            ))
        })?;
        let kind = kind_named(type_name).ok_or_else(|| {
            AppError::invalid(format!(
                "'{type_name}' is not a lockable type; use one of {}.",
                known_types()
            ))
        })?;
        if kind.is_external() {
            let param = self.lockable_param.as_ref().ok_or_else(|| {
                AppError::invalid(format!(
                    "lockableParam is required: what your backend calls the {type_name}, like \"inv-2031\"."
                ))
            })?;
            let param = param.external().ok_or_else(|| {
                AppError::invalid(format!(
                    "lockableParam must be 1 to 200 letters, digits or '.', '_', ':', '-'; got \"{param}\"."
                ))
            })?;
            let case = self.case.clone().ok_or_else(|| {
                AppError::invalid(format!(
                    "case is required for {type_name}: the slug of the case the record belongs to \
                     ({type_name} records live in your database and are named per case)."
                ))
            })?;
            return Ok(Named::External { kind, case, param });
        }
        let param = self.lockable_param.as_ref().ok_or_else(|| {
            AppError::invalid("lockableParam is required: the record's id, like \"12\".")
        })?;
        let id = param.id().ok_or_else(|| {
            AppError::invalid(format!(
                "lockableParam must be the record's id, like \"12\"; got \"{param}\"."
            ))
        })?;
        Ok(Named::Stored(kind, id))
    }

    /// The `case` it names, if any.
    pub(super) fn case_slug(&self) -> Option<String> {
        self.case.clone()
    }

    /// Finds the record to lock, its row locked until the transaction ends
    /// unless `for_update` is false (an external record is named, given an
    /// id, if it never was): 422 for an unknown type, 404 for a missing
    /// record or case.
    pub(super) fn resolve(&self, tx: &mut crate::db::Tx, for_update: bool) -> AppResult<Target> {
        let named = self.parse()?;
        let kind = named.kind();
        let id = named.id_naming(tx)?;
        let missing = || AppError::not_found(format!("{} {id} does not exist.", kind.type_name));
        let found = if for_update {
            kind.find_for_update(tx.conn, id)?
        } else {
            kind.find(tx.conn, id)?
        };
        found.ok_or_else(missing)
    }

    /// Finds the record to read about, with its case; `None` for an
    /// external record never locked (nobody holds it).
    pub(super) fn look_up(
        &self,
        conn: &mut crate::db::DbConn,
    ) -> AppResult<(crate::models::Case, Option<Target>)> {
        match self.parse()? {
            Named::Stored(kind, id) => {
                let target = kind.find(conn, id)?.ok_or_else(|| {
                    AppError::not_found(format!("{} {id} does not exist.", kind.type_name))
                })?;
                Ok((case_of(conn, target.case_id)?, Some(target)))
            }
            Named::External { kind, case, param } => {
                let case = case_by_slug(conn, &case)?;
                let target = kind.find_external(conn, case.id, &param)?;
                Ok((case, target))
            }
        }
    }
}

#[derive(Deserialize, ToSchema)]
pub struct LockBody {
    #[serde(deserialize_with = "super::params::object")]
    lock: LockFields,
}

#[derive(Deserialize, ToSchema)]
pub struct LockFields {
    #[serde(flatten)]
    target: LockableRef,
    /// "Edit anyway": revoke the holder's lock and take it, if your role on
    /// the case is at least theirs. It skips the waiting line.
    #[serde(default)]
    takeover: bool,
    /// When someone else holds it, join its waiting line (202 with your
    /// tab's waiter) instead of a 409: the record is handed to your tab when
    /// their lock ends. Needs `X-Session-ID`. Depth `"0"` only.
    #[serde(default)]
    wait: bool,
    /// `"infinity"` (a case, or a record whose type has children): lock the record with everything
    /// inside it, including records created later. Refused (409, `locks`
    /// naming them) while someone else holds anything inside; with
    /// `takeover`, their locks end.
    #[serde(default)]
    depth: LockDepth,
}

/// `POST /locks`: 201 new lock, 200 when the caller already holds it, 409
/// when someone else does; with `takeover: true`, "Edit anyway"; with
/// `wait: true`, 202 and a place in the record's waiting line.
#[utoipa::path(post, operation_id = "acquireLock", path = "/locks", tag = "locks",
    request_body = LockBody,
    responses(
        (status = 201, description = "A new lock (or, with `takeover`, the holder's revoked and this one granted)", body = LockView),
        (status = 200, description = "You (this tab) held it already: lease renewed. Or, with `wait`, this tab was in its line already: that waiter, renewed", body = LockOrWaiter),
        (status = 202, description = "With `wait`: someone else holds it and this tab joined its line; the record is handed over when their lock ends", body = WaiterView),
        (status = 403, description = "`forbidden`: not an editor of its case; `outranked` (with `lock`): the holder (of a deep takeover: one of the holders inside) outranks you"),
        (status = 404, description = "No record has this type and id"),
        (status = 409, description = "`lock_held` (with the holder's `lock`, and `locks`: every lock in the way): someone else holds it, or a deep lock of someone else covers it (`lock` is that deep lock), or (`depth: \"infinity\"`) someone else holds a lock inside it; or `conflict`: it changed hands repeatedly, try again"),
        (status = 422, description = "`lockableType` or `lockableParam` is missing or invalid, `wait` without `X-Session-ID` or with `depth: \"infinity\"`, or `depth: \"infinity\"` on a record that holds no others"),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<LockBody>,
) -> AppResult<HttpResponse> {
    let LockFields {
        target,
        takeover,
        wait,
        depth,
    } = body.into_inner().lock;
    let policy = state.policy;
    let deep = depth == LockDepth::Infinity;
    // A wait without a tab is refused (422) by the engine, after the caller
    // and their role are checked: not by the fast path, which would lock.
    let waits_without_tab = wait && caller.session_id().is_none();
    let fast = state.settings.lock_fast_path && !(takeover || deep || waits_without_tab);
    if let (true, Ok(Named::Stored(kind, id))) = (fast, target.parse()) {
        // A type without waiting lines refuses `wait`: the general path says so.
        if !wait || kind.allows_waiting() {
            if let Some(held) = fast_path::acquire(&state.db, &caller, kind, id, &policy).await? {
                return Ok(HttpResponse::Created().json(lock_view(&held)));
            }
        }
    }
    let mode = AcquireMode {
        takeover,
        wait,
        deep,
    };
    let acquired = state
        .db
        .write_retrying(caller.session_id().cloned(), move |tx| {
            // First ordered with deep acquires (see `crate::locks`). Then
            // locking the record's row orders this acquire with guarded
            // writes of the same record (PostgreSQL; SQLite writes are
            // serial) — but for a deep one, which already excludes every
            // other lock write, and would only deadlock with a holder's
            // write. Then caller, case and role in one query.
            Lock::order_with_deep_acquires(tx.conn, deep)?;
            let target = match target.resolve(tx, !deep) {
                Ok(target) => target,
                Err(e) => {
                    caller.clone().load(tx.conn)?; // 401 comes before 404
                    return Err(e);
                }
            };
            let (actor, case, rank) = caller.clone().load_on_case(tx.conn, target.case_id)?;
            require(rank, &case, Role::Editor)?;
            engine::acquire(tx, &actor, &target, mode, &policy)
        })
        .await?;
    Ok(match acquired {
        Acquired::Created(held) => HttpResponse::Created().json(lock_view(&held)),
        Acquired::Renewed(held) => HttpResponse::Ok().json(lock_view(&held)),
        Acquired::Waiting(Joined::New(queued)) => {
            HttpResponse::Accepted().json(waiter_view(&queued))
        }
        Acquired::Waiting(Joined::Again(queued)) => HttpResponse::Ok().json(waiter_view(&queued)),
    })
}

/// What `POST /locks` answers with 200: the lock this tab holds, or (with
/// `wait`) its place in line. Their `type` tells them apart.
pub struct LockOrWaiter;

impl utoipa::PartialSchema for LockOrWaiter {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{OneOfBuilder, Ref};
        OneOfBuilder::new()
            .item(Ref::from_schema_name(LockView::name()))
            .item(Ref::from_schema_name(WaiterView::name()))
            .description(Some(
                "The lock this tab holds, or (with `wait`) its place in line; `type` says which.",
            ))
            .into()
    }
}

impl ToSchema for LockOrWaiter {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.extend([
            (LockView::name().into(), LockView::schema()),
            (WaiterView::name().into(), WaiterView::schema()),
        ]);
        LockView::schemas(schemas);
        WaiterView::schemas(schemas);
    }
}

/// `GET /locks/:id`: readers of its case.
#[utoipa::path(get, operation_id = "showLock", path = "/locks/{id}", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 200, description = "The lock", body = LockView),
        (status = 403, description = "You are not a member of its case"),
    ))]
pub async fn show(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    let held = state
        .db
        .read(move |conn| {
            let gone = || AppError::not_found(format!("Lock {id} does not exist (any more)."));
            let held = Lock::find(conn, id)?.ok_or_else(gone)?;
            let case = case_of(conn, held.lock.case_id)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            if crate::locks::holding::overdue(&held.lock, crate::db::now(conn)?, &policy).is_some()
            {
                return Err(gone());
            }
            Ok(held)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IndexQuery {
    /// The case's slug.
    #[param(required = true, value_type = String)]
    case: Option<String>,
}

/// `GET /locks?case=:slug`: the active locks of a case.
#[utoipa::path(get, operation_id = "listLocks", path = "/locks", tag = "locks",
    params(IndexQuery),
    responses(
        (status = 200, description = "The case's active locks, oldest first", body = Vec<LockView>),
        (status = 403, description = "You are not a member of the case"),
        (status = 404, description = "No case has this slug"),
        (status = 422, description = "`case` is missing"),
    ))]
pub async fn index(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<IndexQuery>,
) -> AppResult<HttpResponse> {
    let slug = query
        .into_inner()
        .case
        .ok_or_else(|| AppError::invalid("Say which case: GET /locks?case=<slug>."))?;
    let policy = state.policy;
    let locks = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            active_locks(conn, case.id, &policy)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_views(&locks)))
}

/// `GET /locks/status?lockableType=Ticket&lockableParam=1`.
#[utoipa::path(get, operation_id = "lockStatus", path = "/locks/status", tag = "locks",
    params(LockableRef),
    responses(
        (status = 200, description = "`owned` (your tab holds it, or a deep lock of yours covers it), `locked` (someone else does: `lock` is theirs, maybe the deep lock on its page or case) or `unlocked`, with the record's waiting line", body = LockStatusView),
        (status = 403, description = "You are not a member of its case"),
        (status = 404, description = "No record has this type and id"),
        (status = 422, description = "`lockableType` or `lockableParam` is missing or invalid"),
    ))]
pub async fn status(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<LockableRef>,
) -> AppResult<HttpResponse> {
    let target = query.into_inner();
    let policy = state.policy;
    let (status, waiters) = state
        .db
        .read(move |conn| {
            let (case, target) = target.look_up(conn)?;
            authorize(conn, &actor.user, &case, Role::Reader)?;
            let Some(target) = target else {
                return Ok::<_, AppError>((LockStatus::Unlocked, Vec::new()));
            };
            let status = engine::status(conn, &actor, &target, &policy)?;
            let (type_name, id) = (target.identity.type_name, target.identity.id);
            let now = crate::db::now(conn)?;
            let waiters = line::line_of(conn, type_name, id, now)?;
            Ok::<_, AppError>((status, waiters))
        })
        .await?;
    let (state, lock) = match status {
        LockStatus::Owned(held) => (LockState::Owned, Some(lock_view(&held))),
        LockStatus::Locked(held) => (LockState::Locked, Some(lock_view(&held))),
        LockStatus::Unlocked => (LockState::Unlocked, None),
    };
    Ok(HttpResponse::Ok().json(LockStatusView {
        state,
        lock,
        waiters: waiter_views(&waiters),
    }))
}

/// `POST /locks/:id/refresh`: the holder renews lease and activity.
#[utoipa::path(post, operation_id = "refreshLock", path = "/locks/{id}/refresh", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 200, description = "Lease and activity renewed", body = LockView),
        (status = 403, description = "Only the holding tab can refresh it"),
    ))]
pub async fn refresh(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    let held = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            engine::refresh(tx, &actor, id, &policy)
        })
        .await?;
    Ok(HttpResponse::Ok().json(lock_view(&held)))
}

/// `DELETE /locks/:id`: release (holder) or break (equal or higher rank).
#[utoipa::path(delete, operation_id = "releaseLock", path = "/locks/{id}", tag = "locks",
    params(("id" = i64, Path, description = "The lock's id (its token)")),
    responses(
        (status = 204, description = "Released (by its holder) or broken (by an editor of equal or higher rank, recorded as `overridden`)"),
        (status = 403, description = "`forbidden`: not an editor of its case; `outranked` (with `lock`): the holder outranks you"),
    ))]
pub async fn destroy(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<LockId>,
) -> AppResult<HttpResponse> {
    let id = id.into_inner();
    let policy = state.policy;
    let fast = state.settings.lock_fast_path;
    if fast
        && fast_path::release(&state.db, &caller, id, &policy)
            .await?
            .is_some()
    {
        return Ok(HttpResponse::NoContent().finish());
    }
    state
        .db
        .write(caller.session_id().cloned(), move |tx| {
            let actor = caller.load(tx.conn)?;
            engine::release(tx, &actor, id, &policy)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Only `mine` (the calling tab, from `X-Session-ID`).
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "lowercase")]
pub enum SessionSelector {
    Mine,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    #[param(required = true, value_type = SessionSelector)]
    session: Option<String>,
}

/// `DELETE /locks?session=mine`: releases every lock of the calling tab and
/// takes it out of every waiting line.
#[utoipa::path(delete, operation_id = "releaseMyLocks", path = "/locks", tag = "locks",
    params(
        SessionQuery,
        ("X-Session-ID" = String, Header, description = "Required here: the tab whose locks to release."),
    ),
    responses(
        (status = 204, description = "Every lock of the calling tab is released, and it left every waiting line"),
        (status = 422, description = "`session` is not `mine`, or no `X-Session-ID` was sent"),
    ))]
pub async fn destroy_mine(
    state: web::Data<AppState>,
    actor: Actor,
    query: web::Query<SessionQuery>,
) -> AppResult<HttpResponse> {
    if query.session.as_deref() != Some("mine") {
        return Err(AppError::invalid(
            "Use DELETE /locks?session=mine to release your tab's locks.",
        ));
    }
    let session_id = actor.session_id.clone().ok_or_else(|| {
        AppError::invalid("Send X-Session-ID to say which tab's locks to release.")
    })?;
    let policy = state.policy;
    state
        .db
        .write_retrying(actor.session_id.clone(), move |tx| {
            engine::release_session(tx, &actor, &session_id, &policy)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// How many, newest first (default 100).
    #[param(nullable = false, minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// Only events older than this event id (to page back).
    #[param(nullable = false, minimum = 0)]
    before: Option<i64>,
}

/// `GET /cases/:slug/lock_events` (managers): newest first; `?limit=` (at
/// most 1000, default 100) and `?before=<id>` page back.
#[utoipa::path(get, operation_id = "listLockEvents", path = "/cases/{slug}/lock_events", tag = "locks",
    params(("slug" = String, Path, description = "The case's slug"), EventsQuery),
    responses(
        (status = 200, description = "The audit trail, newest first", body = Vec<LockEventView>),
        (status = 403, description = "Only a manager of the case can do this"),
        (status = 422, description = "`limit` or `before` is out of range"),
    ))]
pub async fn events(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> AppResult<HttpResponse> {
    let EventsQuery { limit, before } = query.into_inner();
    let limit = limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(AppError::invalid("limit must be between 1 and 1000."));
    }
    if before.is_some_and(|b| b < 0) {
        return Err(AppError::invalid("before must be an event id (0 or more)."));
    }
    let events = state
        .db
        .read(move |conn| {
            let case = case_by_slug(conn, &slug)?;
            authorize(conn, &actor.user, &case, Role::Manager)?;
            let events = LockEvent::of_case(conn, case.id, limit, before.map(LockEventId))?;
            let mut ids: Vec<UserId> = events
                .iter()
                .flat_map(|e| [Some(e.holder_id), e.actor_id])
                .flatten()
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let users = User::refs(conn, &ids)?;
            let user = |id: UserId| users.iter().find(|u| u.id == id);
            Ok::<_, AppError>(
                events
                    .iter()
                    .filter_map(|e| {
                        let holder = user(e.holder_id)?;
                        Some(lock_event_view(e, e.actor_id.and_then(user), holder))
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .await?;
    Ok(HttpResponse::Ok().json(events))
}
