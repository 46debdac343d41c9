//! Attacks on secrets and sign-in (the contract's "Secrets and sign-in"):
//! a short JWT secret, a flood that would push an account's lockout out of
//! the login throttle, and `--demo` pointed at a database of real people.
//! Each test is one attack, on both databases where one is involved.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use baton::config::Settings;
use common::{described, text, Backend, TestApp, TestDb, SECRET};
use serde_json::json;

on_both_backends!(|backend| TestApp::start_with(backend, small_throttle) =>
    a_flood_of_other_names_leaves_a_locked_out_account_locked_out,
);
on_both_backends!(demo_refuses_a_database_with_people_of_its_own,);

/// `baton ARGS` on `db_url` with `secret` as `BATON_JWT_SECRET`; a command
/// still running after 20 s (a server that started) is killed.
fn baton_with_secret(db_url: &str, secret: &str, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("BATON_JWT_SECRET", secret)
        .env("RUST_LOG", "warn")
        .env_remove("BATON_SCHEMA")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run baton");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait for baton").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    child.wait_with_output().expect("baton's output")
}

/// Exit 2 with a message naming the secret and its floor.
fn refused_for_its_secret(output: &Output) -> bool {
    let stderr = text(&output.stderr);
    output.status.code() == Some(2)
        && stderr.contains("BATON_JWT_SECRET")
        && stderr.contains("at least 32")
}

// ---- 1. a short secret ----

/// `baton serve` with the one-letter secret a site admin's token was
/// forged with, and with 31 bytes, even with `--dev`: exit 2 with a
/// message, before it listens.
#[test]
fn serve_refuses_a_jwt_secret_shorter_than_32_bytes() {
    let (_db, url) = TestDb::create(Backend::Sqlite).expect("a SQLite file");
    let bind = format!("127.0.0.1:{}", common::free_port());
    let mut wrong = Vec::new();
    for (secret, args) in [
        ("a", vec!["serve", "--bind", &bind]),
        (&"x".repeat(31), vec!["serve", "--bind", &bind]),
        ("a", vec!["serve", "--dev", "--bind", &bind]),
    ] {
        let output = baton_with_secret(&url, secret, &args);
        if !refused_for_its_secret(&output) {
            wrong.push(format!(
                "{} bytes, {args:?}: {}",
                secret.len(),
                described(&output)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// `baton token` signs nothing with a short secret (exit 2, a message);
/// with 32 bytes it prints a token.
#[test]
fn token_refuses_a_jwt_secret_shorter_than_32_bytes() {
    let (_db, url) = TestDb::create(Backend::Sqlite).expect("a SQLite file");
    let add = [
        "user",
        "add",
        "--email",
        "root@example.com",
        "--name",
        "Root",
        "--password",
        "long-enough",
        "--admin",
    ];
    let added = baton_with_secret(&url, std::str::from_utf8(SECRET).unwrap(), &add);
    assert!(added.status.success(), "{}", described(&added));
    let token = ["token", "--email", "root@example.com"];
    let short = baton_with_secret(&url, "a", &token);
    assert!(
        refused_for_its_secret(&short) && short.stdout.is_empty(),
        "{}",
        described(&short)
    );
    let long = baton_with_secret(&url, &"x".repeat(32), &token);
    assert!(
        long.status.success() && text(&long.stdout).trim().split('.').count() == 3,
        "{}",
        described(&long)
    );
}

// ---- 2. a flood that would push a lockout out ----

/// An account is locked out after 3 failures; the throttle counts at most
/// 20 accounts and addresses; the client address is the one a proxy names.
fn small_throttle(s: &mut Settings) {
    s.login_account_limit = 3;
    s.login_address_limit = 1_000;
    s.login_tracked = 20;
    s.client_ip_header = Some("X-Forwarded-For".into());
}

/// A sign-in as `email` with `password` from `address`.
async fn sign_in(app: &TestApp, email: &str, password: &str, address: &str) -> common::Resp {
    app.post("/auth/login")
        .header("X-Forwarded-For", address)
        .json(json!({ "email": email, "password": password }))
        .send()
        .await
}

/// Three wrong passwords lock Alice's account out; then forty sign-ins
/// with names nobody has, each from an address of its own, fill the
/// throttle four times over. Alice's account is still locked out (429,
/// even with the right password): the flood did not give her attacker ten
/// more tries.
async fn a_flood_of_other_names_leaves_a_locked_out_account_locked_out(app: TestApp) {
    let alice = app.user("Alice").await;
    for _ in 0..3 {
        sign_in(&app, &alice.email, "wrong-guess", "10.9.0.1")
            .await
            .expect(401);
    }
    sign_in(&app, &alice.email, "password1", "10.9.0.1")
        .await
        .expect_error(429, "rate_limited");
    for i in 0..40 {
        let answer = sign_in(
            &app,
            &format!("nobody{i}@example.com"),
            "wrong-guess",
            &format!("10.8.0.{i}"),
        )
        .await;
        assert!(
            [401, 429].contains(&answer.status),
            "flood sign-in {i}: {} {}",
            answer.status,
            answer.body
        );
    }
    let after = sign_in(&app, &alice.email, "password1", "10.9.0.2").await;
    assert_eq!(
        after.status, 429,
        "Alice's lockout after the flood: {}",
        after.body
    );
    assert!(
        after.headers.contains_key("retry-after"),
        "{:?}",
        after.headers
    );
}

// ---- 3. --demo on a database of real people ----

/// `baton serve --demo` on a database where `baton user add` made Dana:
/// exit 2 with a message, and no alice (a site admin whose password is
/// `demo`) in it. The demo's own database, served with `--demo` and served
/// again, starts both times.
async fn demo_refuses_a_database_with_people_of_its_own(backend: Backend) {
    let Some((_db, url)) = TestDb::create(backend) else {
        return;
    };
    let secret = std::str::from_utf8(SECRET).unwrap();
    let add = [
        "user",
        "add",
        "--email",
        "dana@example.com",
        "--name",
        "Dana",
        "--password",
        "long-enough",
    ];
    let added = baton_with_secret(&url, secret, &add);
    assert!(added.status.success(), "{}", described(&added));
    let bind = format!("127.0.0.1:{}", common::free_port());
    let demo = baton_with_secret(&url, secret, &["serve", "--demo", "--bind", &bind]);
    let stderr = text(&demo.stderr);
    assert!(
        demo.status.code() == Some(2) && stderr.contains("--demo") && stderr.contains("1 other"),
        "{}",
        described(&demo)
    );
    let alice = baton_with_secret(&url, secret, &["token", "--email", "alice@example.com"]);
    assert!(
        !alice.status.success(),
        "alice was seeded: {}",
        described(&alice)
    );

    let Some((_own, url)) = TestDb::create(backend) else {
        return;
    };
    for start in ["first", "second"] {
        let server =
            common::ServerProcess::spawn_with(&url, start, &[], &["--demo"], Stdio::null()).await;
        let signed_in = reqwest::Client::new()
            .post(format!("{}/auth/login", server.base))
            .json(&json!({ "email": "alice@example.com", "password": "demo" }))
            .send()
            .await
            .expect("sign in");
        assert_eq!(signed_in.status(), 200, "the {start} start");
    }
}
