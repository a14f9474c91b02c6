//! Words: a comment, a doc or a test message states the rule, not the issue or seed it came
//! from; the spec map (docs/spec-map.md) is where provenance lives.
//!
//! None in `src/`, `tests/`, `README.md` or `docs/**/*.md`.

use super::{files_with, root, rust_files};
use std::fs;
use std::path::PathBuf;

/// Whether a line cites an issue or a seed by number (`issue 27`, `seed 004`).
fn cites_a_number(line: &str) -> bool {
    ["issue ", "seed ", "Issue ", "Seed "].iter().any(|word| {
        line.match_indices(word).any(|(i, _)| {
            // `--seed 1` is a command's flag, not a citation.
            let flag = line[..i].ends_with('-');
            let digit = line[i + word.len()..].chars().next();
            !flag && digit.is_some_and(|c| c.is_ascii_digit())
        })
    })
}

/// Every line of `files` that cites a number, as `path:line`.
fn citing(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| {
            let text = fs::read_to_string(f).unwrap_or_default();
            let rel = f.strip_prefix(root()).unwrap_or(f).display().to_string();
            text.lines()
                .enumerate()
                .filter(|(_, l)| cites_a_number(l))
                .map(|(n, _)| format!("{rel}:{}", n + 1))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn no_new_line_cites_an_issue_or_seed_number() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    // This file names the pattern it looks for.
    files.retain(|f| !f.ends_with("tests/host/checks/words.rs"));
    let found = citing(&files);
    assert!(
        found.is_empty(),
        "{} lines cite an issue or seed number, where none may; state the rule instead:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn no_new_line_of_the_readme_or_docs_cites_an_issue_or_seed_number() {
    let mut files = vec![root().join("README.md")];
    files_with("md", &root().join("docs"), &mut files);
    let found = citing(&files);
    assert!(
        found.is_empty(),
        "{} lines of the README and docs cite an issue or seed number, where none may; state \
         the rule instead:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_citation_check_sees_a_number_and_nothing_else() {
    assert!(cites_a_number("//! The response cache (issue 27)."));
    assert!(cites_a_number("/// as seed 004 says"));
    assert!(!cites_a_number(
        "/// an issue of ordering, a seed of 7 in tests"
    ));
    assert!(!cites_a_number("let seed = 4;"));
    assert!(!cites_a_number("schemathesis run --seed 1"));
}

/// Retired names, each with the word it gave up: one word, one meaning. A definition of one of
/// these again fails here.
const RETIRED: &[(&str, &str)] = &[
    (
        "pub struct Settlement",
        "settle is money only: `cascade::OwedReport`",
    ),
    (
        "pub async fn settle<S: RoutingState>",
        "`cascade::send_owed`",
    ),
    (
        "pub struct Outcome<B>",
        "the cascade's result is a `cascade::Run`",
    ),
    (
        "pub enum Verdict {\n    Admit",
        "admission is `governance::Admission`",
    ),
    (
        "pub enum Refusal {\n    KeyBudget",
        "a limit's is a `governance::Denial`",
    ),
    (
        "pub enum Refusal {\n    Api",
        "an admin command's is a `admin::CommandError`",
    ),
    ("pub enum Route {", "the HTTP path table is `api::Endpoint`"),
    (
        "pub struct TtlCache",
        "the memo of keys and configs is `callers::Memo`",
    ),
    (
        "pub enum StatusVerdict",
        "the status class is `cascade::StatusClass`",
    ),
    (
        "trait LedgerPort {\n    async fn acquire",
        "the ledger object is `LedgerObject`",
    ),
];

#[test]
fn a_retired_name_is_never_defined_again() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut found = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_default();
        for (definition, instead) in RETIRED {
            if text.contains(definition) {
                found.push(format!("{}: {definition:?} ({instead})", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "retired names defined again:\n{}",
        found.join("\n")
    );
}
