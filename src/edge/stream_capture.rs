//! A streamed miss stored for later hits: a copy of the chat chunks the relay forwards
//! is assembled (`response_cache::assemble`) while the caller receives them, nothing held back; when
//! the stream completes, the answer in the surface's non-streamed form is stored under the
//! request's `waitUntil`, so a later request (streamed or not) hits it. A stream that fails, is
//! cut, or is not in chat chunks (a native Anthropic stream) stores nothing.

use super::http::now_ms;
use super::response_cache::{refusal_in, CacheWrite};
use super::served::ServedBy;
use crate::config::CatalogModel;
use crate::response_cache::assemble::ChatAssembler;
use crate::response_cache::stored::{storable, StoredMeta};
use crate::surfaces::Surface;
use crate::usage::{cost_usd, TokenCounts};
use futures::channel::oneshot;
use worker::{Context, Env};

pub struct StreamCapture {
    assembler: ChatAssembler,
    surface: Surface,
    model: Option<CatalogModel>,
    served_by: (String, String, usize),
    ttl_s: u32,
    entry: oneshot::Sender<(StoredMeta, Vec<u8>)>,
}

impl CacheWrite {
    /// Starts capturing a streamed answer; `None` when it is no 200 or a safety refusal was seen.
    pub(super) fn streaming(
        self,
        (env, ctx): (&Env, &Context),
        (status, surface): (u16, Surface),
        by: &ServedBy<'_>,
        model: Option<&CatalogModel>,
    ) -> Option<StreamCapture> {
        if status != 200 || by.policy_fallback.is_some() || surface == Surface::Embeddings {
            return None;
        }
        let (tx, rx) = oneshot::channel::<(StoredMeta, Vec<u8>)>();
        let (env, ttl_s) = (env.clone(), self.ttl_s);
        ctx.wait_until(async move {
            // A stream that did not complete drops the sender: nothing is stored.
            if let Ok((meta, body)) = rx.await {
                self.put(&env, meta, body).await;
            }
        });
        Some(StreamCapture {
            assembler: ChatAssembler::default(),
            surface,
            model: model.cloned(),
            served_by: (by.model.to_owned(), by.provider.to_owned(), by.depth),
            ttl_s,
            entry: tx,
        })
    }
}

impl StreamCapture {
    /// Relayed chat chunks, before the surface's encoder.
    pub fn push(&mut self, chat_chunks: &[u8]) {
        self.assembler.push(chat_chunks);
    }

    /// The stream reached `[DONE]`; `tokens` is the usage the relay read.
    pub fn completed(self, tokens: Option<TokenCounts>) {
        let now = now_ms();
        let Some(body) = self.assembler.answer(self.surface, tokens, now / 1_000) else {
            return;
        };
        if !storable(200, refusal_in(self.surface, &body), body.len()) {
            return;
        }
        let cost = match (&self.model, tokens) {
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
            cost_usd: cost,
            depth,
        };
        let _ = self.entry.send((meta, body));
    }
}
