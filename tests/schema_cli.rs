//! `baton schema print`, `baton schema check`, `baton schema drop` and
//! `baton serve --schema FILE`, run as the real binary: a file that cannot
//! be right is refused with exit status 2, a schema that does not fit the
//! stored records with 3 (before listening), naming each type, field and
//! count and the `baton schema drop …` commands that would settle it;
//! nothing is deleted unless such a command is run.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use baton::db::schema::{events, lock_waiters, locks, records};
use common::{described, lock_body, text, Backend, ServerProcess, TestDb, SECRET};
use diesel::prelude::*;
use serde_json::{json, Value};

fn secret() -> &'static str {
    std::str::from_utf8(SECRET).expect("UTF-8 secret")
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/schemas")
        .join(name)
}

/// `baton ARGS` on the database at `url` (none: a path where no database
/// exists), with no schema from the environment.
fn baton(url: Option<&str>, args: &[&str]) -> Output {
    // Where a default `baton.sqlite3` would go: never the repository.
    let cwd = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_baton"));
    command
        .current_dir(cwd.path())
        .args(args)
        .env("BATON_JWT_SECRET", secret())
        .env("RUST_LOG", "warn")
        .env_remove("BATON_SCHEMA");
    match url {
        Some(url) => command.env("DATABASE_URL", url),
        None => command.env_remove("DATABASE_URL"),
    };
    command.output().expect("run baton")
}

#[track_caller]
fn expect_status(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "unexpected exit status; {}",
        described(output)
    );
}

/// stdout of a run that must succeed.
#[track_caller]
fn stdout_ok(output: &Output) -> String {
    expect_status(output, 0);
    text(&output.stdout)
}

/// The one line of `message` that contains `needle`.
#[track_caller]
fn line_with<'a>(message: &'a str, needle: &str) -> &'a str {
    let lines: Vec<&str> = message.lines().filter(|l| l.contains(needle)).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one line naming {needle:?} in:\n{message}"
    );
    lines[0]
}

/// The one listed item (`  - …`) of `message` that contains `needle`: a
/// problem or a change.
#[track_caller]
fn item_with<'a>(message: &'a str, needle: &str) -> &'a str {
    let items: Vec<&str> = message
        .lines()
        .filter(|l| l.trim_start().starts_with("- ") && l.contains(needle))
        .collect();
    assert_eq!(
        items.len(),
        1,
        "expected one item naming {needle:?} in:\n{message}"
    );
    items[0]
}

/// The `baton schema drop …` commands a message prints, as arguments.
fn drop_commands(message: &str) -> Vec<Vec<String>> {
    drop_command_lines(message)
        .into_iter()
        .map(|args| args.into_iter().take(3).collect())
        .collect()
}

/// The printed `baton schema drop …` commands whole, with the database they
/// name (`--database-url …`), as a person would run them.
fn drop_command_lines(message: &str) -> Vec<Vec<String>> {
    message
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("baton schema drop "))
        .map(|l| l.split_whitespace().skip(1).map(str::to_owned).collect())
        .collect()
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write schema file");
    path
}

/// The casebook file with `from` replaced by `to` (which must occur once).
fn casebook_with(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(example("casebook.toml")).expect("casebook.toml");
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} does not occur once in casebook.toml"
    );
    text.replace(from, to)
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

// ---- What the database holds ----

/// Rows of every table the schema commands could touch.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    cases: i64,
    records: BTreeMap<String, i64>,
    locks: i64,
    waiters: i64,
    audit: i64,
}

fn counts(url: &str) -> Counts {
    let mut conn = baton::db::connect(url).expect("connect");
    let types: Vec<String> = records::table
        .select(records::record_type)
        .load(&mut conn)
        .expect("read records");
    let mut records = BTreeMap::new();
    for t in types {
        *records.entry(t).or_insert(0) += 1;
    }
    Counts {
        cases: baton::db::schema::cases::table
            .count()
            .get_result(&mut conn)
            .expect("cases"),
        records,
        locks: locks::table.count().get_result(&mut conn).expect("locks"),
        waiters: lock_waiters::table
            .count()
            .get_result(&mut conn)
            .expect("waiters"),
        audit: events::table
            .filter(events::action.is_not_null())
            .count()
            .get_result(&mut conn)
            .expect("audit"),
    }
}

