//! Spec §1 and §2: a requested name becomes an ordered list of candidates.

pub mod auto;
pub mod chain;
pub mod observed;
pub mod rank;
pub mod resolve;

pub use chain::{build_chain, dead_entries, AffinityUse, Candidate, ChainError, Route, RouteInput};
pub use observed::{ModelHealth, NothingObserved, Observed};
pub use resolve::{lookup, resolve_alias, Target};
