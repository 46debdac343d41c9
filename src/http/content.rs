//! A case's content — pages, cards, edgenotes. Every update and delete goes
//! through the guard (see [`super::guarded`]).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::WriteHeaders;
use super::locks::RecordParam;
use super::{
    case_by_slug, case_of, guarded, lockable_response, params, show_lockable, written_response,
};
use crate::auth::access::authorize;
use crate::auth::{Actor, Caller};
use crate::error::{AppError, AppResult};
use crate::locks::guard::{clear_child_locks, Preconditions};
use crate::locks::{fast_path, subtree};
use crate::locks::{Lockable, Written};
use crate::models::card::CardChanges;
use crate::models::edgenote::EdgenoteChanges;
use crate::models::page::PageChanges;
use crate::models::{Card, CardId, Edgenote, EdgenoteId, Lock, Page, PageId, Record, Role};
use crate::state::AppState;
use crate::views::{CardView, Change, EdgenoteView, Identity, PageView, Watchable};

// ---- pages ----

#[derive(Deserialize, ToSchema)]
pub struct NewPageBody {
    page: NewPageFields,
}

#[derive(Deserialize, ToSchema)]
pub struct NewPageFields {
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    title: Option<String>,
    /// Where the page goes; the end when left out.
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(default, deserialize_with = "params::whole_number")]
    position: Option<i32>,
}

#[derive(Deserialize, ToSchema)]
pub struct PageUpdateBody {
    page: PageUpdateFields,
}

#[derive(Deserialize, ToSchema)]
pub struct PageUpdateFields {
    #[schema(min_length = 1, max_length = 200, pattern = r"[^ \t\n\r]")]
    title: Option<String>,
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(default, deserialize_with = "params::whole_number")]
    position: Option<i32>,
}

/// `POST /cases/:slug/pages` (editors): 201.
#[utoipa::path(post, operation_id = "createPage", path = "/cases/{slug}/pages", tag = "content",
    params(("slug" = String, Path, description = "The case's slug")),
    request_body = NewPageBody,
    responses(
        (status = 201, description = "Created", body = PageView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of the case can do this"),
        (status = 423, description = "`locked`: someone else holds the case deeply (`lock` is that deep lock, `lockable` its record); nothing was created"),
    ))]
pub async fn create_page(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<NewPageBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().page;
    let title = params::required_text("page.title", fields.title, params::MAX_TITLE)?;
    let position = params::position("page.position", fields.position)?;
    let slug = slug.into_inner();
    let policy = state.policy;
    let page = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            let case = case_by_slug(tx.conn, &slug)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            subtree::refuse_creation_in(tx, &actor, &case, &policy)?;
            let page = Page::create(tx.conn, case.id, &title, position, tx.now)?;
            tx.emit(case.id, Change::Create, page.view().into());
            Ok::<_, AppError>(page)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &page))
}

#[utoipa::path(get, operation_id = "showPage", path = "/pages/{id}", tag = "content",
    params(("id" = i64, Path, description = "The page's id")),
    responses(
        (status = 200, description = "The page", body = PageView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "You are not a member of its case"),
    ))]
pub async fn show_page(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<PageId>,
) -> AppResult<HttpResponse> {
    show_lockable::<Page>(&state, actor, id.into_inner()).await
}

#[utoipa::path(patch, operation_id = "updatePage", path = "/pages/{id}", tag = "content",
    params(("id" = i64, Path, description = "The page's id"), WriteHeaders),
    request_body = PageUpdateBody,
    responses(
        (status = 200, description = "Saved; `version` went up by one", body = PageView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 412, description = "`stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone"),
        (status = 423, description = "`locked`: someone else holds its lock (with `lock` and `lockable`); nothing was saved"),
    ))]
pub async fn update_page(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<PageId>,
    body: web::Json<PageUpdateBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().page;
    let changes = PageChanges {
        title: params::optional_text("page.title", fields.title, params::MAX_TITLE)?,
        position: params::position("page.position", fields.position)?,
    };
    guarded::<Page, _>(
        &state,
        caller,
        preconditions,
        id.into_inner(),
        Role::Editor,
        move |tx, _, page| Ok(Written::Updated(page.update(tx.conn, &changes, tx.now)?)),
    )
    .await
}

/// `DELETE /pages/:id`: the page and its cards; refused while someone else
/// holds a lock on one of the cards.
#[utoipa::path(delete, operation_id = "deletePage", path = "/pages/{id}", tag = "content",
    params(("id" = i64, Path, description = "The page's id"), WriteHeaders),
    responses(
        (status = 204, description = "Deleted (or on one of its cards)"),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 412, description = "`stale_version` or `lock_lost` (with `current`)"),
        (status = 423, description = "`locked`: someone else holds a lock on it (or on one of its cards)"),
    ))]
