//! "Layers point down, bottom up: config → api, health → callers, usage, routing → stream,
//! governance → providers → surfaces, cascade → response_cache, metrics, traces → events → admin → edge,
//! mock. A module imports only modules of the layers below its own."
//!
//! Every `crate::<module>` path in `src/` (a `use` or a path in code; comments are skipped) is
//! held to that order, and two modules of one layer never import each other. `mock` (the
//! scripted upstream behind the mock-provider binary) sits with `edge`, above everything it
//! drives; the binaries and `lib.rs` sit above every layer.

use super::{root, rust_files};
use std::fs;
use std::path::Path;

/// Higher layers first: a module may use every layer after its own.
const LAYERS: &[&[&str]] = &[
    &["edge", "mock"],
    &["admin", "request", "scheduled"],
    &["events"],
    &["response_cache", "metrics", "traces"],
    &["surfaces", "cascade"],
    &["providers"],
    &["stream", "governance"],
    &["callers", "usage", "routing"],
    &["api", "health"],
    &["config"],
];

/// Names that were grab bags of several capabilities and are no modules any more.
const GONE: &[&str] = &["state", "cache", "api/views"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level modules a line names through `crate::`.
fn crate_paths(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        found.push(&after[..end]);
        rest = &after[end..];
    }
    found
}

/// Every import of a higher layer or of another module of the same one, as
/// `file:line: from → to`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let Some(top) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
            continue;
        };
        let top = top.trim_end_matches(".rs");
        let Some(from) = layer_of(top) else {
            continue; // lib.rs and the binaries sit above every layer.
        };
        let text = fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for to in crate_paths(line) {
                if to != top && layer_of(to).is_some_and(|l| l <= from) {
                    out.push(format!("{}:{}: {top} → {to}", rel.display(), n + 1));
                }
            }
        }
    }
    out
}

#[test]
fn a_lower_layer_never_imports_a_higher_one() {
    let src = root().join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "imports against the layering:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = root().join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let unplaced: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or(l.trim().strip_prefix("mod "))
        })
        .map(|m| m.trim_end_matches(';'))
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(unplaced.is_empty(), "modules with no layer: {unplaced:?}");
}

#[test]
fn the_old_grab_bags_are_gone() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let left: Vec<&str> = GONE
        .iter()
        .copied()
        .filter(|m| src.join(m).exists() || src.join(format!("{m}.rs")).exists())
        .collect();
    assert!(left.is_empty(), "modules that should be gone: {left:?}");
    assert!(GONE.iter().all(|m| layer_of(m).is_none()));
}

#[test]
fn the_check_sees_an_upward_import() {
    assert_eq!(
        crate_paths("use crate::surfaces::x; crate::edge::y"),
        ["surfaces", "edge"]
    );
    assert!(layer_of("usage") > layer_of("cascade"));
}

/// Each top-level module of `src/` and the modules its code names through `crate::`.
fn module_graph(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let Some(top) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
            continue;
        };
        let top = top.trim_end_matches(".rs").to_owned();
        let text = fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for to in crate_paths(line) {
                if to != top && !to.is_empty() {
                    edges.push((top.clone(), to.to_owned()));
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

#[test]
fn no_two_modules_import_each_other_even_through_others() {
    let edges = module_graph(&root().join("src"));
    let reaches = |from: &str, to: &str| {
        let mut seen = vec![from.to_owned()];
        let mut next = vec![from.to_owned()];
        while let Some(m) = next.pop() {
            for (_, b) in edges.iter().filter(|(a, _)| *a == m) {
                if b == to {
                    return true;
                }
                if !seen.contains(b) {
                    seen.push(b.clone());
                    next.push(b.clone());
                }
            }
        }
        false
    };
    let cycles: Vec<String> = edges
        .iter()
        .filter(|(a, b)| reaches(b, a))
        .map(|(a, b)| format!("{a} → {b} → … → {a}"))
        .collect();
    assert!(
        cycles.is_empty(),
        "modules in a cycle (move the shared piece down):\n{}",
        cycles.join("\n")
    );
}
