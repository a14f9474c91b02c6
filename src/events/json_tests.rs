//! Every event written as the gateway wrote it before `Event`: against the `json!` tree (or the
//! struct) each call site built, for the same inputs.

use super::fixtures::{cases, inputs};

#[test]
fn every_event_serialises_as_the_json_tree_its_call_site_built() {
    let i = inputs();
    let log = i.request_log();
    for (name, event, old) in cases(&i, &log) {
        assert_eq!(event.to_line(), old, "{name}");
    }
}

/// Prints each line, to paste into `bytes_tests` when an event is added.
#[test]
#[ignore = "prints the lines for bytes_tests"]
fn print_every_line() {
    let i = inputs();
    let log = i.request_log();
    for (name, _, old) in cases(&i, &log) {
        println!("(\n    {name:?},\n    r#\"{old}\"#,\n),");
    }
}
