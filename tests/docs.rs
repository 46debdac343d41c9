//! The documentation stays exact. Every relative link in the project's
//! Markdown names a file that exists and, when it names a heading, a heading
//! that file has (sections move between the README and `docs/`; a link left
//! behind fails here). The README's schema is a schema baton reads, its
//! three calls are routes of the OpenAPI document, and `docs/cli.md` lists
//! every subcommand the `baton` binary has, each of which it accepts.

use std::path::{Path, PathBuf};

/// The Markdown files the project writes (not dependencies' or build output).
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !matches!(name, "node_modules" | "target" | "dist" | "test-results")
                    && !name.starts_with('.')
                {
                    pending.push(path);
                }
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation
/// other than `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// `(target)` of every `[text](target)` outside code blocks.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    found
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(
        files.iter().any(|f| f.ends_with("docs/operations.md")),
        "found too little: {files:?}"
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read markdown");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            checked += 1;
            let (path, heading) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("parent").join(path)
            };
            let shown = file.strip_prefix(root).unwrap_or(file).display();
            if !linked.exists() {
                broken.push(format!("{shown}: {target} (no such file)"));
            } else if !heading.is_empty() && linked.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&linked).expect("read linked");
                if !anchors(&text).iter().any(|a| a == heading) {
                    broken.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README");
    let lines = readme.lines().count();
    assert!(
        lines <= 150,
        "README.md has {lines} lines: reference belongs in docs/"
    );
    assert!(readme.contains("cargo run --release -- serve --demo"));
    assert!(readme.contains("cargo test"));
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The code blocks of one language in a Markdown file, in order (`""`:
/// the blocks that name none).
fn code_blocks(markdown: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    // The block being read: its language, and its text.
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (open.take(), fence) {
            (None, Some(lang)) => open = Some((lang.trim().to_owned(), String::new())),
            (None, None) => {}
            (Some((lang, text)), Some(_)) => {
                if lang == language {
                    blocks.push(text);
                }
            }
            (Some((lang, mut text)), None) => {
                text.push_str(line);
                text.push('\n');
                open = Some((lang, text));
            }
        }
    }
    blocks
}

#[test]
fn the_readme_schema_is_read_by_baton() {
    let readme = read("README.md");
    let blocks = code_blocks(&readme, "toml");
    assert_eq!(blocks.len(), 1, "the README shows one schema");
    let schema = baton::schema::Schema::parse(&blocks[0], "README.md")
        .unwrap_or_else(|e| panic!("the README's schema: {e}"));
    let names: Vec<&str> = schema.types().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Ticket", "Comment"]);
    assert!(
        blocks[0].lines().count() <= 12,
        "the schema in about ten lines"
    );
}

#[test]
fn the_readme_calls_are_routes_of_the_document() {
    let readme = read("README.md");
    let document: serde_json::Value =
        serde_json::from_str(&read("openapi.json")).expect("openapi.json");
    let blocks = code_blocks(&readme, "http");
    let calls: Vec<(&str, &str)> = blocks
        .iter()
        .flat_map(|block| block.lines())
        .filter_map(|line| {
            line.split_whitespace()
                .next()
                .zip(line.split_whitespace().nth(1))
        })
        .collect();
    assert_eq!(calls.len(), 3, "the three calls of a backend beside baton");
    for (method, path) in calls {
        let operation = &document["paths"][path][method.to_lowercase()];
        assert!(
            operation.is_object(),
            "README names {method} {path}, which openapi.json does not have"
        );
    }
}

/// `baton <words>` for each line of the command list in `docs/cli.md`,
/// up to the first option or argument.
fn documented_commands() -> Vec<Vec<String>> {
    let doc = read("docs/cli.md");
    code_blocks(&doc, "")
        .first()
        .expect("docs/cli.md lists the commands in a code block")
        .lines()
        .filter_map(|line| line.strip_prefix("baton "))
        .map(|rest| {
            rest.split_whitespace()
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

fn baton(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .output()
        .expect("run baton");
    assert!(
        out.status.success(),
        "baton {} exited {:?}: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommands a `--help` lists.
fn subcommands(help: &str) -> Vec<String> {
    help.split("Commands:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_cli_doc_lists_every_command_baton_has() {
    let documented = documented_commands();
    assert!(documented.len() >= 15, "{documented:?}");
    for words in &documented {
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.push("--help");
        baton(&args);
    }
    let mut missing = Vec::new();
    for top in subcommands(&baton(&["--help"])) {
        let nested = subcommands(&baton(&[&top, "--help"]));
        let paths: Vec<Vec<String>> = if nested.is_empty() {
            vec![vec![top.clone()]]
        } else {
            nested.into_iter().map(|n| vec![top.clone(), n]).collect()
        };
        for path in paths {
            if !documented.contains(&path) {
                missing.push(path.join(" "));
            }
        }
    }
    assert!(missing.is_empty(), "docs/cli.md does not list: {missing:?}");
}
