//! The layering `src/lib.rs` describes is what the imports do: a module may
//! use only modules of its own layer or below. (Run-time behaviour is tested
//! elsewhere; this keeps import cycles from creeping back.)

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top; modules on one line form one layer.
const LAYERS: &[&[&str]] = &[
    &["config", "clock"],
    &["db"],
    &["models"],
    &["views"],
    &["error"],
    &["auth"],
    &["locks"],
    &["realtime", "accounts"],
    &["state"],
    &["http", "demo"],
    &["server"],
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
