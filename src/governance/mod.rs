//! Caller governance (issues 15 and 21): the ledger that admits and settles requests against
//! the key policies and tenant limits (`config::policy`), with reservations and slices, the
//! isolate's side of it (`isolate`: local admission from slices, records kept through ledger
//! faults), and the usage query behind the usage API. Plain Rust with time passed in; the
//! ledger Durable Object (`edge/ledger_object`) only stores what these decisions say. Spend and
//! roll-ups are usage data (`usage::spend`, `usage::rollup`).

pub mod admission;
pub mod ask;
pub mod budget_alert;
pub mod holds;
pub mod isolate;
pub mod lease;
pub mod refusals;
pub mod reserve;
pub mod retained;
pub mod settle;
pub mod settled;
pub mod slice;
pub mod usage_query;
pub mod window;

#[cfg(test)]
mod admission_tests;
#[cfg(test)]
mod isolate_tests;
#[cfg(test)]
mod reservation_tests;

pub use admission::{Ledger, ScopeId};
pub use ask::{AdmitAnswer, AdmitRequest, SettleEntry};
pub use refusals::{Admission, Denial};
pub use reserve::{billable_answers, HoldRef, Need, Price};