/// The stored fields of every record of a type, by id.
fn stored_fields(url: &str, type_name: &str) -> BTreeMap<i64, Value> {
    let mut conn = baton::db::connect(url).expect("connect");
    records::table
        .filter(records::record_type.eq(type_name))
        .select((records::id, records::fields))
        .load::<(baton::models::RecordId, String)>(&mut conn)
        .expect("read records")
        .into_iter()
        .map(|(id, fields)| {
            let fields = serde_json::from_str(&fields).expect("fields JSON");
            (id.get(), fields)
        })
        .collect()
}

// ---- A casebook database, made by `baton serve --demo` ----

/// A database that holds the casebook's demo records, a lock on a card
/// (Alice's) with its audit row, and Bob waiting in line for that card.
struct Casebook {
    url: String,
    /// Schema files the test writes.
    dir: tempfile::TempDir,
    _db: TestDb,
}

/// The demo server that made a [`Casebook`], still running.
struct Demo {
    server: ServerProcess,
    http: reqwest::Client,
    alice: String,
}

impl Demo {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        session: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.server.base))
            .bearer_auth(token)
            .timeout(Duration::from_secs(30));
        if let Some(session) = session {
            request = request.header("X-Session-ID", session);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"))
        };
        (status, body)
    }

    /// Stops the server (SIGTERM) and waits for it to exit.
    async fn stop(mut self) {
        self.server.terminate();
        if self
            .server
            .exited_within(Duration::from_secs(20))
            .await
            .is_none()
        {
            self.server.kill();
        }
    }
}

async fn login(http: &reqwest::Client, base: &str, email: &str) -> String {
    let response = http
        .post(format!("{base}/auth/login"))
        .json(&json!({ "email": email, "password": "demo" }))
        .send()
        .await
        .expect("login");
    assert_eq!(response.status().as_u16(), 200, "login as {email}");
    let body: Value = response.json().await.expect("login JSON");
    body["token"].as_str().expect("token").to_owned()
}

/// A casebook database made by `baton serve --demo`, with the demo server
/// still running; `None` where the backend is not configured.
async fn casebook_running(backend: Backend) -> Option<(Casebook, Demo)> {
    let (db, url) = TestDb::create(backend)?;
    let server = ServerProcess::spawn_with(&url, "demo", &[], &["--demo"], Stdio::null()).await;
    let http = reqwest::Client::new();
    let alice = login(&http, &server.base, "alice@example.com").await;
    let bob = login(&http, &server.base, "bob@example.com").await;
    let demo = Demo {
        server,
        http,
        alice,
    };
    let (status, case) = demo
        .send(
            reqwest::Method::GET,
            "/cases/sample-case",
            &demo.alice,
            None,
            None,
        )
        .await;
    assert_eq!(status, 200, "{case}");
    let card_id = case["pages"][0]["cards"][0]["id"]
        .as_i64()
        .expect("a demo card");
    let alice_tab = uuid::Uuid::new_v4().to_string();
    let (status, lock) = demo
        .send(
            reqwest::Method::POST,
            "/locks",
            &demo.alice,
            Some(&alice_tab),
            Some(lock_body("Card", card_id)),
        )
        .await;
    assert_eq!(status, 201, "{lock}");
    let bob_tab = uuid::Uuid::new_v4().to_string();
    let (status, waiter) = demo
        .send(
            reqwest::Method::POST,
            "/locks",
            &bob,
            Some(&bob_tab),
            Some(json!({ "lock": { "lockableType": "Card", "lockableParam": card_id.to_string(), "wait": true } })),
        )
        .await;
    assert_eq!(status, 202, "{waiter}");
    let casebook = Casebook {
        url,
        dir: tempfile::tempdir().expect("temp dir"),
        _db: db,
    };
    Some((casebook, demo))
}

/// [`casebook_running`], the demo server stopped.
async fn casebook(backend: Backend) -> Option<Casebook> {
    let (casebook, demo) = casebook_running(backend).await?;
    demo.stop().await;
    let held = counts(&casebook.url);
    assert!(
        held.records.get("Card").copied().unwrap_or(0) > 0
            && held.records.contains_key("Page")
            && held.records.contains_key("Edgenote")
            && held.locks == 1
            && held.waiters == 1
            && held.audit >= 1,
        "the demo did not leave the expected casebook: {held:?}"
    );
    Some(casebook)
}

/// `baton serve --schema FILE` on `url`, which must exit (within 30 s)
/// without ever listening: its exit status and stderr.
fn serve_refusal(url: &str, schema: &Path) -> (ExitStatus, String) {
    serve_refusal_with(url, schema, &[])
}

