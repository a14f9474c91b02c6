//! Caller governance (issue 15): key policies (allow-list, `rpm`, `tpm`, budget), tenant and
//! end-user limits, the ledger that admits and settles requests against them, and the usage
//! roll-ups behind the usage API. Plain Rust with time passed in; the ledger Durable Object
//! (`edge/ledger_object`) only stores what these decisions say.

pub mod admission;
pub mod period;
pub mod policy;
pub mod refusals;
pub mod rollup;
pub mod spend;
pub mod usage_query;
pub mod window;

#[cfg(test)]
mod admission_tests;

pub use admission::{AdmitRequest, Ledger, Refusal, ScopeId, SettleEntry, Verdict};
pub use period::Period;
pub use policy::{Budget, EndUserLimits, KeyPolicy, KeyPolicyChange};
pub use rollup::{PendingRollups, RollupKey, UsageSums};
