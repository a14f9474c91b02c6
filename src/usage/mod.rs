//! What one answered (or exhausted) request used and cost. The request path measures it
//! (`usage` from the answer, or from the stream's usage chunk) and hands one `UsageRecord` per
//! request to the ledger, which enforces limits and keeps the roll-ups the usage API reads.

pub mod record;

pub use record::{Outcome, TokenCounts, UsageRecord};
