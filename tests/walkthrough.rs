//! `docs/walkthrough.md` as written: its first shell session runs against
//! `baton serve --demo` on a new SQLite file (at the address its
//! `localhost:8080` stands for), and prints what its comments say: the
//! ETag, the 412, the 423, the place in line, the 204 and the hand-off.

mod common;

use common::ServerProcess;

/// The first `sh` block of a Markdown file.
fn first_shell_block(markdown: &str) -> String {
    let mut lines = markdown.lines().skip_while(|l| l.trim() != "```sh").skip(1);
    let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
    assert!(!block.is_empty(), "the walkthrough has a ```sh block");
    block.join("\n")
}

#[actix_web::test]
async fn the_walkthrough_runs_as_written() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/walkthrough.md"))
        .expect("docs/walkthrough.md");
    let dir = tempfile::tempdir().expect("temp dir");
    let db_url = dir.path().join("walk.sqlite3").display().to_string();
    let server = ServerProcess::spawn_with(
        &db_url,
        "walkthrough",
        &[],
        &["--demo"],
        std::process::Stdio::null(),
    )
    .await;
    let host = server.base.trim_start_matches("http://");
    let script = first_shell_block(&doc).replace("localhost:8080", host);
    assert!(script.contains(host), "the session talks to localhost:8080");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail\n{script}"))
        .output()
        .expect("run bash");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the session failed: {}\n{printed}",
        String::from_utf8_lossy(&out.stderr)
    );
    for said in [
        "etag: \"1\"",
        "\"code\":\"stale_version\"",
        "\"code\":\"locked\"",
        "is being edited by Alice",
        "\"type\":\"Waiter\"",
        "\"position\":1",
        "204\n{\"state\":\"owned\"",
    ] {
        assert!(
            printed.contains(said),
            "the walkthrough says {said}, and it printed:\n{printed}"
        );
    }
    // The last line: the status bob's tab asked for, his lock now.
    let last = printed.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("\"state\":\"owned\"") && last.contains("\"name\":\"Bob\""),
        "card 1 went to bob's tab: {last}"
    );
}
