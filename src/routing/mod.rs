//! Spec §1 and §2: a requested name becomes an ordered list of candidates. `stats` holds the
//! live stats a ranking reads.

pub mod affinity;
pub mod auto;
pub mod chain;
mod chain_error;
pub mod condition;
mod draw;
pub mod facts;
pub mod fallback_link;
pub mod observed;
pub mod open_breakers;
pub mod pin;
#[cfg(test)]
mod pin_tests;
#[cfg(test)]
mod prefer_platforms_tests;
pub mod presets;
pub mod prompt_cache;
pub mod rank;
pub mod reach;
pub mod refusal;
pub mod resolve;
pub mod restriction;
pub mod settings_owner;
pub mod spread;
#[cfg(test)]
mod spread_tests;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_config;
pub mod versions;

pub use chain::{build_chain, dead_entries, AffinityUse, Candidate, ChainError, Route, RouteInput};
pub use observed::{ModelHealth, NothingObserved, Observed};
pub use resolve::{configured_name, lookup, lookup_pinned, resolve_alias, Target};