pub async fn destroy_page(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<PageId>,
) -> AppResult<HttpResponse> {
    guarded::<Page, _>(
        &state,
        caller,
        preconditions,
        id.into_inner(),
        Role::Editor,
        move |tx, ctx, page| {
            page.lock_for_delete(tx.conn)?;
            let card_ids = Card::ids_of_page_for_update(tx.conn, page.id)?;
            let lockable_ids: Vec<i64> = card_ids.iter().map(|id| id.get()).collect();
            let card_locks = Lock::on_any(tx.conn, Card::TYPE, &lockable_ids)?;
            clear_child_locks(tx, ctx, card_locks)?;
            page.delete(tx.conn)?;
            for card_id in card_ids {
                let gone = Identity::new(Card::TYPE, Card::TABLE, card_id.get());
                tx.emit(page.case_id, Change::Destroy, Watchable::Gone(gone));
            }
            Ok(Written::Destroyed)
        },
    )
    .await
}

// ---- cards ----

#[derive(Deserialize, ToSchema)]
pub struct NewCardBody {
    card: NewCardFields,
}

#[derive(Deserialize, ToSchema)]
pub struct NewCardFields {
    /// May be empty.
    #[schema(required = true, nullable = false, max_length = 100000)]
    content: Option<String>,
    /// Where the card goes on its page; the end when left out.
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(default, deserialize_with = "params::whole_number")]
    position: Option<i32>,
}

#[derive(Deserialize, ToSchema)]
pub struct CardUpdateBody {
    card: CardUpdateFields,
}

#[derive(Deserialize, ToSchema)]
pub struct CardUpdateFields {
    /// Move the card to this page of its case (the end of it, unless
    /// `position` is given).
    #[serde(default, alias = "page_id", rename = "pageId")]
    #[schema(value_type = Option<RecordParam>)]
    page_id: Option<RecordParam>,
    #[schema(max_length = 100000)]
    content: Option<String>,
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(default, deserialize_with = "params::whole_number")]
    position: Option<i32>,
}

/// `POST /pages/:id/cards` (editors): 201.
#[utoipa::path(post, operation_id = "createCard", path = "/pages/{id}/cards", tag = "content",
    params(("id" = i64, Path, description = "The page's id")),
    request_body = NewCardBody,
    responses(
        (status = 201, description = "Created", body = CardView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of the case can do this"),
        (status = 423, description = "`locked`: someone else holds the page or its case deeply (`lock` is that deep lock, `lockable` its record); nothing was created"),
    ))]
pub async fn create_card(
    state: web::Data<AppState>,
    actor: Actor,
    page_id: web::Path<PageId>,
    body: web::Json<NewCardBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().card;
    let content = params::body_text("card.content", fields.content)?.ok_or_else(|| {
        AppError::invalid("card.content is required (it may be empty).".to_string())
    })?;
    let position = params::position("card.position", fields.position)?;
    let page_id = page_id.into_inner();
    let policy = state.policy;
    let card = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            let page = Page::find(tx.conn, page_id)?
                .ok_or_else(|| AppError::not_found(format!("Page {page_id} does not exist.")))?;
            let case = case_of(tx.conn, page.case_id)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            subtree::refuse_creation_in(tx, &actor, &page, &policy)?;
            let card = Card::create(tx.conn, case.id, page.id, &content, position, tx.now)?;
            tx.emit(case.id, Change::Create, card.view().into());
            Ok::<_, AppError>(card)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &card))
}

#[utoipa::path(get, operation_id = "showCard", path = "/cards/{id}", tag = "content",
    params(("id" = i64, Path, description = "The card's id")),
    responses(
        (status = 200, description = "The card", body = CardView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "You are not a member of its case"),
    ))]
pub async fn show_card(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<CardId>,
) -> AppResult<HttpResponse> {
    show_lockable::<Card>(&state, actor, id.into_inner()).await
}

#[utoipa::path(patch, operation_id = "updateCard", path = "/cards/{id}", tag = "content",
    params(("id" = i64, Path, description = "The card's id"), WriteHeaders),
    request_body = CardUpdateBody,
    responses(
        (status = 200, description = "Saved; `version` went up by one", body = CardView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 412, description = "`stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone"),
        (status = 404, description = "No card has this id, or (a move) no page has `pageId`"),
        (status = 422, description = "Invalid fields, or (a move) `pageId` is a page of another case"),
        (status = 423, description = "`locked`: someone else holds its lock, or (with `lock` the deep one) a deep lock on its page, its case or (a move) the target page; `lockable` is the locked record; nothing was saved"),
    ))]
