//! Spec §1 and §2: a requested name becomes an ordered list of candidates.

pub mod chain;
pub mod resolve;

pub use chain::{build_chain, dead_entries, Candidate, ChainError};
pub use resolve::{lookup, resolve_alias, Target};
