//! Caller governance (issue 15): the ledger that admits and settles requests against the key
//! policies and tenant limits (`config::policy`), and the usage query behind the usage API.
//! Plain Rust with time passed in; the ledger Durable Object (`edge/ledger_object`) only stores
//! what these decisions say. Spend and roll-ups are usage data (`usage::spend`, `usage::rollup`).

pub mod admission;
pub mod refusals;
pub mod usage_query;
pub mod window;

#[cfg(test)]
mod admission_tests;

pub use admission::{AdmitRequest, Ledger, Refusal, ScopeId, SettleEntry, Verdict};
