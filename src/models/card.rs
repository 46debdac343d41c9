use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::dsl::max;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use serde::{Deserialize, Serialize};

use crate::db::schema::cards;
use crate::db::{DbConn, Prepared};
use crate::models::lock_fast_path::{micros, TokenHolder};
use crate::models::{CardId, CaseId, LockId, PageId};

/// (`Serialize`/`Deserialize`: the fast path's outbox rows carry it as JSON.)
#[derive(
    Queryable, QueryableByName, Selectable, Clone, Debug, PartialEq, Serialize, Deserialize,
)]
#[diesel(table_name = cards)]
pub struct Card {
    pub id: CardId,
    pub case_id: CaseId,
    pub page_id: PageId,
    pub position: i32,
    pub content: String,
    pub version: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = cards)]
pub struct CardChanges {
    /// A move to another page of the case.
    pub page_id: Option<PageId>,
    pub content: Option<String>,
    pub position: Option<i32>,
}

super::versioned_record!(
    Card,
    cards,
    CardChanges,
    id = CardId,
    type = "Card",
    case = case_id,
    within = page_id in Page
);

impl Card {
    pub fn of_case(conn: &mut DbConn, case_id: CaseId) -> QueryResult<Vec<Card>> {
        cards::table
            .filter(cards::case_id.eq(case_id))
            .select(Card::as_select())
            .order((cards::position.asc(), cards::id.asc()))
            .load(conn)
    }

    /// The ids of a page's cards, their rows locked until the transaction
    /// ends (PostgreSQL), so no lock can be taken on a card being deleted.
    pub fn ids_of_page_for_update(conn: &mut DbConn, page_id: PageId) -> QueryResult<Vec<CardId>> {
        let query = cards::table
            .filter(cards::page_id.eq(page_id))
            .select(cards::id)
            .order(cards::id.asc());
        crate::on_backend!(conn,
            postgres: |c| query.for_update().load(c),
            sqlite: |c| query.load(c),
        )
    }

    /// The position after the last card of a page: where a card goes when
    /// none is given.
    pub fn next_position(conn: &mut DbConn, page_id: PageId) -> QueryResult<i32> {
        let last: Option<i32> = cards::table
            .filter(cards::page_id.eq(page_id))
            .select(max(cards::position))
            .get_result(conn)?;
        Ok(last.map_or(0, |p| p.saturating_add(1)))
    }

    pub fn create(
        conn: &mut DbConn,
        case_id: CaseId,
        page_id: PageId,
        content: &str,
        position: Option<i32>,
        now: NaiveDateTime,
    ) -> QueryResult<Card> {
        let position = match position {
            Some(p) => p,
            None => Card::next_position(conn, page_id)?,
        };
        diesel::insert_into(cards::table)
            .values((
                cards::case_id.eq(case_id),
                cards::page_id.eq(page_id),
                cards::position.eq(position),
                cards::content.eq(content),
                cards::version.eq(1),
                cards::created_at.eq(now),
                cards::updated_at.eq(now),
            ))
            .returning(cards::all_columns)
            .get_result::<Card>(conn)
    }
}

/// A save made by the fast path (PostgreSQL), as its outbox row carries it:
/// the saved row, which every instance's listener renders as the general
/// path's `update` frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedCard {
    pub card: Card,
    /// The tab whose request it was.
    pub editor: Option<String>,
    /// When the statement ran (Unix microseconds), for the fan-out delay.
    pub at: i64,
}

/// A save of a card's content or position, as the fast path binds it.
pub struct FastSave<'a> {
    pub id: CardId,
    pub session_id: Option<&'a str>,
    pub lock_token: Option<LockId>,
    pub if_match: Option<i64>,
    pub content: Option<&'a str>,
    pub position: Option<i32>,
    /// The lease and idle limit a save renews and checks.
    pub ttl: Duration,
    pub idle_timeout: Duration,
    /// The case roles that may save (a site admin always may).
    pub editor_roles: &'a [&'a str],
}

/// Saves the card in one call if nothing stands in the way (the function
/// `baton_fast_card_update` in the PostgreSQL migrations restates the
/// guard); no row means "take the general path".
pub fn fast_update(
    pg: &mut PgConnection,
    caller: TokenHolder,
    save: &FastSave,
) -> QueryResult<Option<Card>> {
    Prepared::new(
        "SELECT * FROM baton_fast_card_update($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        |q| {
            q.bind::<BigInt, _>(save.id)
                .bind::<BigInt, _>(caller.user_id)
                .bind::<BigInt, _>(caller.token_id)
                .bind::<Nullable<Text>, _>(save.session_id)
                .bind::<Nullable<BigInt>, _>(save.lock_token)
                .bind::<Nullable<BigInt>, _>(save.if_match)
                .bind::<Nullable<Text>, _>(save.content)
                .bind::<Nullable<Integer>, _>(save.position)
                .bind::<BigInt, _>(micros(save.ttl))
                .bind::<BigInt, _>(micros(save.idle_timeout))
                .bind::<Array<Text>, _>(save.editor_roles)
        },
    )
    .get_result::<Card>(pg)
    .optional()
}
