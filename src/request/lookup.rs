//! Lookup: the response cache on the request path. The decisions are `response_cache`'s
//! (`opt_in`, `key`, `stored`, `replay`); this stage reads the request's levels, looks the
//! answer up, and says what a miss stores.
//!
//! - No level opting in costs nothing: no hashing, no lookup, no header; a tenant whose
//!   `cache.max_ttl_s` is 0 forbids the cache, whatever a request asks.
//! - The body is digested only once parsed, past its size, depth and value limits.
//! - The key's `models` list is checked before (`scope`), so a refused request never reaches
//!   the cache; the list is part of the key, so an answer is shared only by keys of one scope.
//! - A hit makes no upstream call, reports nothing to a breaker or the stats, takes no provider
//!   rate-limit slot; admission still runs (a hit counts toward `rpm`) and its usage record costs
//!   $0 with `cache_hit: true` and `saved_usd`.
//! - A miss stores a 200 non-streamed answer that is no refusal and at most 1 MiB, after the
//!   answer is sent.

use super::ports::CacheStore;
use super::reply::{Body, Reply};
use super::Incoming;
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::cascade::Clock;
use crate::config::{CallerKey, ModelId, ProviderName, TenantConfig};
use crate::providers::refusal::is_refusal;
use crate::providers::Dialect;
use crate::response_cache::key::{body_digest, key_with_body, KeyInput};
use crate::response_cache::opt_in::{decide, CacheUse, MODE_HEADER, TTL_HEADER};
use crate::response_cache::replay::streamed;
use crate::response_cache::stored::{storable, StoredMeta};
use crate::response_cache::ttl::{name_cache_ttl_s, tenant_may_cache};
use crate::surfaces::{Inbound, Surface};
use crate::usage::{PendingUsage, UsageRecord};

/// Request headers that change what is served, so they are part of the key when sent.
const KEYED_HEADERS: &[&str] = &[
    crate::routing::pin::HEADER,
    crate::routing::pin::PLATFORM_HEADER,
    "anthropic-beta",
    "x-cognigate-truncate",
    "x-cognigate-metadata",
];

/// The body's canonical digest, from the parsed request (so past the body's limits), and only
/// when some level may opt in (the tenant's setting, a name's `cache_ttl_s`, the request's TTL
/// header) and the tenant does not forbid the cache.
pub fn digest(
    incoming: &impl Incoming,
    cfg: &TenantConfig,
    sent: &ChatRequest,
) -> Option<[u8; 32]> {
    let off = incoming.header(MODE_HEADER).is_some();
    let asked = incoming.header(TTL_HEADER).is_some();
    let forbidden = cfg.settings.cache.is_some_and(|c| c.forbids());
    if off || forbidden || !(asked || tenant_may_cache(cfg)) {
        return None;
    }
    body_digest(sent.fields())
}

/// What the cache does for one request.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    Off,
    Bypass,
    Use { key: String, ttl_s: u32 },
}

