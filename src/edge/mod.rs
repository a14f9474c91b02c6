//! The wasm edge: adapts D1, Durable Objects, fetch and logging to the pure core. Nothing here
//! decides routing; it moves bytes between the runtime and the decisions.

mod admin;
mod affinity_memory;
mod body_read;
mod cache_store;
mod catalog;
mod count_tokens;
mod d1;
mod deployment;
mod entry;
mod gateway;
mod health;
mod http;
mod ledger_client;
mod ledger_object;
mod ledger_rollups;
mod limits;
mod live_stats;
mod local_grants;
mod metrics;
mod model_metrics;
mod open_breakers;
mod refusal;
mod response_cache;
mod routed;
mod routing_client;
mod routing_object;
mod served;
mod signals;
mod store;
mod stream_capture;
mod stream_report;
mod stream_response;
mod upstream;
mod upstream_body;
mod usage_sink;
