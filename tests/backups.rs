//! SQLite backups: `baton backup FILE` while a server on the same file takes
//! a storm of saves over HTTP, the copy checked by SQLite and served by
//! another baton; scheduled backups and how many are kept; and the refusals
//! (exit 2, nothing half-written).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::models::Role;
use common::{described, run_baton, text, Backend, ServerProcess, TestApp, TestDb, TestUser};
use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use serde_json::{json, Value};

#[derive(QueryableByName)]
struct Check {
    #[diesel(sql_type = Text)]
    integrity_check: String,
}

/// `PRAGMA integrity_check` of a SQLite file: "ok" when it is sound.
fn integrity(path: &Path) -> String {
    let mut conn =
        SqliteConnection::establish(path.to_str().expect("UTF-8 path")).expect("open the copy");
    let rows: Vec<Check> = diesel::sql_query("PRAGMA integrity_check")
        .load(&mut conn)
        .expect("integrity_check");
    rows.into_iter()
        .map(|r| r.integrity_check)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Files in `dir` whose names start with `prefix`, sorted.
fn files_starting(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

/// A save acknowledged by the server: which card, its content's number, when.
struct Ack {
    card: i64,
    n: u64,
    at: Instant,
}

/// One writer of the storm: saves `card` with content 1, 2, 3, … (each
/// after the previous one's answer) until `stop`; the acknowledged saves.
async fn save_storm(
    http: reqwest::Client,
    base: String,
    user: TestUser,
    card: i64,
    stop: Arc<AtomicBool>,
) -> Vec<Ack> {
    let mut acks = Vec::new();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let response = http
            .patch(format!("{base}/cards/{card}"))
            .bearer_auth(&user.token)
            .json(&json!({ "card": { "content": n.to_string() } }))
            .send()
            .await
            .expect("PATCH");
        assert_eq!(response.status().as_u16(), 200, "save {n} of card {card}");
        acks.push(Ack {
            card,
            n,
            at: Instant::now(),
        });
    }
    acks
}

#[actix_web::test]
async fn a_backup_taken_during_a_save_storm_holds_every_save_acknowledged_before_it() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let bob = app.user("Bob").await;
    let fixture = app.case("c", &[(&bob, Role::Editor)]).await;
    let mut cards = vec![fixture.card_id];
    for i in 0..7 {
        cards.push(app.card(&fixture, &format!("card {i}")).await);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = cards
        .iter()
        .map(|&card| {
            actix_web::rt::spawn(save_storm(
                app.http.clone(),
                app.base.clone(),
                bob.clone(),
                card,
                stop.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join("copy.sqlite3");
    let began = Instant::now();
    let output = {
        let (url, copy) = (app.db_url.clone(), copy.clone());
        tokio::task::spawn_blocking(move || {
            run_baton(&url, &["backup", copy.to_str().expect("UTF-8 path")])
        })
        .await
        .expect("backup thread")
    };
    let ended = Instant::now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let mut acks = Vec::new();
    for writer in writers {
        acks.extend(writer.await.expect("writer"));
    }
    assert!(output.status.success(), "{}", described(&output));
    let said = text(&output.stdout);
    let size = std::fs::metadata(&copy).expect("the copy").len();
    assert!(
        said.contains(copy.to_str().unwrap()) && said.contains(&format!("{size} bytes")),
        "the file and its size: {said}"
    );
    let during = acks.iter().filter(|a| a.at > began && a.at < ended).count();
    let after = acks.iter().filter(|a| a.at >= ended).count();
    println!(
        "{} saves acknowledged, {during} while the backup ran ({:?}), {after} after it; {size} bytes",
        acks.len(),
        ended - began
    );
    assert!(after > 0, "the saves did not go on");
    assert_eq!(integrity(&copy), "ok");
    assert_eq!(
        files_starting(dir.path(), "."),
        Vec::<PathBuf>::new(),
        "a temporary file was left beside the copy"
    );

    // A server on the copy has every save acknowledged before the backup began.
    let copy_url = copy.to_str().unwrap().to_owned();
    let server = ServerProcess::spawn(&copy_url, "restored", &[]).await;
    for &card in &cards {
        let before: Vec<&Ack> = acks
            .iter()
            .filter(|a| a.card == card && a.at < began)
            .collect();
        let last = before.iter().map(|a| a.n).max().unwrap_or(0);
        let response = app
            .http
            .get(format!("{}/cards/{card}", server.base))
            .bearer_auth(&bob.token)
            .send()
            .await
            .expect("GET");
        assert_eq!(response.status().as_u16(), 200, "card {card} in the copy");
        let restored: Value = response.json().await.expect("JSON");
        let content: u64 = restored["content"]
            .as_str()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        assert!(
            content >= last,
            "card {card}: save {last} was acknowledged before the backup, the copy has {content}"
        );
        assert!(
            restored["version"].as_u64().unwrap_or(0) > last,
            "card {card}: version {} in the copy, {last} saves acknowledged before it",
            restored["version"]
        );
    }
}

#[test]
fn a_backup_never_overwrites_a_file_and_exits_2() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    assert!(run_baton(&url, &["migrate"]).status.success());
    let dir = tempfile::tempdir().expect("temp dir");
    let there = dir.path().join("there.sqlite3");
    std::fs::write(&there, "keep me").unwrap();
    let output = run_baton(&url, &["backup", there.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", described(&output));
    let said = text(&output.stderr);
    assert!(
        said.contains("exists") && said.contains("there.sqlite3"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&there).unwrap(), "keep me");
    assert_eq!(files_starting(dir.path(), "."), Vec::<PathBuf>::new());
}

#[test]
fn a_backup_where_no_file_can_be_written_exits_2() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    assert!(run_baton(&url, &["migrate"]).status.success());
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-dir").join("b.sqlite3");
    let output = run_baton(&url, &["backup", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", described(&output));
    assert!(
        text(&output.stderr).contains("no-such-dir"),
        "{}",
        described(&output)
    );

    // A file where the directory should be.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = run_baton(&url, &["backup", file.join("b.sqlite3").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", described(&output));
    assert!(
        text(&output.stderr).contains("not a directory"),
        "{}",
        described(&output)
    );
    assert_eq!(files_starting(dir.path(), "."), Vec::<PathBuf>::new());
}

#[test]
fn a_backup_of_a_database_that_does_not_exist_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = dir.path().join("nothing.sqlite3");
    let output = run_baton(
        url.to_str().unwrap(),
        &["backup", dir.path().join("b.sqlite3").to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2), "{}", described(&output));
    assert!(
        text(&output.stderr).contains("no database"),
        "{}",
        described(&output)
    );
    assert!(!url.exists(), "the backup made a database");
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn a_backup_on_postgres_exits_2_naming_pg_dump() {
    let (_db, url) = TestDb::create(Backend::Postgres).expect("BATON_TEST_POSTGRES_URL");
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("b.sqlite3");
    let output = run_baton(&url, &["backup", target.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", described(&output));
    let said = text(&output.stderr);
    assert!(
        said.contains("pg_dump") && said.contains("continuous archiving"),
        "{said}"
    );
    assert!(!target.exists());
}

/// Waits (at most 30 s) until `dir` holds `count` scheduled backups taken
/// after `since` (by their names); the backups there then.
async fn wait_for_backups(dir: &Path, count: usize, since: &str) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = files_starting(dir, "baton-");
        let new = found
            .iter()
            .filter(|p| p.file_name().unwrap().to_str().unwrap() > since)
            .count();
        if new >= count {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{count} scheduled backups were not made: {found:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn scheduled_backups_keep_only_the_newest() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    let dir = tempfile::tempdir().expect("temp dir");
    let old = [
        "baton-20200101T000000.000Z.sqlite3",
        "baton-20200102T000000.000Z.sqlite3",
        "baton-20200103T000000.000Z.sqlite3",
    ];
    for name in old {
        std::fs::write(dir.path().join(name), "an old backup").unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not a backup").unwrap();
    let since = baton::backup::file_name(chrono::Utc::now());
    let _server = ServerProcess::spawn(
        &url,
        "scheduled",
        &[
            ("BATON_BACKUP_EVERY", "1s"),
            ("BATON_BACKUP_KEEP", "2"),
            ("BATON_BACKUP_DIR", dir.path().to_str().unwrap()),
        ],
    )
    .await;
    // Two taken while serving: both of them kept, every older one deleted.
    let found = wait_for_backups(dir.path(), 2, &since).await;
    let kept = wait_until_kept(dir.path(), 2).await;
    assert!(
        kept.iter()
            .all(|p| p.file_name().unwrap().to_str().unwrap() > since.as_str()),
        "{found:?} then {kept:?}"
    );
    for backup in &kept {
        assert_eq!(integrity(backup), "ok", "{}", backup.display());
    }
    assert!(
        dir.path().join("notes.txt").exists(),
        "another file was deleted"
    );
}

/// Waits until exactly `keep` scheduled backups are in `dir` (a backup is
/// pruned right after the next one is written); them.
async fn wait_until_kept(dir: &Path, keep: usize) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = files_starting(dir, "baton-");
        if found.len() == keep {
            return found;
        }
        assert!(Instant::now() < deadline, "not pruned to {keep}: {found:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn scheduled_backups_go_beside_the_database_by_default() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    let since = baton::backup::file_name(chrono::Utc::now());
    let _server = ServerProcess::spawn(&url, "scheduled", &[("BATON_BACKUP_EVERY", "1h")]).await;
    let beside = Path::new(&url).parent().unwrap().join("backups");
    // Due at once: no backup was there yet.
    let found = wait_for_backups(&beside, 1, &since).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(integrity(&found[0]), "ok");
}

/// `baton serve` with `env`, which must exit without serving: its status
/// and stderr.
fn refused_serve(url: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_baton"));
    command
        .args(["serve", "--dev", "--bind", "127.0.0.1:0"])
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run baton serve");
    (output.status.code(), text(&output.stderr))
}

#[test]
fn bad_backup_and_retention_settings_stop_serve_with_exit_2_naming_them() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    let dir = tempfile::tempdir().expect("temp dir");
    let a_file = dir.path().join("a-file");
    std::fs::write(&a_file, "").unwrap();
    let cases: [(&str, &str); 5] = [
        ("BATON_BACKUP_EVERY", "often"),
        ("BATON_BACKUP_KEEP", "0"),
        ("BATON_BACKUP_KEEP", "many"),
        ("BATON_AUDIT_RETENTION", "forever"),
        ("BATON_AUDIT_RETENTION", "0s"),
    ];
    for (setting, value) in cases {
        let (status, said) = refused_serve(&url, &[(setting, value)]);
        assert_eq!(status, Some(2), "{setting}={value}: {said}");
        assert!(said.contains(setting), "{setting}={value}: {said}");
    }
    let (status, said) = refused_serve(
        &url,
        &[
            ("BATON_BACKUP_EVERY", "1h"),
            ("BATON_BACKUP_DIR", a_file.to_str().unwrap()),
        ],
    );
    assert_eq!(status, Some(2), "{said}");
    assert!(said.contains("BATON_BACKUP_DIR"), "{said}");
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn scheduled_backups_on_postgres_stop_serve_with_exit_2_naming_pg_dump() {
    let (_db, url) = TestDb::create(Backend::Postgres).expect("BATON_TEST_POSTGRES_URL");
    let (status, said) = refused_serve(&url, &[("BATON_BACKUP_EVERY", "6h")]);
    assert_eq!(status, Some(2), "{said}");
    assert!(
        said.contains("BATON_BACKUP_EVERY") && said.contains("pg_dump"),
        "{said}"
    );
    // The database was left as it was: not even migrated.
    let mut conn = diesel::PgConnection::establish(&url).expect("connect");
    assert!(conn.batch_execute("SELECT 1 FROM locks").is_err());
}