/// [`serve_refusal`] with more `serve` arguments.
fn serve_refusal_with(url: &str, schema: &Path, args: &[&str]) -> (ExitStatus, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cwd = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
        .current_dir(cwd.path())
        .args(["serve", "--schema", path_str(schema)])
        .args(args)
        .env("DATABASE_URL", url)
        .env("BATON_JWT_SECRET", secret())
        .env("BATON_BIND", format!("127.0.0.1:{port}"))
        .env("RUST_LOG", "info")
        .env_remove("BATON_SCHEMA")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn baton serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("output");
            panic!(
                "baton serve --schema {} did not stop; stderr:\n{}",
                schema.display(),
                text(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let stderr = text(&output.stderr);
    assert!(
        !stderr.contains("listening on"),
        "serve listened before refusing:\n{stderr}"
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "something listens on the port serve was given"
    );
    (output.status, stderr)
}

// ---- schema print ----

#[test]
fn print_without_a_file_is_the_casebook_file() {
    let built_in = stdout_ok(&baton(None, &["schema", "print"]));
    for type_name in ["Page", "Card", "Edgenote"] {
        assert!(
            built_in.contains(&format!("[types.{type_name}]")),
            "{type_name} is not printed:\n{built_in}"
        );
    }
    let parsed: toml::Table = built_in.parse().expect("the printed schema is TOML");
    let types = parsed["types"].as_table().expect("[types]");
    assert_eq!(
        types.keys().collect::<Vec<_>>(),
        ["Page", "Card", "Edgenote"],
        "exactly the casebook's types, in its order"
    );
    let casebook = example("casebook.toml");
    let from_file = stdout_ok(&baton(
        None,
        &["schema", "print", "--schema", path_str(&casebook)],
    ));
    assert_eq!(built_in, from_file);
}

#[test]
fn print_of_kanban_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let once = stdout_ok(&baton(
        None,
        &[
            "schema",
            "print",
            "--schema",
            path_str(&example("kanban.toml")),
        ],
    ));
    for type_name in ["Column", "Card"] {
        assert!(
            once.contains(&format!("[types.{type_name}]")),
            "{type_name} is not printed:\n{once}"
        );
    }
    assert!(!once.contains("[types.Page]"), "{once}");
    let printed = write(dir.path(), "printed.toml", &once);
    let twice = stdout_ok(&baton(
        None,
        &["schema", "print", "--schema", path_str(&printed)],
    ));
    assert_eq!(once, twice);
    // BATON_SCHEMA names the file as --schema does.
    let from_env = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["schema", "print"])
        .env("BATON_SCHEMA", &printed)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run baton");
    assert_eq!(stdout_ok(&from_env), once);
}

#[test]
fn print_opens_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("never.sqlite3");
    let url = path_str(&url);
    stdout_ok(&baton(Some(url), &["schema", "print"]));
    stdout_ok(&baton(
        Some(url),
        &[
            "schema",
            "print",
            "--schema",
            path_str(&example("kanban.toml")),
        ],
    ));
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(made.is_empty(), "schema print made files: {made:?}");
    // Nor does it need a database that answers.
    stdout_ok(&baton(
        Some("postgres://nobody@127.0.0.1:1/none"),
        &["schema", "print"],
    ));
}

// ---- Files that cannot be right: exit 2, naming the file, type and key ----

/// Runs `schema check`, `schema print --schema` and `serve --schema` on a
/// bad file: each exits 2, creates no database and says the same; returns
/// what `schema check` said.
fn refused_file(file: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("untouched.sqlite3");
    let url = path_str(&db);
    let check = baton(Some(url), &["schema", "check", path_str(file)]);
    expect_status(&check, 2);
    let message = text(&check.stderr);
    assert!(
        message.contains(path_str(file)),
        "the file is not named:\n{message}"
    );
    let print = baton(Some(url), &["schema", "print", "--schema", path_str(file)]);
    expect_status(&print, 2);
    assert!(
        text(&print.stderr).contains(message.trim()),
        "schema print says otherwise: {}",
        described(&print)
    );
    let (status, serve) = serve_refusal(url, file);
    assert_eq!(status.code(), Some(2), "serve:\n{serve}");
    assert!(
        serve.contains(message.trim()),
        "serve says otherwise:\n{serve}\ncheck said:\n{message}"
    );
    assert!(!db.exists(), "a refused file opened the database");
    message
}