impl Plan {
    /// The request's levels decide (`response_cache::opt_in`); a bad header value is a 400 naming it.
    pub fn of(
        incoming: &impl Incoming,
        (cfg, key): (&TenantConfig, &CallerKey),
        inbound: &Inbound,
        digest: Option<[u8; 32]>,
    ) -> Result<Self, ApiError> {
        let mode = incoming.header(MODE_HEADER);
        let ttl = incoming.header(TTL_HEADER);
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
            crate::surfaces::facts::facts(inbound, cfg.reads(), &|h| incoming.header(h))?
        } else {
            None
        };
        let name_ttl = name_cache_ttl_s(cfg, requested, facts.as_ref());
        let decided = decide(cfg.settings.cache.as_ref(), name_ttl, mode, ttl).map_err(|e| {
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
                let headers: Vec<(&str, &str)> = KEYED_HEADERS
                    .iter()
                    .filter_map(|h| incoming.header(h).map(|v| (*h, v)))
                    .collect();
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

    /// The `X-CogniGate-Cache` value a miss's answer carries, if any.
    pub fn mark(&self) -> Option<&'static str> {
        match self {
            Self::Off => None,
            Self::Bypass => Some("bypass"),
            Self::Use { .. } => Some("miss"),
        }
    }

    /// What a miss stores once answered; `None` when the cache is not used. With
    /// `DEBUG_COUNTERS` on, a stored entry is announced with the request's id.
    pub fn write(&self, request_id: &str, debug: bool) -> Option<CacheWrite> {
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

/// A hit: the answer, its $0 usage record, and what the stored answer was.
pub struct Hit<S> {
    pub reply: Reply<S>,
    pub record: UsageRecord,
    pub meta: StoredMeta,
}

/// The stored answer, if there is a fresh one this request can be served from (and, under a
/// data restriction, one `inside` says was produced within it). Otherwise the pending usage
/// back. A request that does not use the cache reads nothing, not even the clock.
pub async fn lookup<S>(
    (store, clock): (&impl CacheStore, &impl Clock),
    (plan, inside): (&Plan, &dyn Fn(&StoredMeta) -> bool),
    inbound: &Inbound,
    prompt_estimate: u64,
    pending: PendingUsage,
) -> Result<Hit<S>, PendingUsage> {
    let Plan::Use { key, .. } = plan else {
        return Err(pending);
    };
    let found = store.get(key).await;
    let now = clock.now_ms();
    let Some((meta, body)) = found.filter(|(m, _)| m.fresh(now) && inside(m)) else {
        return Err(pending);
    };
    // Built whole before its usage is recorded: stored data this request cannot be answered
    // from (a stream it cannot make) is a miss, answered upstream.
    let Some(reply) = hit_reply(inbound, &meta, body, prompt_estimate, now) else {
        return Err(pending);
    };
    let served_by = (
        ModelId::parse(&meta.model).ok(),
        ProviderName::parse(&meta.provider).ok(),
    );
    let record = pending.cache_hit(now, served_by, meta.cost_usd);
    Ok(Hit {
        reply,
        record,
        meta,
    })
}

/// The answer of a hit with its headers; `None` when the stored entry cannot make one.
fn hit_reply<S>(
    inbound: &Inbound,
    meta: &StoredMeta,
    body: Vec<u8>,
    prompt_estimate: u64,
    now: u64,
) -> Option<Reply<S>> {
    let stream = inbound.stream();
    let body = if stream {
        let include_usage = inbound
            .chat()
            .raw("stream_options")
            .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
            .is_some_and(|o| o["include_usage"] == true);
        let surface = inbound.surface();
        let sse = streamed(surface, &body, include_usage, prompt_estimate, now / 1_000).ok()?;
        Body::Events(sse)
    } else {
        Body::Bytes {
            content_type: meta.content_type.clone(),
            bytes: body,
        }
    };
    let mut headers = vec![
        ("x-cognigate-cache", "hit".to_owned()),
        ("age", meta.age_s(now).to_string()),
        ("x-cognigate-model", meta.model.clone()),
        ("x-cognigate-provider", meta.provider.clone()),
        ("x-cognigate-fallback-depth", meta.depth.to_string()),
    ];
    if !stream {
        headers.push(("x-cognigate-cost-usd", "0".to_owned()));
    }
    Some(Reply {
        status: 200,
        headers,
        body,
    })
}

/// A miss's entry, written after the answer is sent.
#[derive(Debug)]
pub struct CacheWrite {
    pub key: String,
    pub ttl_s: u32,
    /// The request id a stored entry is announced with (`DEBUG_COUNTERS`), so tests wait for
    /// the write instead of sleeping.
    pub announce: Option<String>,
}

/// Whether an answer, as the caller reads it, is a safety refusal (never stored).
pub fn refusal_in(surface: Surface, bytes: &[u8]) -> bool {
    match surface {
        Surface::Chat => is_refusal(Dialect::Openai, bytes),
        Surface::Messages => is_refusal(Dialect::Anthropic, bytes),
        // A Responses answer cut by the content filter (`responses_response::response`).
        Surface::Responses => serde_json::from_slice::<serde_json::Value>(bytes)
            .is_ok_and(|v| v["incomplete_details"]["reason"] == "content_filter"),
        Surface::Embeddings => false,
    }
}

/// A served non-streamed answer, as its entry needs it.
pub struct Answered<'a> {
    pub surface: Surface,
    pub status: u16,
    /// A safety refusal was seen on the way (`policy_fallback`).
    pub refused: bool,
    pub content_type: &'a str,
    pub bytes: &'a [u8],
    /// Model, provider and fallback depth.
    pub served_by: (&'a str, &'a str, usize),
    /// The serving provider's platform.
    pub platform: Option<&'a str>,
    pub cost_usd: f64,
}

impl CacheWrite {
    /// Stores the answer of a miss, unless it is no 200, a refusal, or too large.
    pub fn store(self, store: &impl CacheStore, a: Answered<'_>, now: u64) {
        // The answer as the caller reads it: a refusal in its own shape is never stored.
        let refused = a.refused || refusal_in(a.surface, a.bytes);
        if !storable(a.status, refused, a.bytes.len()) {
            return;
        }
        let (model, provider, depth) = a.served_by;
        let meta = StoredMeta {
            model: model.to_owned(),
            provider: provider.to_owned(),
            content_type: a.content_type.to_owned(),
            stored_at_ms: now,
            expires_at_ms: now.saturating_add(u64::from(self.ttl_s) * 1_000),
            cost_usd: a.cost_usd,
            depth,
            platform: a.platform.map(str::to_owned),
        };
        store.put(self, meta, a.bytes.to_vec());
    }
}
