//! What one answered (or exhausted) request used and cost. The request path measures it
//! (`usage` from the answer, or from the stream's usage chunk) and hands one `UsageRecord` per
//! request to the ledger, which enforces limits and keeps the roll-ups the usage API reads.

pub mod billed;
pub mod cost;
pub mod end_user;
pub mod estimate;
pub mod flush_schedule;
pub mod generated;
pub mod generation;
pub mod image_parts;
pub mod pending;
pub mod record;
pub mod retention;
pub mod rollup;
pub mod rollup_store;
pub mod spend;
pub mod stream;
pub mod wire;

pub use billed::Billed;
pub use cost::{cache_savings_usd, cost_usd, usd_decimal};
pub use end_user::end_user;
pub use pending::PendingUsage;
pub use record::{Outcome, TokenCounts, UsageRecord, UsageSource};
pub use rollup::{PendingRollups, RollupKey, UsageSums};
pub use spend::Spend;
pub use stream::StreamUsage;
pub use wire::answer_usage;