pub async fn update_card(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<CardId>,
    body: web::Json<CardUpdateBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().card;
    let move_to = match &fields.page_id {
        Some(param) => Some(PageId(param.id().ok_or_else(|| {
            AppError::invalid(format!(
                "card.pageId must be a page's id, like \"12\"; got \"{param}\"."
            ))
        })?)),
        None => None,
    };
    let mut changes = CardChanges {
        page_id: None,
        content: params::body_text("card.content", fields.content)?,
        position: params::position("card.position", fields.position)?,
    };
    let (id, policy) = (id.into_inner(), state.policy);
    if state.settings.lock_fast_path && move_to.is_none() {
        let saved =
            fast_path::save_card(&state.db, &caller, id, preconditions, &changes, &policy).await?;
        if let Some(card) = saved {
            return Ok(written_response(Written::Updated(card)));
        }
    }
    guarded::<Card, _>(
        &state,
        caller,
        preconditions,
        id,
        Role::Editor,
        move |tx, ctx, card| {
            if let Some(page_id) = move_to.filter(|&p| p != card.page_id) {
                let page = Page::find(tx.conn, page_id)?.ok_or_else(|| {
                    AppError::not_found(format!("Page {page_id} does not exist."))
                })?;
                if page.case_id != card.case_id {
                    return Err(AppError::invalid(format!(
                        "Page {page_id} is in another case; a card moves between the pages of its own case."
                    )));
                }
                // The card's page and case were guarded with the card.
                subtree::refuse_creation_in(tx, ctx.actor, &page, &policy)?;
                changes.page_id = Some(page_id);
                if changes.position.is_none() {
                    changes.position = Some(Card::next_position(tx.conn, page_id)?);
                }
            }
            Ok(Written::Updated(card.update(tx.conn, &changes, tx.now)?))
        },
    )
    .await
}

#[utoipa::path(delete, operation_id = "deleteCard", path = "/cards/{id}", tag = "content",
    params(("id" = i64, Path, description = "The card's id"), WriteHeaders),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 412, description = "`stale_version` or `lock_lost` (with `current`)"),
        (status = 423, description = "`locked`: someone else holds a lock on it"),
    ))]
pub async fn destroy_card(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<CardId>,
) -> AppResult<HttpResponse> {
    guarded::<Card, _>(
        &state,
        caller,
        preconditions,
        id.into_inner(),
        Role::Editor,
        |tx, _, card| {
            card.delete(tx.conn)?;
            Ok(Written::Destroyed)
        },
    )
    .await
}

// ---- edgenotes ----

#[derive(Deserialize, ToSchema)]
pub struct NewEdgenoteBody {
    edgenote: NewEdgenoteFields,
}

#[derive(Deserialize, ToSchema)]
pub struct NewEdgenoteFields {
    /// Unique within the case.
    #[schema(
        required = true,
        nullable = false,
        max_length = 100,
        pattern = "^[a-z0-9][a-z0-9-]*$"
    )]
    slug: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^ \t\n\r]"
    )]
    caption: Option<String>,
    #[schema(max_length = 100000)]
    content: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct EdgenoteUpdateBody {
    edgenote: EdgenoteUpdateFields,
}

#[derive(Deserialize, ToSchema)]
pub struct EdgenoteUpdateFields {
    #[schema(max_length = 100, pattern = "^[a-z0-9][a-z0-9-]*$")]
    slug: Option<String>,
    #[schema(min_length = 1, max_length = 200, pattern = r"[^ \t\n\r]")]
    caption: Option<String>,
    #[schema(max_length = 100000)]
    content: Option<String>,
}

/// `POST /cases/:slug/edgenotes` (editors): 201.
#[utoipa::path(post, operation_id = "createEdgenote", path = "/cases/{slug}/edgenotes", tag = "content",
    params(("slug" = String, Path, description = "The case's slug")),
    request_body = NewEdgenoteBody,
    responses(
        (status = 201, description = "Created", body = EdgenoteView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of the case can do this"),
        (status = 423, description = "`locked`: someone else holds the case deeply (`lock` is that deep lock, `lockable` its record); nothing was created"),
        (status = 409, description = "Another edgenote of the case has this slug"),
    ))]
