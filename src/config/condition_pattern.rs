//! A rule condition's `$regex`: compiled once when the rule is written or read
//! back, bounded in length and compiled size, so a pattern can never cost the request path more
//! than linear time over a bounded automaton (`regex-lite`).

use super::condition::{MAX_REGEX_CHARS, REGEX_SIZE_LIMIT};
use super::ConfigError;

/// A compiled `$regex` (unanchored, as written; compared by its pattern).
#[derive(Debug, Clone)]
pub struct Pattern(regex_lite::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Pattern {
    pub fn is_match(&self, s: &str) -> bool {
        self.0.is_match(s)
    }
}

/// A pattern of at most `MAX_REGEX_CHARS`, compiled under `REGEX_SIZE_LIMIT`.
pub(super) fn pattern(p: &str, at: &str) -> Result<Pattern, ConfigError> {
    if p.chars().count() > MAX_REGEX_CHARS {
        let why = format!("must be at most {MAX_REGEX_CHARS} characters");
        return Err(ConfigError::invalid(at, why));
    }
    regex_lite::RegexBuilder::new(p)
        .size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(32)
        .build()
        .map(Pattern)
        .map_err(|e| ConfigError::invalid(at, format!("does not compile: {e}")))
}