#[test]
fn an_unknown_key_is_exit_2_naming_file_type_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let kanban = std::fs::read_to_string(example("kanban.toml")).unwrap();
    assert!(kanban.contains("lock.lease ="));
    let file = write(
        dir.path(),
        "typo.toml",
        &kanban.replace("lock.lease =", "lock.leas ="),
    );
    let message = refused_file(&file);
    let line = line_with(&message, "leas");
    assert!(line.contains("Card"), "the type is not named: {line}");
    assert!(
        line.contains("lock.leas"),
        "the key is not named as written: {line}"
    );
}

#[test]
fn an_unknown_field_keyword_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "keyword.toml",
        "[types.Note]\nfields.body = { type = \"string\", maxLenght = 10 }\n",
    );
    let message = refused_file(&file);
    let line = line_with(&message, "maxLenght");
    assert!(line.contains("Note") && line.contains("body"), "{line}");
}

#[test]
fn a_cycle_of_parents_is_exit_2_naming_each_type() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "cycle.toml",
        "[types.Shelf]\nparent = \"Binder\"\n\n\
         [types.Folder]\nparent = \"Shelf\"\n\n\
         [types.Binder]\nparent = \"Folder\"\n\n\
         [types.Loose]\nparent = \"Case\"\n",
    );
    let message = refused_file(&file);
    for type_name in ["Shelf", "Folder", "Binder"] {
        assert!(
            message.contains(type_name),
            "{type_name} is not named:\n{message}"
        );
    }
    assert!(
        !message.contains("Loose"),
        "a type outside the cycle is blamed:\n{message}"
    );
}

#[test]
fn a_parent_that_is_not_declared_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "orphan.toml",
        "[types.Card]\nparent = \"Lane\"\nfields.content = { type = \"string\" }\n",
    );
    let message = refused_file(&file);
    let line = line_with(&message, "Lane");
    assert!(line.contains("Card"), "{line}");
}

#[test]
fn a_taken_type_name_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "taken.toml",
        "[types.Lock]\nfields.title = { type = \"string\" }\n",
    );
    let message = refused_file(&file);
    assert!(message.contains("Lock"), "{message}");
}

#[test]
fn reserved_field_names_are_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "id",
        "type",
        "table",
        "param",
        "caseId",
        "columnId",
        "position",
        "version",
        "createdAt",
        "updatedAt",
    ] {
        let file = write(
            dir.path(),
            &format!("reserved-{name}.toml"),
            &format!(
                "[types.Column]\nfields.title = {{ type = \"string\" }}\n\n\
                 [types.Card]\nparent = \"Column\"\nfields.{name} = {{ type = \"string\" }}\n"
            ),
        );
        let check = baton(None, &["schema", "check", path_str(&file)]);
        expect_status(&check, 2);
        let message = text(&check.stderr);
        assert!(message.contains(path_str(&file)), "{message}");
        let line = line_with(&message, &format!("fields.{name}"));
        assert!(
            line.contains("Card"),
            "{name}: the type is not named: {line}"
        );
    }
    // The parent's id key is reserved on the child only.
    let file = write(
        dir.path(),
        "column-id-on-column.toml",
        "[types.Column]\nfields.columnId = { type = \"string\" }\n",
    );
    let check = baton(
        Some(path_str(&dir.path().join("db.sqlite3"))),
        &["schema", "check", path_str(&file)],
    );
    expect_status(&check, 0);
}

// ---- The schema against the stored records ----

on_both_backends!(|backend| async move { TestDb::create(backend) } =>
    check_of_kanban_on_a_fresh_database_is_exit_0,
);
on_both_backends!(casebook =>
    serve_of_kanban_on_a_casebook_exits_3_before_listening,
    check_of_kanban_on_a_casebook_is_exit_3_with_drop_commands,
    the_printed_drop_commands_make_kanban_fit,
    a_new_optional_field_fits,
    a_new_required_field_with_a_default_fits,
    a_field_added_with_a_default_reads_as_it_on_older_records,
    a_new_required_field_without_a_default_is_exit_3,
    a_retyped_field_that_stored_values_break_is_exit_3,
    a_retyped_field_that_stored_values_still_fit_is_exit_0,
    a_removed_field_with_values_is_exit_3_until_dropped,
    a_type_declared_external_with_stored_records_is_exit_3,
    serve_demo_of_kanban_on_a_casebook_exits_3_and_seeds_nothing,
    the_printed_drop_commands_act_on_the_database_check_was_given_by_flag,
);
on_both_backends!(casebook_running =>
    a_new_unique_field_with_repeated_values_is_exit_3_naming_the_records,
    the_same_unique_value_in_two_cases_fits,
);

