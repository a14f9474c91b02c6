//! A streamed miss's copy for the cache: the chat chunks the relay forwards, assembled
//! (`response_cache::assemble`) while the caller receives them, nothing held back; once the
//! stream completes, the entry to store, in the surface's non-streamed form, so a later request
//! (streamed or not) hits it. A stream that fails or is cut never asks for its entry.

use super::lookup::{refusal_in, CacheWrite};
use super::reply::StreamStore;
use crate::config::CatalogModel;
use crate::response_cache::assemble::ChatAssembler;
use crate::response_cache::stored::{storable, StoredMeta};
use crate::surfaces::Surface;
use crate::usage::{cost_usd, TokenCounts};

pub struct StreamCopy {
    assembler: ChatAssembler,
    surface: Surface,
    model: Option<CatalogModel>,
    /// Model, provider and fallback depth.
    served_by: (String, String, usize),
    platform: Option<&'static str>,
    ttl_s: u32,
}

impl StreamCopy {
    /// The copy of a served stream, and where its entry goes.
    pub fn of(store: StreamStore) -> (Self, CacheWrite) {
        let copy = Self {
            assembler: ChatAssembler::default(),
            surface: store.surface,
            model: store.model,
            served_by: store.served_by,
            platform: store.platform,
            ttl_s: store.write.ttl_s,
        };
        (copy, store.write)
    }

    /// Relayed chat chunks, before the surface's encoder.
    pub fn push(&mut self, chat_chunks: &[u8]) {
        self.assembler.push(chat_chunks);
    }

    /// The entry of a stream that reached `[DONE]` at `now` (ms), with the usage the relay read:
    /// `None` when its answer is not one to store (not assembled, a refusal, too large).
    pub fn entry(self, tokens: Option<TokenCounts>, now: u64) -> Option<(StoredMeta, Vec<u8>)> {
        let body = self.assembler.answer(self.surface, tokens, now / 1_000)?;
        if !storable(200, refusal_in(self.surface, &body), body.len()) {
            return None;
        }
        let cost_usd = match (&self.model, tokens) {
            (Some(m), Some(t)) => cost_usd(&t, m),
            _ => 0.0,
        };
        let (model, provider, depth) = self.served_by;
        let meta = StoredMeta {
            model,
            provider,
            content_type: "application/json".to_owned(),
            stored_at_ms: now,
            expires_at_ms: now.saturating_add(u64::from(self.ttl_s) * 1_000),
            cost_usd,
            depth,
            platform: self.platform.map(str::to_owned),
        };
        Some((meta, body))
    }
}

#[cfg(test)]
#[path = "stream_copy_tests.rs"]
mod tests;
