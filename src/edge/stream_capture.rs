//! A streamed miss stored for later hits: a copy of the chat chunks the relay forwards
//! is assembled (`response_cache::assemble`) while the caller receives them, nothing held back; when
//! the stream completes, the answer in the surface's non-streamed form is stored under the
//! request's `waitUntil`, so a later request (streamed or not) hits it. A stream that fails, is
//! cut, or is not in chat chunks (a native Anthropic stream) stores nothing.

use super::http::now_ms;
use crate::config::CatalogModel;
use crate::request::lookup::refusal_in;
use crate::request::reply::StreamStore;
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

impl StreamCapture {
    /// Starts capturing a served 200 stream (`request::answer` decides which are captured).
    pub fn start((env, ctx): (&Env, &Context), store: StreamStore) -> Self {
        let StreamStore {
            write,
            surface,
            model,
            served_by,
        } = store;
        let (tx, rx) = oneshot::channel::<(StoredMeta, Vec<u8>)>();
        let (env, ttl_s) = (env.clone(), write.ttl_s);
        ctx.wait_until(async move {
            // A stream that did not complete drops the sender: nothing is stored.
            if let Ok((meta, body)) = rx.await {
                super::ports::put(&env, write, meta, body).await;
            }
        });
        Self {
            assembler: ChatAssembler::default(),
            surface,
            model,
            served_by,
            ttl_s,
            entry: tx,
        }
    }

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
