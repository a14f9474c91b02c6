//! The response cache on the request path. The decisions are pure
//! (`response_cache::opt_in`, `response_cache::key`, `response_cache::stored`, `response_cache::replay`);
//! this file reads the request's headers, talks to the store (`cache_store`) and sets the
//! answer's headers.
//!
//! - No level opting in costs nothing: no hashing, no lookup, no header; a tenant whose
//!   `cache.max_ttl_s` is 0 forbids the cache, whatever a request asks.
//! - The body is digested only once parsed, past its size, depth and value limits.
//! - The key's `models` list is checked before (`limits::allowed`), so a refused request never
//!   reaches the cache; the list is part of the key, so an answer is shared only by keys of one
//!   scope.
//! - A hit makes no upstream call, reports nothing to a breaker or the stats, takes no provider
//!   rate-limit slot; admission still runs (a hit counts toward `rpm`) and its usage record costs
//!   $0 with `cache_hit: true` and `saved_usd`.
//! - A miss stores a 200 non-streamed answer that is no refusal and at most 1 MiB, after the
//!   answer is sent (`waitUntil`).

use super::cache_store::CacheStore;
use super::events::{ConsoleEvents, Debug, Event, EventSink};
use super::http::{self, header, now_ms, CallerRequest, HttpReply};
use super::limits::Governed;
use super::own_poll::own_poll;
use super::served::{stream_response, ServedBy};
use super::usage_sink;
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::config::{CallerKey, ModelId, ProviderKind, ProviderName, TenantConfig};
use crate::providers::refusal::is_refusal;
use crate::response_cache::key::{body_digest, key_with_body, KeyInput};
use crate::response_cache::opt_in::{decide, CacheUse, MODE_HEADER, TTL_HEADER};
use crate::response_cache::replay::streamed;
use crate::response_cache::stored::{storable, StoredMeta};
use crate::response_cache::ttl::{name_cache_ttl_s, tenant_may_cache};
use crate::surfaces::{Inbound, Surface};
use crate::usage::PendingUsage;
use worker::{Context, Env, Response};

/// Request headers that change what is served, so they are part of the key when sent.
const KEYED_HEADERS: &[&str] = &[
    crate::routing::pin::HEADER,
    "anthropic-beta",
    "x-cognigate-truncate",
    "x-cognigate-metadata",
];

/// The body's canonical digest, from the parsed request (so past the body's limits), and only
/// when some level may opt in (the tenant's setting, a name's `cache_ttl_s`, the request's TTL
/// header) and the tenant does not forbid the cache.
pub(super) fn digest(
    req: &CallerRequest,
    cfg: &TenantConfig,
    sent: &ChatRequest,
) -> Option<[u8; 32]> {
    let off = header(req, MODE_HEADER).is_some();
    let asked = header(req, TTL_HEADER).is_some();
    let forbidden = cfg.settings.cache.is_some_and(|c| c.forbids());
    if off || forbidden || !(asked || tenant_may_cache(cfg)) {
        return None;
    }
    body_digest(sent.fields())
}

/// What the cache does for one request.
pub(super) enum Plan {
    Off,
    Bypass,
    Use { key: String, ttl_s: u32 },
}

