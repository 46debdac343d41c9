//! `baton key add/list/revoke`, run as the real binary on both databases:
//! a key is printed once and only its hash is stored; `list` never shows a
//! key; a bad or duplicate name, or revoking an unknown one, is exit 2.

mod common;

use std::process::{Command, Output};

use baton::db::schema::api_keys;
use common::{described, text, TestDb};
use diesel::prelude::*;

/// `baton key ARGS` on the database at `url`.
fn key(url: &str, args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_baton"))
        .current_dir(cwd.path())
        .arg("key")
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .env_remove("BATON_SCHEMA")
        .output()
        .expect("run baton")
}

on_both_backends!(|backend| async move { TestDb::create(backend) } =>
    keys_are_added_listed_and_revoked_by_name,
);

async fn keys_are_added_listed_and_revoked_by_name((_db, url): (TestDb, String)) {
    let added = key(&url, &["add", "--name", "billing"]);
    assert_eq!(added.status.code(), Some(0), "{}", described(&added));
    let printed = text(&added.stdout);
    let billing = printed.trim();
    assert_eq!(printed.lines().count(), 1, "the key alone: {printed}");
    assert!(
        billing.starts_with("baton_key_") && billing.len() == 74,
        "{billing}"
    );
    let other = key(&url, &["add", "--name", "host-node_2"]);
    assert_eq!(other.status.code(), Some(0), "{}", described(&other));
    assert_ne!(text(&other.stdout).trim(), billing, "every key is new");

    // Only the hash is kept: no column holds the key.
    let mut conn = baton::db::connect(&url).expect("connect");
    let stored: Vec<(String, String)> = api_keys::table
        .select((api_keys::name, api_keys::key_hash))
        .order(api_keys::id)
        .load(&mut conn)
        .expect("read keys");
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].0, "billing");
    assert_ne!(stored[0].1, billing);
    assert_eq!(stored[0].1, baton::auth::api_keys::hash(billing));

    let listed = key(&url, &["list"]);
    assert_eq!(listed.status.code(), Some(0), "{}", described(&listed));
    let lines: Vec<String> = text(&listed.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("billing\tcreated "), "{lines:?}");
    assert!(lines[0].ends_with("\tlast used never"), "{lines:?}");
    assert!(lines[1].starts_with("host-node_2\t"), "{lines:?}");
    assert!(
        !text(&listed.stdout).contains("baton_key_"),
        "list never shows a key"
    );

    // A name names one live key; bad names are refused.
    for (args, says) in [
        (vec!["add", "--name", "billing"], "named billing already"),
        (vec!["add", "--name", "Billing"], "is not"),
        (vec!["revoke", "nobody"], "no live key is named nobody"),
    ] {
        let refused = key(&url, &args);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            described(&refused)
        );
        assert!(
            text(&refused.stderr).contains(says),
            "{args:?}: {}",
            described(&refused)
        );
    }

    let revoked = key(&url, &["revoke", "billing"]);
    assert_eq!(revoked.status.code(), Some(0), "{}", described(&revoked));
    let listed = text(&key(&url, &["list"]).stdout);
    assert!(!listed.contains("billing"), "{listed}");
    assert!(listed.contains("host-node_2"), "{listed}");
    // The name is free again, for a new key.
    let again = key(&url, &["add", "--name", "billing"]);
    assert_eq!(again.status.code(), Some(0), "{}", described(&again));
    assert_ne!(text(&again.stdout).trim(), billing);
}
