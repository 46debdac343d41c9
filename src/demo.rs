//! `serve --demo`: three people and a sample case, created only if absent.

use crate::auth::password;
use crate::db::{Database, DbError, Tx};
use crate::error::{AppError, AppResult};
use crate::models::{Card, Case, Edgenote, Membership, Page, Role, User};

pub const DEMO_PASSWORD: &str = "demo";
pub const DEMO_CASE: &str = "sample-case";

/// (email, name, site admin, role on the sample case)
pub const PEOPLE: [(&str, &str, bool, Role); 3] = [
    ("alice@example.com", "Alice", true, Role::Manager),
    ("bob@example.com", "Bob", false, Role::Editor),
    ("carol@example.com", "Carol", false, Role::Editor),
];

pub async fn seed(db: &Database) -> AppResult<()> {
    let hash = actix_web::web::block(|| password::hash(DEMO_PASSWORD))
        .await
        .map_err(|_| AppError::Db(DbError::Cancelled))?
        .map_err(AppError::Unavailable)?;
    db.write(None, move |tx| seed_in(tx, &hash)).await
}

fn seed_in(tx: &mut Tx, hash: &str) -> AppResult<()> {
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
    let case = Case::create(
        tx.conn,
        DEMO_CASE,
        "The Lighthouse Keeper's Dilemma",
        tx.now,
    )?;
    for (user, role) in &people {
        Membership::create(tx.conn, case.id, user.id, *role, tx.now)?;
    }
    let pages = [
        (
            "Introduction",
            [
                "The lighthouse on Gull Rock has been automated.",
                "Its last keeper must decide what to do next.",
            ],
        ),
        (
            "The decision",
            [
                "Option A: retrain as a harbour pilot.",
                "Option B: turn the keeper's cottage into a museum.",
            ],
        ),
    ];
    for (title, cards) in pages {
        let page = Page::create(tx.conn, case.id, title, None, tx.now)?;
        for content in cards {
            Card::create(tx.conn, case.id, page.id, content, None, tx.now)?;
        }
    }
    Edgenote::create(
        tx.conn,
        case.id,
        "gull-rock-map",
        "Map of Gull Rock",
        "https://example.com/gull-rock.png",
        tx.now,
    )?;
    Edgenote::create(
        tx.conn,
        case.id,
        "keeper-interview",
        "Interview with the keeper",
        "https://example.com/interview.mp3",
        tx.now,
    )?;
    Ok(())
}