/// The `X-CogniGate-Cache` value an answer carries, if any.
#[derive(Clone, Copy)]
pub(super) struct Mark(Option<&'static str>);

impl Mark {
    pub(super) fn apply(self, resp: Response) -> HttpReply {
        if let Some(v) = self.0 {
            let set = resp.headers().set("x-cognigate-cache", v);
            set.map_err(|_| ApiError::internal())?;
        }
        Ok(resp)
    }
}

impl Plan {
    /// The request's levels decide (`response_cache::opt_in`); a bad header value is a 400 naming it.
    pub(super) fn of(
        req: &CallerRequest,
        (cfg, key): (&TenantConfig, &CallerKey),
        inbound: &Inbound,
        digest: Option<[u8; 32]>,
    ) -> Result<Self, ApiError> {
        let mode = header(req, MODE_HEADER);
        let ttl = header(req, TTL_HEADER);
        // A header sent is checked even when nothing was digested (a tenant that forbids it).
        if mode.is_none() && ttl.is_none() && digest.is_none() {
            return Ok(Self::Off);
        }
        let requested = inbound.model();
        // A rule with a `when` needs the request's facts to say whether it matches.
        let conditional = cfg
            .rules
            .for_match(requested)
            .iter()
            .any(|r| r.when.is_some());
        let facts = if conditional {
            let metadata = header(req, "x-cognigate-metadata");
            crate::surfaces::facts::facts(inbound, cfg.rules.reads(), metadata.as_deref())?
        } else {
            None
        };
        let name_ttl = name_cache_ttl_s(cfg, requested, facts.as_ref());
        let decided = decide(
            cfg.settings.cache.as_ref(),
            name_ttl,
            mode.as_deref(),
            ttl.as_deref(),
        )
        .map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidRequest,
                format!("{}: {}", e.header, e.reason),
            )
            .with_param(e.header)
        })?;
        Ok(match (decided, digest) {
            (CacheUse::Off, _) => Self::Off,
            (CacheUse::Bypass, _) => Self::Bypass,
            (CacheUse::Use { ttl_s }, Some(body)) => {
                let sent: Vec<(&str, String)> = KEYED_HEADERS
                    .iter()
                    .filter_map(|h| header(req, h).map(|v| (*h, v)))
                    .collect();
                let headers: Vec<(&str, &str)> =
                    sent.iter().map(|(h, v)| (*h, v.as_str())).collect();
                let input = KeyInput {
                    tenant: cfg.tenant.as_str(),
                    generation: key.generation,
                    scope: key.policy.models.as_deref(),
                    surface: inbound.surface().as_str(),
                    requested,
                    // Keyed when a rule may route a stream elsewhere than a plain request.
                    stream: cfg.rules.reads().stream.then(|| inbound.stream()),
                    headers: &headers,
                    body: &[],
                };
                Self::Use {
                    key: key_with_body(&input, &body),
                    ttl_s,
                }
            }
            // Not JSON: the parse refused it before; nothing to key.
            (CacheUse::Use { .. }, None) => Self::Off,
        })
    }

    pub(super) fn mark(&self) -> Mark {
        Mark(match self {
            Self::Off => None,
            Self::Bypass => Some("bypass"),
            Self::Use { .. } => Some("miss"),
        })
    }

    /// A hit's answer (its usage record handed off) with what the stored answer was, or the
    /// pending usage and admission back.
    pub(super) async fn try_hit(
        &self,
        env: &Env,
        ctx: &Context,
        inbound: &Inbound,
        prompt_estimate: u64,
        back: (PendingUsage, Governed),
    ) -> Result<(HttpReply, StoredMeta), (PendingUsage, Governed)> {
        // A tenant without the cache never polls (so never compiles) the lookup (own_poll.rs).
        if !matches!(self, Self::Use { .. }) {
            return Err(back);
        }
        own_poll(try_hit(self, (env, ctx), inbound, prompt_estimate, back)).await
    }

    /// What a miss stores once answered; `None` when the cache is not used.
    /// With `DEBUG_COUNTERS` on, a stored entry is logged with the request's id
    /// (`"msg":"cache_stored"`), so tests wait for the write instead of sleeping.
    pub(super) fn write(&self, request_id: &str, debug: bool) -> Option<CacheWrite> {
        match self {
            Self::Use { key, ttl_s } => Some(CacheWrite {
                key: key.clone(),
                ttl_s: *ttl_s,
                announce: debug.then(|| request_id.to_owned()),
            }),
            _ => None,
        }
    }
}

/// The stored answer, if there is a fresh one this request can be served from: the answer with
/// its headers, its usage record handed off. Otherwise the pending usage and admission back.
pub(super) async fn try_hit(
    plan: &Plan,
    (env, ctx): (&Env, &Context),
    inbound: &Inbound,
    prompt_estimate: u64,
    (pending, governed): (PendingUsage, Governed),
) -> Result<(HttpReply, StoredMeta), (PendingUsage, Governed)> {
    let Plan::Use { key, .. } = plan else {
        return Err((pending, governed));
    };
    let now = now_ms();
    let found = CacheStore::of(env).get(key).await;
    let Some((meta, body)) = found.filter(|(m, _)| m.fresh(now)) else {
        return Err((pending, governed));
    };
    // Built whole before its usage is handed off: stored data this request cannot be answered
    // from (a stream it cannot make, a header it cannot carry) is a miss, answered upstream.
    let Some(resp) = hit_response(inbound, &meta, body, prompt_estimate, now) else {
        return Err((pending, governed));
    };
    let served_by = (
        ModelId::parse(&meta.model).ok(),
        ProviderName::parse(&meta.provider).ok(),
    );
    let record = pending.cache_hit(now, served_by, meta.cost_usd);
    usage_sink::hand_off(env, ctx, record, governed);
    Ok((Ok(resp), meta))
}

