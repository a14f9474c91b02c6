//! The host tests: one binary, no wasm build (`cargo test --test host`, seconds). The pure core
//! over fake ports and the in-memory store, grouped by capability, and the checks over the
//! source tree.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../support/mod.rs"]
mod support;

mod admin;
mod cascade;
mod checks;
mod governance;
mod health;
mod properties;
mod request;
mod routing;
mod scheduled;
mod stream;
mod surfaces;
