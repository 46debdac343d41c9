//! The `baton` binary: migrate (and its status), user add/passwd/remove, token, and serve's
//! start-up checks.

mod common;

use std::process::{Command, Output};

use common::{Backend, TestDb};

fn baton(db_url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("BATON_JWT_SECRET", "cli-test-secret-cli-test-secret-cli")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run baton")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "baton failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn cli_on_sqlite() {
    cli_commands(Backend::Sqlite);
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn cli_on_postgres() {
    cli_commands(Backend::Postgres);
}

fn cli_commands(backend: Backend) {
    let Some((_db, url)) = TestDb::create(backend) else {
        return;
    };

    // A new database: every migration pending, exit 1, nothing applied.
    let before = baton(&url, &["migrate", "--status"]);
    assert_eq!(before.status.code(), Some(1), "{before:?}");
    let listed = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(
        listed.contains("pending  2026-11-22-000001_create_baton"),
        "{listed}"
    );
    assert!(listed.contains("0 applied"), "{listed}");
    assert!(!listed.contains("applied  "), "{listed}");
    assert!(String::from_utf8_lossy(&before.stderr).contains("`baton migrate`"));

    let migrated = stdout(&baton(&url, &["migrate"]));
    assert!(migrated.contains("migrations applied"));
    // Migrating twice is harmless.
    stdout(&baton(&url, &["migrate"]));
    let after = stdout(&baton(&url, &["migrate", "--status"]));
    assert!(
        after.contains("applied  2026-11-22-000001_create_baton"),
        "{after}"
    );
    assert!(after.contains(" applied, 0 pending"), "{after}");
    assert!(!after.contains("pending  "), "{after}");

    let added = stdout(&baton(
        &url,
        &[
            "user",
            "add",
            "--email",
            "Dana@Example.com",
            "--name",
            "Dana",
            "--password",
            "long-enough",
            "--admin",
        ],
    ));
    let user: serde_json::Value = serde_json::from_str(added.trim()).expect("user JSON");
    assert_eq!(user["type"], "User");
    assert_eq!(user["email"], "dana@example.com");
    assert_eq!(user["admin"], true);

    let duplicate = baton(
        &url,
        &[
            "user",
            "add",
            "--email",
            "dana@example.com",
            "--name",
            "Dana",
            "--password",
            "long-enough",
        ],
    );
    assert!(!duplicate.status.success());
    assert!(String::from_utf8_lossy(&duplicate.stderr).contains("already exists"));
    let short = baton(
        &url,
        &[
            "user",
            "add",
            "--email",
            "e@example.com",
            "--name",
            "E",
            "--password",
            "short",
        ],
    );
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 8"));

    let token = stdout(&baton(&url, &["token", "--email", "dana@example.com"]));
    let keys = baton::auth::JwtKeys::new(
        b"cli-test-secret-cli-test-secret-cli",
        std::time::Duration::from_secs(60),
    );
    let claims = keys.verify(token.trim()).expect("a valid JWT");
    assert_eq!(claims.user_id.get(), user["id"].as_i64().unwrap());
    assert!(token_is_live(&url, claims), "a fresh token is live");
    let unknown = baton(&url, &["token", "--email", "nobody@example.com"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no user"));

    // A new password ends the user's tokens.
    let changed = stdout(&baton(
        &url,
        &[
            "user",
            "passwd",
            "--email",
            "dana@example.com",
            "--password",
            "another-long-one",
        ],
    ));
    assert!(changed.contains("password changed"), "{changed}");
    assert!(!token_is_live(&url, claims), "the token ended");

    // Removing the user ends the next token too, and no new one is issued.
    let token = stdout(&baton(&url, &["token", "--email", "dana@example.com"]));
    let claims = keys.verify(token.trim()).expect("a valid JWT");
    let removed = stdout(&baton(
        &url,
        &["user", "remove", "--email", "dana@example.com"],
    ));
    assert!(removed.contains("removed dana@example.com"), "{removed}");
    assert!(!token_is_live(&url, claims));
    let gone = baton(&url, &["token", "--email", "dana@example.com"]);
    assert!(!gone.status.success());
    let again = baton(&url, &["user", "remove", "--email", "dana@example.com"]);
    assert!(!again.status.success());
}

/// Whether the token's row still authenticates its user.
fn token_is_live(url: &str, claims: baton::auth::TokenClaims) -> bool {
    let mut conn = baton::db::connect(url).expect("connect");
    baton::models::User::find_by_token(
        &mut conn,
        claims.user_id,
        claims.token_id,
        baton::clock::now(),
    )
    .expect("query")
    .is_some()
}

#[test]
fn serve_refuses_to_start_without_a_secret() {
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("DATABASE_URL", &url)
        .env_remove("BATON_JWT_SECRET")
        .output()
        .expect("run baton");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("BATON_JWT_SECRET"), "{stderr}");
}

#[test]
fn bad_durations_are_explained() {
    let output = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["serve", "--dev", "--lock-ttl", "forever"])
        .output()
        .expect("run baton");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("250ms"), "{stderr}");
}

/// `user add` and `user passwd` read the password from standard input with
/// `--password-stdin` (one line, its newline not part of it), so it shows
/// neither in `ps` nor in the shell's history.
#[test]
fn passwords_are_read_from_standard_input() {
    use std::io::Write;
    let (_db, url) = TestDb::create(Backend::Sqlite).unwrap();
    let with_stdin = |args: &[&str], input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
            .args(args)
            .env("DATABASE_URL", &url)
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run baton");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().expect("baton's output")
    };
    let stored_hash = || {
        let mut conn = baton::db::connect(&url).expect("connect");
        baton::models::User::find_by_email(&mut conn, "fay@example.com")
            .expect("query")
            .expect("Fay")
            .password_hash
    };
    let add = ["user", "add", "--email", "fay@example.com", "--name", "Fay"];
    let added = with_stdin(
        &[&add[..], &["--password-stdin"]].concat(),
        "from stdin 1\n",
    );
    stdout(&added);
    assert!(baton::auth::password::verify(
        "from stdin 1",
        &stored_hash()
    ));
    let passwd = [
        "user",
        "passwd",
        "--email",
        "fay@example.com",
        "--password-stdin",
    ];
    stdout(&with_stdin(&passwd, "from stdin 2\r\n"));
    assert!(baton::auth::password::verify(
        "from stdin 2",
        &stored_hash()
    ));
    // Both ways at once is refused; nothing changes.
    let both = with_stdin(
        &[&passwd[..], &["--password", "on the line"]].concat(),
        "x\n",
    );
    assert!(!both.status.success());
    assert!(baton::auth::password::verify(
        "from stdin 2",
        &stored_hash()
    ));
}