/// The answer of a hit with its headers; `None` when the stored entry cannot make one.
fn hit_response(
    inbound: &Inbound,
    meta: &StoredMeta,
    body: Vec<u8>,
    prompt_estimate: u64,
    now: u64,
) -> Option<Response> {
    let resp = if inbound.stream() {
        let include_usage = inbound
            .chat()
            .raw("stream_options")
            .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
            .is_some_and(|o| o["include_usage"] == true);
        let surface = inbound.surface();
        let sse = streamed(surface, &body, include_usage, prompt_estimate, now / 1_000).ok()?;
        stream_response(200, futures::stream::once(async move { Ok(sse) })).ok()?
    } else {
        http::bytes(200, &meta.content_type, body).ok()?
    };
    let h = resp.headers();
    let age = meta.age_s(now).to_string();
    let depth = meta.depth.to_string();
    let mut set = vec![
        ("x-cognigate-cache", "hit"),
        ("age", age.as_str()),
        ("x-cognigate-model", meta.model.as_str()),
        ("x-cognigate-provider", meta.provider.as_str()),
        ("x-cognigate-fallback-depth", depth.as_str()),
    ];
    if !inbound.stream() {
        set.push(("x-cognigate-cost-usd", "0"));
    }
    for (k, v) in set {
        h.set(k, v).ok()?;
    }
    Some(resp)
}

/// A miss's entry, written after the answer is sent.
pub(super) struct CacheWrite {
    pub(super) key: String,
    pub(super) ttl_s: u32,
    pub(super) announce: Option<String>,
}

impl CacheWrite {
    /// Writes the entry (under the request's `waitUntil`).
    pub(super) async fn put(self, env: &Env, meta: StoredMeta, body: Vec<u8>) {
        CacheStore::of(env)
            .put(&self.key, &meta, body, self.ttl_s)
            .await;
        if let Some(request_id) = self.announce {
            let stored = Debug::CacheStored {
                request_id: &request_id,
            };
            ConsoleEvents.emit(&Event::Debug(stored));
        }
    }
}

/// Whether an answer, as the caller reads it, is a safety refusal (never stored).
pub(super) fn refusal_in(surface: Surface, bytes: &[u8]) -> bool {
    match surface {
        Surface::Chat => is_refusal(ProviderKind::Openai, bytes),
        Surface::Messages => is_refusal(ProviderKind::Anthropic, bytes),
        // A Responses answer cut by the content filter (`responses_response::response`).
        Surface::Responses => serde_json::from_slice::<serde_json::Value>(bytes)
            .is_ok_and(|v| v["incomplete_details"]["reason"] == "content_filter"),
        Surface::Embeddings => false,
    }
}

/// What a served non-streamed answer was, for its entry.
pub(super) struct Answered<'a> {
    surface: Surface,
    status: u16,
    refused: bool,
    content_type: &'a str,
    bytes: &'a [u8],
    model: &'a str,
    provider: &'a str,
    depth: usize,
    cost_usd: f64,
}

impl<'a> Answered<'a> {
    pub(super) fn of(
        surface: Surface,
        status: u16,
        content_type: &'a str,
        bytes: &'a [u8],
    ) -> Self {
        Self {
            surface,
            status,
            refused: false,
            content_type,
            bytes,
            model: "",
            provider: "",
            depth: 0,
            cost_usd: 0.0,
        }
    }

    /// Who served it and what it cost; a safety refusal seen (`policy_fallback`) is never stored.
    pub(super) fn by(self, by: &ServedBy<'a>, cost_usd: f64) -> Self {
        Self {
            refused: by.policy_fallback.is_some(),
            model: by.model,
            provider: by.provider,
            depth: by.depth,
            cost_usd,
            ..self
        }
    }
}

impl CacheWrite {
    pub(super) fn store(self, env: &Env, ctx: &Context, a: Answered<'_>) {
        // The answer as the caller reads it: a refusal in its own shape is never stored.
        let refused = a.refused || refusal_in(a.surface, a.bytes);
        if !storable(a.status, refused, a.bytes.len()) {
            return;
        }
        let now = now_ms();
        let meta = StoredMeta {
            model: a.model.to_owned(),
            provider: a.provider.to_owned(),
            content_type: a.content_type.to_owned(),
            stored_at_ms: now,
            expires_at_ms: now.saturating_add(u64::from(self.ttl_s) * 1_000),
            cost_usd: a.cost_usd,
            depth: a.depth,
        };
        let body = a.bytes.to_vec();
        let env = env.clone();
        ctx.wait_until(async move { self.put(&env, meta, body).await });
    }
}
