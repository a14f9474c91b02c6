//! Spend on workerd: usage and cost, budgets and rate limits under concurrency, governance,
//! estimates and the ledger.

mod budgets;
mod cache_pricing;
mod estimates;
mod governance;
mod governance_hardening;
mod ledger_hardening;
mod ledger_storage;
mod rate_limits;
mod usage;
