//! SQLite's group commit (`baton::db` writer): requests that wait together
//! share one transaction, yet each commits whole or not at all, and their
//! broadcasts go out in the order they were run.

mod common;

use std::sync::Arc;
use std::time::Duration;

use baton::db::{Database, DbError, Frame, Outgoing};
use baton::models::CaseId;
use baton::realtime::hub::{Hub, LocalBus};
use bytestring::ByteString;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

use common::{Backend, TestDb};

#[derive(QueryableByName)]
struct Note {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// A database with a scratch table `notes (n)`, and the hub its commits
/// publish to.
fn open() -> (TestDb, Database, Arc<Hub>) {
    let (test_db, url) = TestDb::create(Backend::Sqlite).expect("SQLite is always there");
    let hub = Arc::new(Hub::default());
    let bus = Arc::new(LocalBus { hub: hub.clone() });
    let db = Database::open(&url, 2, Duration::from_secs(10), bus).expect("open the database");
    let mut conn = baton::db::connect(&url).expect("connect");
    conn.batch_execute("CREATE TABLE notes (n BIGINT NOT NULL)")
        .expect("scratch table");
    (test_db, db, hub)
}

fn insert(conn: &mut baton::db::DbConn, n: i64) -> QueryResult<usize> {
    diesel::sql_query("INSERT INTO notes (n) VALUES (?)")
        .bind::<BigInt, _>(n)
        .execute(conn)
}

fn frame(n: i64) -> Outgoing {
    Outgoing::Frame(Frame {
        case_id: 1,
        text: ByteString::from(n.to_string()),
    })
}

async fn notes(db: &Database) -> Vec<i64> {
    db.read(|conn| {
        diesel::sql_query("SELECT n FROM notes ORDER BY n")
            .load::<Note>(conn)
            .map_err(DbError::from)
    })
    .await
    .expect("read notes")
    .into_iter()
    .map(|note| note.n)
    .collect()
}

/// What a request of the test does after inserting its row.
#[derive(Clone, Copy)]
enum Ending {
    Commit,
    Fail,
    Panic,
}

fn ending(n: i64) -> Ending {
    match n {
        5 => Ending::Fail,
        7 => Ending::Panic,
        _ => Ending::Commit,
    }
}

#[actix_web::test]
async fn requests_committed_together_keep_their_own_outcomes() {
    let (_test_db, db, hub) = open();
    let mut frames = hub.subscribe(CaseId(1));

    // Request 0 holds the writer, so that 1..=12 queue and then run as one
    // group behind it.
    let first = {
        let db = db.clone();
        tokio::spawn(async move {
            db.write(None, |tx| {
                std::thread::sleep(Duration::from_millis(300));
                insert(tx.conn, 0)?;
                tx.publish(frame(0));
                Ok::<_, DbError>(())
            })
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut queued = Vec::new();
    for n in 1..=12 {
        let db = db.clone();
        queued.push(tokio::spawn(async move {
            db.write(None, move |tx| {
                insert(tx.conn, n)?;
                tx.publish(frame(n));
                match ending(n) {
                    Ending::Commit => Ok(n),
                    Ending::Fail => Err(DbError::Migration(format!("request {n} gave up"))),
                    Ending::Panic => panic!("request {n} panicked"),
                }
            })
            .await
        }));
        // Queue them in order (the writer runs them in arrival order).
        tokio::time::sleep(Duration::from_millis(2)).await;
    }

    first.await.expect("task").expect("request 0 commits");
    for (n, task) in (1..=12).zip(queued) {
        let outcome = task.await.expect("task");
        match ending(n) {
            Ending::Commit => assert_eq!(outcome.expect("committed"), n),
            Ending::Fail => assert!(
                matches!(&outcome, Err(DbError::Migration(m)) if m == "request 5 gave up"),
                "request 5 is told its own error"
            ),
            Ending::Panic => assert!(
                matches!(outcome, Err(DbError::Cancelled)),
                "a request that panicked is answered, as cancelled"
            ),
        }
    }

    let kept: Vec<i64> = (0..=12)
        .filter(|&n| matches!(ending(n), Ending::Commit))
        .collect();
    assert_eq!(
        notes(&db).await,
        kept,
        "the failed and the panicked request wrote nothing"
    );
    let mut published = Vec::new();
    while let Ok(frame) = frames.try_recv() {
        published.push(frame.text.parse::<i64>().expect("a number"));
    }
    assert_eq!(
        published, kept,
        "broadcasts of committed requests only, in the order they ran"
    );
}

#[actix_web::test]
async fn requests_given_up_on_never_commit_and_the_writer_goes_on() {
    let (test_db, url) = TestDb::create(Backend::Sqlite).expect("SQLite is always there");
    let hub = Arc::new(Hub::default());
    let patience = Duration::from_millis(200);
    let db = Database::open(&url, 2, patience, Arc::new(LocalBus { hub })).expect("open");
    baton::db::connect(&url)
        .expect("connect")
        .batch_execute("CREATE TABLE notes (n BIGINT NOT NULL)")
        .expect("scratch table");
    let not_applied = |outcome: &Result<(), DbError>| {
        matches!(
            outcome,
            Err(DbError::Timeout {
                outcome: baton::db::TimeoutOutcome::NotApplied,
                ..
            })
        )
    };

    // Request 1 runs past its patience (it is given up on while running);
    // request 2 is given up on while it waits behind it.
    let slow = {
        let db = db.clone();
        tokio::spawn(async move {
            db.write(None, move |tx| {
                insert(tx.conn, 1)?;
                std::thread::sleep(patience + Duration::from_millis(150));
                Ok::<_, DbError>(())
            })
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let queued = db
        .write(None, |tx| {
            insert(tx.conn, 2)?;
            Ok::<_, DbError>(())
        })
        .await;
    assert!(not_applied(&queued), "the queued request: {queued:?}");
    let slow = slow.await.expect("task");
    assert!(not_applied(&slow), "the running request: {slow:?}");

    // The writer goes on with the next request.
    db.write(None, |tx| {
        insert(tx.conn, 3)?;
        Ok::<_, DbError>(())
    })
    .await
    .expect("a later request commits");
    assert_eq!(
        notes(&db).await,
        vec![3],
        "neither request given up on changed anything"
    );
    drop(test_db);
}

#[actix_web::test]
async fn a_group_that_fails_keeps_nothing_and_the_writer_starts_over() {
    let (_test_db, db, _hub) = open();

    // A request that ends the group's transaction behind the writer's back:
    // its savepoint can no longer be released, so the group fails.
    let wrecked = db
        .write(None, |tx| {
            insert(tx.conn, 1)?;
            tx.conn.batch_execute("ROLLBACK")?;
            Ok::<_, DbError>(())
        })
        .await;
    assert!(wrecked.is_err(), "{wrecked:?}");

    for n in 2..=3 {
        db.write(None, move |tx| {
            insert(tx.conn, n)?;
            Ok::<_, DbError>(())
        })
        .await
        .expect("the writer goes on, on a new connection");
    }
    assert_eq!(notes(&db).await, vec![2, 3]);
}
