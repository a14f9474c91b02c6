//! Property tests (the project's fuzzing: cargo-fuzz needs a nightly toolchain). Each runs a
//! bounded number of cases in `make test`; `make test-long` raises PROPTEST_CASES.

mod cache_key;
mod conditions;
mod parsing_and_routing;
mod versions;

use proptest::test_runner::{Config, FileFailurePersistence};

/// Every property's config: `PROPTEST_CASES` cases (256 unless set), and any failure proptest
/// finds kept beside its test file (`<file>.proptest-regressions`) and replayed first, forever.
fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(256),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}
