//! "Adding a lockable type" in `docs/architecture.md` is exact: edgenotes
//! are wired just as it says for its `Comment`. Each line of its code
//! blocks, with `Comment` read as `Edgenote`, is in the file the guide names
//! just before the block, and every file that names edgenotes is one the
//! guide names.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn guide() -> String {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).expect("the guide");
    let start = text
        .find("## Adding a lockable type")
        .expect("a section 'Adding a lockable type'");
    let rest = &text[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

/// `Comment` read as `Edgenote`.
fn as_edgenote(s: &str) -> String {
    s.replace("Comment", "Edgenote")
        .replace("comments", "edgenotes")
        .replace("comment", "edgenote")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn source_files() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    files_under(&root().join("src"), &mut paths);
    files_under(&root().join("migrations"), &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let relative = path
                .strip_prefix(root())
                .ok()?
                .to_string_lossy()
                .into_owned();
            Some((relative, text))
        })
        .collect()
}

/// The last `src/….rs` path named in backticks in `text`.
fn last_source_path(text: &str) -> Option<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("src/") && quoted.ends_with(".rs"))
        .last()
        .map(str::to_owned)
}

#[test]
fn every_code_line_of_the_guide_is_in_the_file_it_names_for_edgenotes() {
    let guide = guide();
    let mut in_code = false;
    let mut prose = String::new();
    let mut file: Option<(String, String)> = None;
    let mut checked = 0;
    for line in guide.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            if in_code {
                // A block belongs to the file the prose before it named last.
                let path = as_edgenote(&last_source_path(&prose).expect("a file before the block"));
                let text = std::fs::read_to_string(root().join(&path))
                    .unwrap_or_else(|_| panic!("the guide names {path}, which does not exist"));
                file = Some((path, text));
            }
            continue;
        }
        if !in_code {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        let (path, text) = file.as_ref().expect("a file for the block");
        let wanted = as_edgenote(trimmed);
        assert!(
            text.lines().any(|l| l.trim() == wanted),
            "the guide's line `{trimmed}` is not in {path} as `{wanted}`"
        );
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} code lines in the guide");
}

#[test]
fn the_guide_names_every_file_that_wires_edgenotes() {
    let guide = as_edgenote(&guide());
    for (path, text) in source_files() {
        if !text.contains("Edgenote") && !text.contains("edgenote") {
            continue;
        }
        let named = match path.split_once("migrations/") {
            Some((_, rest)) => {
                let backend = rest.split('/').next().unwrap_or_default();
                guide.contains(&format!("migrations/{backend}/"))
            }
            None => guide.contains(&format!("`{path}`")),
        };
        assert!(
            named,
            "{path} names edgenotes but the guide does not name it"
        );
    }
}
