//! CogniGate: a multi-tenant LLM gateway for Cloudflare Workers.
//!
//! Everything that decides (resolution, chains, failure classification, Retry-After, key pools,
//! breakers, the cascade loop) is plain Rust with time passed in, tested on the host. The `edge`
//! module, compiled only for wasm32, adapts D1, Durable Objects and fetch to those decisions.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod admin;
pub mod api;
pub mod callers;
pub mod cascade;
pub mod config;
pub mod events;
pub mod governance;
pub mod health;
pub mod metrics;
pub mod providers;
pub mod request;
pub mod response_cache;
pub mod routing;
pub mod scheduled;
pub mod stream;
pub mod surfaces;
pub mod traces;
pub mod usage;

#[cfg(not(target_arch = "wasm32"))]
pub mod mock;

#[cfg(target_arch = "wasm32")]
mod edge;
