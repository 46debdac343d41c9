use chrono::NaiveDateTime;
use diesel::dsl::max;
use diesel::prelude::*;

use crate::db::schema::cards;
use crate::db::DbConn;
use crate::models::{CardId, CaseId, PageId};

#[derive(Queryable, Selectable, Clone, Debug)]
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
