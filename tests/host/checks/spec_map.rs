//! The spec map's table (docs/spec-map.md), from the core spec to the code, stays true: every
//! function and test it names exists where it says. A renamed or deleted function or test fails
//! this.

use super::root;

/// The table's rows, between its markers in docs/spec-map.md.
fn rows() -> Vec<String> {
    let map = std::fs::read_to_string(root().join("docs/spec-map.md")).unwrap();
    let start = map.find("<!-- spec-map:start -->").expect("start marker");
    let end = map.find("<!-- spec-map:end -->").expect("end marker");
    map[start..end]
        .lines()
        .filter(|l| l.starts_with("| 1 ") || l.starts_with("| 2 ") || l.starts_with("| 3 "))
        .map(str::to_owned)
        .collect()
}

/// Every `path::name` reference in one cell.
fn references(cell: &str) -> Vec<(String, String)> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|r| {
            let (path, name) = r
                .rsplit_once("::")
                .unwrap_or_else(|| panic!("not path::name: {r}"));
            (path.to_owned(), name.to_owned())
        })
        .collect()
}

fn defines(path: &str, name: &str) -> bool {
    let text = std::fs::read_to_string(root().join(path))
        .unwrap_or_else(|_| panic!("{path} does not exist"));
    text.lines().any(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("pub ").unwrap_or(l);
        let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
        let l = l.strip_prefix("pub(super) ").unwrap_or(l);
        let l = l.strip_prefix("async ").unwrap_or(l);
        l.strip_prefix("fn ").is_some_and(|rest| {
            rest.starts_with(name) && rest[name.len()..].starts_with(['(', '<'])
        })
    })
}

#[test]
fn every_rule_of_seed_000_names_a_function_and_a_test_that_exist() {
    let rows = rows();
    assert!(rows.len() >= 30, "one row per rule: {} rows", rows.len());
    for row in rows {
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells.len(), 4, "{row}");
        let (implemented, proven) = (references(cells[2]), references(cells[3]));
        assert!(!implemented.is_empty() && !proven.is_empty(), "{row}");
        for (path, name) in implemented.iter().chain(&proven) {
            assert!(defines(path, name), "{path} has no fn {name} (row: {row})");
        }
    }
}

#[test]
fn a_name_that_does_not_exist_is_caught() {
    assert!(defines("src/routing/chain.rs", "build_chain"));
    assert!(!defines("src/routing/chain.rs", "build_chai"));
    assert!(!defines("src/routing/chain.rs", "no_such_function"));
}
