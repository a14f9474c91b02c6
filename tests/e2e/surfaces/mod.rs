//! The API surfaces on workerd: Anthropic as a provider, the Messages, Responses and embeddings
//! endpoints, the official SDKs, and streaming.

mod anthropic;
mod endpoints;
mod prompt_cache;
mod sdk;
mod stream_hardening;
mod streaming;
