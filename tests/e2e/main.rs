//! The end-to-end tests: one binary driving the built worker on workerd (`make build` first, then
//! `cargo test --test e2e`). Most tests share one gateway (`Gateway::shared`) and work in tenants
//! of their own; the `load` group measures the process and runs alone (`make e2e`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../support/mod.rs"]
mod support;

mod admin;
mod cache;
mod foundation;
mod health;
mod load;
mod platforms;
mod routing;
mod spend;
mod surfaces;
mod traces;
