//! The layering `src/lib.rs` describes is what the imports do: a module may
//! use only modules of its own layer or below. (Run-time behaviour is tested
//! elsewhere; this keeps import cycles from creeping back.)

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top; modules on one line form one layer.
const LAYERS: &[&[&str]] = &[
    &["config", "clock", "schema"],
    &["db"],
    &["models"],
    &["views"],
    &["error"],
    &["auth"],
    &["locks"],
    &["realtime", "accounts", "backup"],
    &["state"],
    &["http", "demo"],
    &["server"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// `crate::<module>` paths in one source file, comments left out.
fn crate_paths(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            visit(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_module_imports_only_its_own_layer_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs"))
            .unwrap_or_default();
        if matches!(top, "lib" | "main") {
            continue;
        }
        let own = layer_of(top).unwrap_or_else(|| {
            panic!("src/{top} is in no layer: add it to LAYERS here and to src/lib.rs")
        });
        checked += 1;
        let source = std::fs::read_to_string(file).expect("read source");
        for used in crate_paths(&source) {
            // Macros exported at the crate root (`crate::on_backend!`) are db's.
            let module = if layer_of(&used).is_some() {
                used.as_str()
            } else {
                "db"
            };
            let theirs = layer_of(module).expect("known layer");
            if theirs > own {
                violations.push(format!("{} uses crate::{used}", relative.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} source files were read");
    assert!(
        violations.is_empty(),
        "imports against the layering of src/lib.rs:\n{}",
        violations.join("\n")
    );
}

/// The sibling modules a file of `folder` names: `super::x`, `super::{x, y}`,
/// `crate::<folder>::x` and `crate::<folder>::{x, y}` where `x` is a file
/// of the folder. (`mod.rs` is left out: it declares and re-exports them.)
fn sibling_uses(source: &str, folder: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let prefixes = ["super::".to_owned(), format!("crate::{folder}::")];
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for prefix in &prefixes {
            let mut rest = code;
            while let Some(at) = rest.find(prefix.as_str()) {
                rest = &rest[at + prefix.len()..];
                let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    group[..end]
                        .split(',')
                        .map(|n| n.trim().split("::").next().unwrap_or_default().to_owned())
                        .collect()
                } else {
                    vec![rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect()]
                };
                found.extend(names.into_iter().filter(|n| siblings.contains(n)));
            }
        }
    }
    found
}

/// No two files of one folder use each other, directly or round a longer
/// circle (`engine → line → engine`): each folder's files form layers of
/// their own.
#[test]
fn no_folder_has_a_cycle_of_imports_among_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut cycles = Vec::new();
    let mut folders_read = 0;
    for entry in std::fs::read_dir(&src).expect("read src") {
        let dir = entry.expect("dir entry").path();
        if !dir.is_dir() {
            continue;
        }
        let folder = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .expect("read folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .filter(|p| p.file_stem().is_some_and(|s| s != "mod"))
            .collect();
        let names: BTreeSet<String> = files
            .iter()
            .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
            .collect();
        let mut edges: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
        for file in &files {
            let name = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let source = std::fs::read_to_string(file).expect("read source");
            let mut uses = sibling_uses(&source, &folder, &names);
            uses.remove(name);
            edges.insert(name.to_owned(), uses);
        }
        folders_read += 1;
        // Depth-first search for a back edge, naming the circle it closes.
        fn visit(
            node: &str,
            edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
            cycles: &mut Vec<String>,
            folder: &str,
        ) {
            if let Some(at) = path.iter().position(|n| n == node) {
                let mut circle = path[at..].to_vec();
                circle.push(node.to_owned());
                cycles.push(format!("src/{folder}: {}", circle.join(" → ")));
                return;
            }
            if !done.insert(node.to_owned()) {
                return;
            }
            path.push(node.to_owned());
            for next in edges.get(node).into_iter().flatten() {
                visit(next, edges, path, done, cycles, folder);
            }
            path.pop();
        }
        let mut done = BTreeSet::new();
        for node in edges.keys() {
            visit(
                node,
                &edges,
                &mut Vec::new(),
                &mut done,
                &mut cycles,
                &folder,
            );
        }
    }
    assert!(folders_read >= 6, "only {folders_read} folders were read");
    assert!(
        cycles.is_empty(),
        "files of one folder that use each other:\n{}",
        cycles.join("\n")
    );
}

/// `crate::locks::<name>` paths in one source file, `crate::locks::{a, b}`
/// groups included, comments left out.
fn lock_paths(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let prefix = "crate::locks::";
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            rest = &rest[at + prefix.len()..];
            let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end]
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or_default().to_owned())
                    .filter(|n| !n.is_empty())
                    .collect()
            } else {
                vec![rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect()]
            };
            found.extend(names);
        }
    }
    found
}

/// The lock engine has one door: the HTTP handlers, the realtime channel
/// and the accounts reach it through `locks::engine` alone (with the
/// renderer of lock frames), never through
/// the modules behind it.
#[test]
fn outside_the_lock_engine_only_its_door_is_used() {
    const DOOR: &[&str] = &["engine", "render"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src.join("http"), &mut files);
    visit(&src.join("realtime"), &mut files);
    files.push(src.join("accounts.rs"));
    let mut through_the_wall = Vec::new();
    let mut seen_engine = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).expect("read source");
        for name in lock_paths(&source) {
            if name == "engine" {
                seen_engine += 1;
            }
            if !DOOR.contains(&name.as_str()) {
                let relative = file.strip_prefix(&src).expect("under src");
                through_the_wall.push(format!("{} uses crate::locks::{name}", relative.display()));
            }
        }
    }
    assert!(
        seen_engine > 5,
        "only {seen_engine} files use the engine: is the scan reading them?"
    );
    assert!(
        through_the_wall.is_empty(),
        "past the lock engine's door (use crate::locks::engine):\n{}",
        through_the_wall.join("\n")
    );
}