async fn check_of_kanban_on_a_fresh_database_is_exit_0((_db, url): (TestDb, String)) {
    let out = stdout_ok(&baton(
        Some(&url),
        &["schema", "check", path_str(&example("kanban.toml"))],
    ));
    assert!(
        out.contains("Column") && out.contains("Card"),
        "the new types are not mentioned:\n{out}"
    );
    assert_eq!(
        counts(&url),
        Counts {
            cases: 0,
            records: BTreeMap::new(),
            locks: 0,
            waiters: 0,
            audit: 0
        }
    );
}

async fn serve_of_kanban_on_a_casebook_exits_3_before_listening(db: Casebook) {
    let before = counts(&db.url);
    let (status, stderr) = serve_refusal(&db.url, &example("kanban.toml"));
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(path_str(&example("kanban.toml"))),
        "the file is not named:\n{stderr}"
    );
    for type_name in ["Page", "Card", "Edgenote"] {
        let line = item_with(&stderr, &format!("type {type_name}"));
        let n = before.records[type_name];
        assert!(
            line.contains(&format!("{n} record")),
            "{type_name}'s count ({n}) is not given: {line}"
        );
    }
    assert_eq!(counts(&db.url), before, "serve deleted something");
}

async fn check_of_kanban_on_a_casebook_is_exit_3_with_drop_commands(db: Casebook) {
    let kanban = example("kanban.toml");
    let before = counts(&db.url);
    let check = baton(Some(&db.url), &["schema", "check", path_str(&kanban)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    for type_name in ["Page", "Card", "Edgenote"] {
        let line = item_with(&message, &format!("type {type_name}"));
        let n = before.records[type_name];
        assert!(line.contains(&format!("{n} record")), "{line}");
    }
    let mut commands = drop_commands(&message);
    commands.sort();
    assert_eq!(
        commands,
        [
            ["schema", "drop", "Card"],
            ["schema", "drop", "Edgenote"],
            ["schema", "drop", "Page"]
        ],
        "{message}"
    );
    // serve says the same.
    let (status, serve) = serve_refusal(&db.url, &kanban);
    assert_eq!(status.code(), Some(3));
    for line in message.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            serve.contains(line),
            "serve does not say {line:?}:\n{serve}"
        );
    }
    assert_eq!(counts(&db.url), before, "check deleted something");
    // Checking again says the same: nothing changed.
    let again = baton(Some(&db.url), &["schema", "check", path_str(&kanban)]);
    expect_status(&again, 3);
    assert_eq!(text(&again.stderr), message);
}