pub async fn create_edgenote(
    state: web::Data<AppState>,
    actor: Actor,
    slug: web::Path<String>,
    body: web::Json<NewEdgenoteBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().edgenote;
    let note_slug = params::slug("edgenote.slug", fields.slug)?;
    let caption = params::required_text("edgenote.caption", fields.caption, params::MAX_TITLE)?;
    let content = params::body_text("edgenote.content", fields.content)?.unwrap_or_default();
    let slug = slug.into_inner();
    let policy = state.policy;
    let note = state
        .db
        .write(actor.session_id.clone(), move |tx| {
            let case = case_by_slug(tx.conn, &slug)?;
            authorize(tx.conn, &actor.user, &case, Role::Editor)?;
            subtree::refuse_creation_in(tx, &actor, &case, &policy)?;
            if Edgenote::slug_taken(tx.conn, case.id, &note_slug)? {
                return Err(AppError::Conflict(format!(
                    "edgenote.slug '{note_slug}' is already used in this case; pick another."
                )));
            }
            let note = Edgenote::create(tx.conn, case.id, &note_slug, &caption, &content, tx.now)?;
            tx.emit(case.id, Change::Create, note.view().into());
            Ok(note)
        })
        .await?;
    Ok(lockable_response(StatusCode::CREATED, &note))
}

#[utoipa::path(get, operation_id = "showEdgenote", path = "/edgenotes/{id}", tag = "content",
    params(("id" = i64, Path, description = "The edgenote's id")),
    responses(
        (status = 200, description = "The edgenote", body = EdgenoteView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "You are not a member of its case"),
    ))]
pub async fn show_edgenote(
    state: web::Data<AppState>,
    actor: Actor,
    id: web::Path<EdgenoteId>,
) -> AppResult<HttpResponse> {
    show_lockable::<Edgenote>(&state, actor, id.into_inner()).await
}

#[utoipa::path(patch, operation_id = "updateEdgenote", path = "/edgenotes/{id}", tag = "content",
    params(("id" = i64, Path, description = "The edgenote's id"), WriteHeaders),
    request_body = EdgenoteUpdateBody,
    responses(
        (status = 200, description = "Saved; `version` went up by one", body = EdgenoteView, headers(("ETag" = String, description = "The record's version, quoted (`\"3\"`): send it back as `If-Match`"))),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 409, description = "Another edgenote of the case has this slug"),
        (status = 412, description = "`stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone"),
        (status = 423, description = "`locked`: someone else holds its lock (with `lock` and `lockable`); nothing was saved"),
    ))]
pub async fn update_edgenote(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<EdgenoteId>,
    body: web::Json<EdgenoteUpdateBody>,
) -> AppResult<HttpResponse> {
    let fields = body.into_inner().edgenote;
    let new_slug = fields
        .slug
        .map(|s| params::slug("edgenote.slug", Some(s)))
        .transpose()?;
    let changes = EdgenoteChanges {
        slug: new_slug.clone(),
        caption: params::optional_text("edgenote.caption", fields.caption, params::MAX_TITLE)?,
        content: params::body_text("edgenote.content", fields.content)?,
    };
    guarded::<Edgenote, _>(
        &state,
        caller,
        preconditions,
        id.into_inner(),
        Role::Editor,
        move |tx, _, note| {
            if let Some(slug) = new_slug.filter(|s| *s != note.slug) {
                if Edgenote::slug_taken(tx.conn, note.case_id, &slug)? {
                    return Err(AppError::Conflict(format!(
                        "edgenote.slug '{slug}' is already used in this case; pick another."
                    )));
                }
            }
            Ok(Written::Updated(note.update(tx.conn, &changes, tx.now)?))
        },
    )
    .await
}

#[utoipa::path(delete, operation_id = "deleteEdgenote", path = "/edgenotes/{id}", tag = "content",
    params(("id" = i64, Path, description = "The edgenote's id"), WriteHeaders),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Only an editor or above of its case can do this"),
        (status = 412, description = "`stale_version` or `lock_lost` (with `current`)"),
        (status = 423, description = "`locked`: someone else holds a lock on it"),
    ))]
pub async fn destroy_edgenote(
    state: web::Data<AppState>,
    caller: Caller,
    preconditions: Preconditions,
    id: web::Path<EdgenoteId>,
) -> AppResult<HttpResponse> {
    guarded::<Edgenote, _>(
        &state,
        caller,
        preconditions,
        id.into_inner(),
        Role::Editor,
        |tx, _, note| {
            note.delete(tx.conn)?;
            Ok(Written::Destroyed)
        },
    )
    .await
}
