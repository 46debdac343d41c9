//! The lockable content records: cases, pages, cards, edgenotes.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Identity, LockView, OnlineUserView, WaiterView};
use crate::clock::utc;
use crate::models::{Card, Case, Edgenote, Page};

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Case)]
pub struct CaseView {
    #[serde(flatten)]
    pub identity: Identity,
    pub slug: String,
    pub title: String,
    /// Starts at 1; every update increments it. Send it back as `If-Match`.
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Page)]
pub struct PageView {
    #[serde(flatten)]
    pub identity: Identity,
    pub case_id: i64,
    pub position: i32,
    pub title: String,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Card)]
pub struct CardView {
    #[serde(flatten)]
    pub identity: Identity,
    pub case_id: i64,
    pub page_id: i64,
    pub position: i32,
    pub content: String,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Edgenote)]
pub struct EdgenoteView {
    #[serde(flatten)]
    pub identity: Identity,
    pub case_id: i64,
    pub slug: String,
    pub caption: String,
    pub content: String,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Any lockable record: in errors (`current`, `lockable`) and frames.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = Record)]
pub enum RecordView {
    Case(CaseView),
    Page(PageView),
    Card(CardView),
    Edgenote(EdgenoteView),
}

impl RecordView {
    pub fn identity(&self) -> &Identity {
        match self {
            RecordView::Case(v) => &v.identity,
            RecordView::Page(v) => &v.identity,
            RecordView::Card(v) => &v.identity,
            RecordView::Edgenote(v) => &v.identity,
        }
    }
}

/// A page with its cards, as in `GET /cases/:slug`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = PageWithCards)]
pub struct PageWithCardsView {
    #[serde(flatten)]
    pub page: PageView,
    pub cards: Vec<CardView>,
}

/// `GET /cases/:slug`: the case with everything in it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CaseDetail)]
pub struct CaseDetailView {
    #[serde(flatten)]
    pub case: CaseView,
    pub pages: Vec<PageWithCardsView>,
    pub edgenotes: Vec<EdgenoteView>,
    pub active_locks: Vec<LockView>,
    /// Every live waiter of the case, line by line, first first.
    pub waiters: Vec<WaiterView>,
    pub online_users: Vec<OnlineUserView>,
    /// The caller's rank on the case: `reader`, `editor`, `manager` or `site admin`.
    #[schema(example = "editor")]
    pub role: String,
}

impl From<&Case> for CaseView {
    fn from(case: &Case) -> CaseView {
        CaseView {
            identity: Identity::of(case),
            slug: case.slug.clone(),
            title: case.title.clone(),
            version: case.version,
            created_at: utc(case.created_at),
            updated_at: utc(case.updated_at),
        }
    }
}

impl From<&Page> for PageView {
    fn from(page: &Page) -> PageView {
        PageView {
            identity: Identity::of(page),
            case_id: page.case_id.get(),
            position: page.position,
            title: page.title.clone(),
            version: page.version,
            created_at: utc(page.created_at),
            updated_at: utc(page.updated_at),
        }
    }
}

impl From<&Card> for CardView {
    fn from(card: &Card) -> CardView {
        CardView {
            identity: Identity::of(card),
            case_id: card.case_id.get(),
            page_id: card.page_id.get(),
            position: card.position,
            content: card.content.clone(),
            version: card.version,
            created_at: utc(card.created_at),
            updated_at: utc(card.updated_at),
        }
    }
}

impl From<&Edgenote> for EdgenoteView {
    fn from(note: &Edgenote) -> EdgenoteView {
        EdgenoteView {
            identity: Identity::of(note),
            case_id: note.case_id.get(),
            slug: note.slug.clone(),
            caption: note.caption.clone(),
            content: note.content.clone(),
            version: note.version,
            created_at: utc(note.created_at),
            updated_at: utc(note.updated_at),
        }
    }
}

impl From<&Case> for RecordView {
    fn from(record: &Case) -> RecordView {
        RecordView::Case(record.into())
    }
}

impl From<&Page> for RecordView {
    fn from(record: &Page) -> RecordView {
        RecordView::Page(record.into())
    }
}

impl From<&Card> for RecordView {
    fn from(record: &Card) -> RecordView {
        RecordView::Card(record.into())
    }
}

impl From<&Edgenote> for RecordView {
    fn from(record: &Edgenote) -> RecordView {
        RecordView::Edgenote(record.into())
    }
}