async fn the_printed_drop_commands_make_kanban_fit(db: Casebook) {
    let kanban = example("kanban.toml");
    let before = counts(&db.url);
    let last_card = *stored_fields(&db.url, "Card").keys().max().unwrap();
    let check = baton(Some(&db.url), &["schema", "check", path_str(&kanban)]);
    expect_status(&check, 3);
    let commands = drop_commands(&text(&check.stderr));
    assert_eq!(commands.len(), 3, "{}", described(&check));
    for command in &commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        stdout_ok(&baton(Some(&db.url), &args));
    }
    let after = counts(&db.url);
    assert!(after.records.is_empty(), "records left: {after:?}");
    assert_eq!(after.locks, 0, "the dropped card's lock is left");
    assert_eq!(after.waiters, 0, "the dropped card's line is left");
    // Kept, with a row for each lock the drop ended (every record went).
    assert_eq!(
        after.audit,
        before.audit + before.locks,
        "the audit trail is kept, and each ended lock audited"
    );
    let out = stdout_ok(&baton(
        Some(&db.url),
        &["schema", "check", path_str(&kanban)],
    ));
    assert!(out.contains("fits"), "{out}");

    // Served now, and a new card never takes a dropped card's id.
    let server = ServerProcess::spawn_with(
        &db.url,
        "kanban",
        &[],
        &["--schema", path_str(&kanban)],
        Stdio::null(),
    )
    .await;
    let http = reqwest::Client::new();
    let alice = login(&http, &server.base, "alice@example.com").await;
    let column: Value = http
        .post(format!("{}/cases/sample-case/columns", server.base))
        .bearer_auth(&alice)
        .json(&json!({ "column": { "title": "To do" } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let column_id = column["id"].as_i64().expect("a column");
    let response = http
        .post(format!("{}/columns/{column_id}/cards", server.base))
        .bearer_auth(&alice)
        .json(&json!({ "card": { "content": "new" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    let card: Value = response.json().await.unwrap();
    let card_id = card["id"].as_i64().unwrap();
    assert!(
        card_id > last_card,
        "new card {card_id} reuses an id up to {last_card}"
    );
}

async fn a_new_optional_field_fits(db: Casebook) {
    let before = counts(&db.url);
    let file = write(
        db.dir.path(),
        "summary.toml",
        &casebook_with(
            "required = [\"title\"]",
            "fields.summary = { type = \"string\", maxLength = 500 }\nrequired = [\"title\"]",
        ),
    );
    let out = stdout_ok(&baton(Some(&db.url), &["schema", "check", path_str(&file)]));
    assert!(
        out.contains("summary"),
        "the new field is not mentioned:\n{out}"
    );
    let line = item_with(&out, "summary");
    assert!(line.contains("Page"), "{line}");
    assert_eq!(counts(&db.url), before);
}

async fn a_new_required_field_with_a_default_fits(db: Casebook) {
    let file = write(
        db.dir.path(),
        "status.toml",
        &casebook_with(
            "required = [\"title\"]",
            "fields.status = { enum = [\"draft\", \"final\"], default = \"draft\" }\n\
             required = [\"title\", \"status\"]",
        ),
    );
    let out = stdout_ok(&baton(Some(&db.url), &["schema", "check", path_str(&file)]));
    assert!(out.contains("status"), "{out}");
}

/// "The declared fields (defaults filled in)": a field added with a
/// default reads as that default on the records stored before it, at once
/// and without rewriting them; a record that sets it keeps its own value.
async fn a_field_added_with_a_default_reads_as_it_on_older_records(db: Casebook) {
    let stored_before = stored_fields(&db.url, "Page");
    let file = write(
        db.dir.path(),
        "status.toml",
        &casebook_with(
            "required = [\"title\"]",
            "fields.status = { enum = [\"draft\", \"final\"], default = \"draft\" }\n\
             required = [\"title\"]",
        ),
    );
    let server = ServerProcess::spawn(&db.url, "v2", &[("BATON_SCHEMA", path_str(&file))]).await;
    let http = reqwest::Client::new();
    let alice = login(&http, &server.base, "alice@example.com").await;
    let get = |path: &str| {
        http.get(format!("{}{path}", server.base))
            .bearer_auth(&alice)
            .send()
    };
    let case: Value = get("/cases/sample-case")
        .await
        .expect("case")
        .json()
        .await
        .expect("JSON");
    let pages = case["pages"].as_array().expect("pages");
    assert!(!pages.is_empty(), "{case}");
    for page in pages {
        assert_eq!(page["status"], "draft", "{page}");
        let one: Value = get(&format!("/pages/{}", page["id"]))
            .await
            .expect("page")
            .json()
            .await
            .expect("JSON");
        assert_eq!(one["status"], "draft", "{one}");
    }
    let created = http
        .post(format!("{}/cases/sample-case/pages", server.base))
        .bearer_auth(&alice)
        .json(&json!({ "page": { "title": "Decided", "status": "final" } }))
        .send()
        .await
        .expect("create a page");
    assert_eq!(created.status().as_u16(), 201);
    let created: Value = created.json().await.expect("JSON");
    assert_eq!(created["status"], "final", "{created}");
    drop(server);
    // The older records were read with the default, not rewritten with it.
    let stored_after = stored_fields(&db.url, "Page");
    for (id, fields) in &stored_before {
        assert_eq!(
            stored_after.get(id),
            Some(fields),
            "page {id} was rewritten"
        );
    }
}

async fn a_new_required_field_without_a_default_is_exit_3(db: Casebook) {
    let before = counts(&db.url);
    let file = write(
        db.dir.path(),
        "owner.toml",
        &casebook_with(
            "required = [\"title\"]",
            "fields.owner = { type = \"string\" }\nrequired = [\"title\", \"owner\"]",
        ),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    let line = item_with(&message, "owner");
    let pages = before.records["Page"];
    assert!(
        line.contains("Page") && line.contains(&format!("{pages} record")),
        "type or count ({pages}) not given: {line}"
    );
    let (status, serve) = serve_refusal(&db.url, &file);
    assert_eq!(status.code(), Some(3), "{serve}");
    assert!(serve.contains(line), "{serve}");
    assert_eq!(counts(&db.url), before);
}

/// Card.content at most 45 characters: the demo's longer cards no longer
/// fit it.
async fn a_retyped_field_that_stored_values_break_is_exit_3(db: Casebook) {
    let before = counts(&db.url);
    let cards = stored_fields(&db.url, "Card");
    let too_long = cards
        .values()
        .filter(|f| f["content"].as_str().unwrap().chars().count() > 45)
        .count();
    assert!(
        too_long > 0 && too_long < cards.len(),
        "the demo's cards no longer make the point: {cards:?}"
    );
    let file = write(
        db.dir.path(),
        "short-cards.toml",
        &casebook_with(
            "fields.content = { type = \"string\", maxLength = 100000 }",
            "fields.content = { type = \"string\", maxLength = 45 }",
        ),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    let line = item_with(&message, "content");
    assert!(
        line.contains("Card") && line.contains(&format!("{too_long} record")),
        "type, field or count ({too_long}) not given: {line}"
    );
    assert!(
        drop_commands(&message).contains(&vec![
            "schema".to_owned(),
            "drop".to_owned(),
            "Card.content".to_owned()
        ]),
        "{message}"
    );
    let (status, serve) = serve_refusal(&db.url, &file);
    assert_eq!(status.code(), Some(3), "{serve}");
    assert!(serve.contains(line), "{serve}");
    assert_eq!(counts(&db.url), before);
    assert_eq!(stored_fields(&db.url, "Card"), cards, "a card was changed");
}

async fn a_retyped_field_that_stored_values_still_fit_is_exit_0(db: Casebook) {
    let file = write(
        db.dir.path(),
        "shorter-cards.toml",
        &casebook_with(
            "fields.content = { type = \"string\", maxLength = 100000 }",
            "fields.content = { type = \"string\", maxLength = 1000 }",
        ),
    );
    stdout_ok(&baton(Some(&db.url), &["schema", "check", path_str(&file)]));
    // A type changed to integer fits no stored string.
    let file = write(
        db.dir.path(),
        "numbered-notes.toml",
        &casebook_with(
            "fields.content = { type = \"string\", maxLength = 100000, default = \"\" }",
            "fields.content = { type = \"integer\", default = 0 }",
        ),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let notes = counts(&db.url).records["Edgenote"];
    let message = text(&check.stderr);
    let line = item_with(&message, "content");
    assert!(
        line.contains("Edgenote") && line.contains(&format!("{notes} record")),
        "{line}"
    );
}

async fn a_removed_field_with_values_is_exit_3_until_dropped(db: Casebook) {
    let before = counts(&db.url);
    let notes = stored_fields(&db.url, "Edgenote");
    let file = write(
        db.dir.path(),
        "no-content.toml",
        &casebook_with(
            "fields.content = { type = \"string\", maxLength = 100000, default = \"\" }\n",
            "",
        ),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    let line = item_with(&message, "content");
    assert!(
        line.contains("Edgenote") && line.contains(&format!("{} record", notes.len())),
        "{line}"
    );
    assert_eq!(
        drop_commands(&message),
        [["schema", "drop", "Edgenote.content"]],
        "{message}"
    );
    assert_eq!(counts(&db.url), before);
    assert_eq!(stored_fields(&db.url, "Edgenote"), notes);
    stdout_ok(&baton(
        Some(&db.url),
        &["schema", "drop", "Edgenote.content"],
    ));
    stdout_ok(&baton(Some(&db.url), &["schema", "check", path_str(&file)]));
    // Only the named field went: every note and its other fields stay.
    let after = stored_fields(&db.url, "Edgenote");
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        notes.keys().collect::<Vec<_>>()
    );
    for (id, fields) in &after {
        let mut expected = notes[id].clone();
        expected.as_object_mut().unwrap().remove("content");
        assert_eq!(fields, &expected);
    }
    assert_eq!(counts(&db.url), before);
}

/// `unique` holds among a type's records in one case: two cases may each
/// have an edgenote `gull-rock-map`, and the database still fits the
/// casebook.
async fn the_same_unique_value_in_two_cases_fits((db, demo): (Casebook, Demo)) {
    let (status, case) = demo
        .send(
            reqwest::Method::POST,
            "/cases",
            &demo.alice,
            None,
            Some(json!({ "case": { "slug": "second", "title": "Second" } })),
        )
        .await;
    assert_eq!(status, 201, "{case}");
    let (status, note) = demo
        .send(
            reqwest::Method::POST,
            "/cases/second/edgenotes",
            &demo.alice,
            None,
            Some(json!({ "edgenote": { "slug": "gull-rock-map", "caption": "Another map" } })),
        )
        .await;
    assert_eq!(
        status, 201,
        "the server refused the slug in another case: {note}"
    );
    demo.stop().await;
    let check = baton(
        Some(&db.url),
        &["schema", "check", path_str(&example("casebook.toml"))],
    );
    expect_status(&check, 0);
    // And the server starts again on it with the built-in schema.
    let _server = ServerProcess::spawn(&db.url, "again", &[]).await;
}

async fn a_type_declared_external_with_stored_records_is_exit_3(db: Casebook) {
    let before = counts(&db.url);
    let casebook = std::fs::read_to_string(example("casebook.toml")).unwrap();
    let (pages_and_cards, _) = casebook
        .split_once("[types.Edgenote]")
        .expect("casebook.toml declares Edgenote");
    let file = write(
        db.dir.path(),
        "external-notes.toml",
        &format!("{pages_and_cards}[types.Edgenote]\nstore = \"external\"\n"),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    let notes = before.records["Edgenote"];
    let line = item_with(&message, "Edgenote");
    assert!(line.contains(&format!("{notes} record")), "{line}");
    assert_eq!(
        drop_commands(&message),
        [["schema", "drop", "Edgenote"]],
        "{message}"
    );
    assert_eq!(counts(&db.url), before);
}

/// Two cards of one case with the same content, then `unique = ["content"]`:
/// the refusal names the type, the field and the records that share a
/// value.
async fn a_new_unique_field_with_repeated_values_is_exit_3_naming_the_records(
    (db, demo): (Casebook, Demo),
) {
    let (_, case) = demo
        .send(
            reqwest::Method::GET,
            "/cases/sample-case",
            &demo.alice,
            None,
            None,
        )
        .await;
    let page = &case["pages"][1];
    let page_id = page["id"].as_i64().expect("a second demo page");
    let content = case["pages"][0]["cards"][0]["content"].clone();
    let (status, card) = demo
        .send(
            reqwest::Method::POST,
            &format!("/pages/{page_id}/cards"),
            &demo.alice,
            None,
            Some(json!({ "card": { "content": content } })),
        )
        .await;
    assert_eq!(status, 201, "{card}");
    demo.stop().await;
    let before = counts(&db.url);
    let file = write(
        db.dir.path(),
        "unique-cards.toml",
        &casebook_with(
            "required = [\"content\"]",
            "required = [\"content\"]\nunique = [\"content\"]",
        ),
    );
    let check = baton(Some(&db.url), &["schema", "check", path_str(&file)]);
    expect_status(&check, 3);
    let message = text(&check.stderr);
    let line = item_with(&message, "unique");
    assert!(line.contains("Card") && line.contains("content"), "{line}");
    assert!(
        line.contains("2 record"),
        "the number of records affected (2) is not given: {line}"
    );
    assert_eq!(counts(&db.url), before);
}

async fn serve_demo_of_kanban_on_a_casebook_exits_3_and_seeds_nothing(db: Casebook) {
    let before = counts(&db.url);
    let (status, stderr) = serve_refusal_with(&db.url, &example("kanban.toml"), &["--demo"]);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert_eq!(counts(&db.url), before, "serve --demo changed the records");
}

/// `baton schema check FILE --database-url URL`: the commands it prints,
/// run as printed from the same place, act on that database (and open no
/// other).
async fn the_printed_drop_commands_act_on_the_database_check_was_given_by_flag(db: Casebook) {
    let cwd = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_baton"))
            .current_dir(cwd.path())
            .args(args)
            .env("RUST_LOG", "warn")
            .env_remove("DATABASE_URL")
            .env_remove("BATON_SCHEMA")
            .output()
            .expect("run baton")
    };
    let kanban = example("kanban.toml");
    let check_args = [
        "schema",
        "check",
        path_str(&kanban),
        "--database-url",
        &db.url,
    ];
    let check = run(&check_args);
    expect_status(&check, 3);
    let commands = drop_command_lines(&text(&check.stderr));
    assert!(!commands.is_empty(), "{}", described(&check));
    for command in &commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        stdout_ok(&run(&args));
    }
    let made: Vec<_> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let after = counts(&db.url);
    assert!(
        made.is_empty() && after.records.is_empty(),
        "the printed commands {commands:?} acted elsewhere (made {made:?}); \
         the database still holds {after:?}"
    );
    stdout_ok(&run(&check_args));
}
