//! A streamed miss stored for later hits: a copy of the chat chunks the relay forwards
//! is assembled (`response_cache::assemble`) while the caller receives them, nothing held back; when
//! the stream completes, the answer in the surface's non-streamed form is stored under the
//! request's `waitUntil`, so a later request (streamed or not) hits it. A stream that fails, is
//! cut, or is not in chat chunks (a native Anthropic stream) stores nothing.

use super::http::now_ms;
use crate::request::reply::StreamStore;
use crate::request::stream_copy::StreamCopy;
use crate::response_cache::stored::StoredMeta;
use crate::usage::TokenCounts;
use futures::channel::oneshot;
use worker::{Context, Env};

pub struct StreamCapture {
    copy: StreamCopy,
    entry: oneshot::Sender<(StoredMeta, Vec<u8>)>,
}

impl StreamCapture {
    /// Starts capturing a served 200 stream (`request::answer` decides which are captured).
    pub fn start((env, ctx): (&Env, &Context), store: StreamStore) -> Self {
        let (copy, write) = StreamCopy::of(store);
        let (tx, rx) = oneshot::channel::<(StoredMeta, Vec<u8>)>();
        let env = env.clone();
        ctx.wait_until(async move {
            // A stream that did not complete drops the sender: nothing is stored.
            if let Ok((meta, body)) = rx.await {
                super::ports::put(&env, write, meta, body).await;
            }
        });
        Self { copy, entry: tx }
    }

    /// Relayed chat chunks, before the surface's encoder.
    pub fn push(&mut self, chat_chunks: &[u8]) {
        self.copy.push(chat_chunks);
    }

    /// The stream reached `[DONE]`; `tokens` is the usage the relay read.
    pub fn completed(self, tokens: Option<TokenCounts>) {
        if let Some(entry) = self.copy.entry(tokens, now_ms()) {
            let _ = self.entry.send(entry);
        }
    }
}
