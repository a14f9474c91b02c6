//! Checks over the source tree itself: the layer order, ceilings that only move down (sizes and
//! words), and the README's spec map.

mod layering;
mod sizes;
mod spec_map;
mod words;

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` whose name ends with `.{ext}`, recursively (none if `dir` is missing).
fn files_with(ext: &str, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with(ext, &p, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with("rs", dir, out);
}

fn lines_of(files: &[PathBuf]) -> usize {
    files
        .iter()
        .map(|f| fs::read_to_string(f).unwrap_or_default().lines().count())
        .sum()
}
