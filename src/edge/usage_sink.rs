//! Where the request path hands over each caller request's usage record: one per request that
//! reached the cascade. Every record goes through `deliver`, the one place the ledger is fed
//! from; for now the record is written as one JSON log line (`"msg":"usage"`).

use crate::usage::UsageRecord;
use futures::channel::oneshot;
use serde::Serialize;
use worker::{console_log, Context, Env};

/// A record known when the answer is (non-streamed answers, exhausted requests).
pub fn hand_off(env: &Env, ctx: &Context, record: UsageRecord) {
    let env = env.clone();
    ctx.wait_until(async move { deliver(&env, record).await });
}

/// A stream's record, known only when the stream settles (ends, is cut, or the caller goes
/// away). Registered under the request's `waitUntil` when the stream starts, so it is delivered
/// even from `Drop`.
pub struct StreamHandOff {
    record: Option<oneshot::Sender<UsageRecord>>,
}

impl StreamHandOff {
    pub fn start(env: &Env, ctx: &Context) -> Self {
        let (tx, rx) = oneshot::channel::<UsageRecord>();
        let env = env.clone();
        ctx.wait_until(async move {
            if let Ok(record) = rx.await {
                deliver(&env, record).await;
            }
        });
        Self { record: Some(tx) }
    }

    /// Synchronous, so it can be called from `Drop`; a second call sends nothing.
    pub fn send(&mut self, record: UsageRecord) {
        if let Some(tx) = self.record.take() {
            let _ = tx.send(record);
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    msg: &'static str,
    #[serde(flatten)]
    record: &'a UsageRecord,
}

async fn deliver(_env: &Env, record: UsageRecord) {
    let line = Line {
        msg: "usage",
        record: &record,
    };
    console_log!("{}", serde_json::to_string(&line).unwrap_or_default());
}
