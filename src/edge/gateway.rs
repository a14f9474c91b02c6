//! Caller routes: chat completions through the cascade, the model list, health.

use super::caller::Callers;
use super::deployment::Deployment;
use super::http::{self, now_ms, random_bytes, CallerRequest, HttpReply};
use super::limits::{govern, Admitting, Governed};
use super::live_stats;
use super::metrics::Metrics;
use super::request_end::LogContext;
use super::response_cache::{self, Answered, CacheWrite};
use super::routed;
use super::routing_object::RoutingClient;
use super::served::{
    debug_counters, exhausted, piped_response, with_memory_counter, with_served_headers, ServedBy,
};
use super::stream_response::{self as streamed, StreamOwner, StreamUsageOwner};
use super::upstream::{FetchUpstream, UpstreamBody};
use super::usage_sink::{self, StreamHandOff};
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::cascade::{settle, Cascade, Clock, Ending, Limits, Outcome};
use crate::config::TenantConfig;
use crate::events::log_line::LogUsage;
use crate::metrics::counts::MetricOutcome;
use crate::metrics::request_metric::unserved;
use crate::request::conversation::Conversation;
use crate::request::resolve::Resolved;
use crate::request::{self, BodyLimits, Progress, Scoped};
use crate::routing::ChainError;
use crate::surfaces::Surface;
use crate::usage::estimate::answer_tokens;
use crate::usage::{usd_decimal, PendingUsage};
use worker::{web_sys, Context, Env, Response};

pub(super) struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        now_ms()
    }

    async fn sleep(&self, ms: u64) {
        worker::Delay::from(std::time::Duration::from_millis(ms)).await;
    }

    fn random(&self) -> u64 {
        // No randomness to be had: the longest delay, never a synchronized zero.
        random_bytes::<8>().map_or(u64::MAX, u64::from_le_bytes)
    }
}

pub fn new_request_id() -> String {
    random_bytes::<8>()
        .map(|b| format!("req_{}", ::hex::encode(b)))
        .unwrap_or_else(|_| "req_unknown".to_owned())
}

pub(super) fn chain_error(e: &ChainError) -> ApiError {
    e.api_error()
}

/// Every caller surface (chat completions, Messages, Responses, embeddings): the same
/// resolution, chain, cascade, headers and log line; only the request and answer are translated.
pub async fn serve(
    surface: Surface,
    req: web_sys::Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    request_id: &str,
) -> worker::Result<Response> {
    let started = now_ms();
    let req = CallerRequest::new(req);
    let metrics = Metrics::default();
    let mut log = LogContext {
        surface,
        request_id,
        progress: Progress::default(),
        started,
        metrics: &metrics,
        env,
        ctx,
    };
    let result: Result<HttpReply, ApiError> = async {
        let callers = Callers(env, ctx, dep, &metrics);
        let limits = BodyLimits {
            bytes: dep.max_chat_body,
            values: dep.max_chat_json_values,
        };
        let at = (surface, limits, request_id);
        let digest =
            |cfg: &TenantConfig, sent: &ChatRequest| response_cache::digest(&req, cfg, sent);
        let front = request::front(&req, &callers, at, &mut log.progress, digest).await;
        let Scoped {
            key,
            cfg,
            inbound,
            pending,
            digest,
        } = front?;
        let limits = &cfg.settings.limits;
        let Resolved {
            route,
            conversation,
            refusals,
            truncate_oldest,
            prompt_estimate,
            need,
        } = routed::route(&req, &cfg, &key, &inbound)?;
        let (chain, refusal_only) = (route.candidates, route.refusal_only);
        let cache = response_cache::Plan::of(&req, (&cfg, &key), &inbound, digest)?;
        let admitting = Admitting {
            tenant: &cfg.tenant,
            key: &key,
            limits,
            end_user: pending.end_user.as_deref(),
            request_id,
            need,
            request_budget_ms: dep.defaults.request_budget_ms,
        };
        let governed = match govern(env, ctx, admitting, &metrics).await {
            Ok(g) => g,
            Err(refused) => {
                log.emit("limited", refused.error.status(), &[]);
                log.count_unserved(MetricOutcome::Refused, &[]);
                return Ok(refused.response(surface));
            }
        };
        let back = (pending, governed);
        let (pending, governed) = match cache
            .try_hit(env, ctx, &inbound, prompt_estimate, back)
            .await
        {
            Ok((reply, hit)) => {
                log.cache_hit(&hit);
                return Ok(reply.and_then(|r| debug_counters(r, &metrics, dep)));
            }
            Err(back) => back,
        };
        let state = RoutingClient {
            env,
            ctx,
            tenant: &cfg.tenant,
            metrics: &metrics,
        };
        let cascade = Cascade {
            state: &state,
            upstream: &FetchUpstream::new(&inbound, prompt_estimate)
                .guarding(cfg.settings.context_window_guard, truncate_oldest)
                .watching_refusals(refusals.watches()),
            clock: &WorkerClock,
            limits: Limits {
                budget_ms: dep.defaults.request_budget_ms,
                breaker: cfg.settings.breaker,
                lease_ms: dep.lease_ms,
                max_park_ms: dep.max_park_ms,
                degraded: cfg.settings.degraded_since.is_some() && cfg.settings.probes,
            },
        };
        let outcome = cascade.run_with(&chain, refusals, refusal_only).await;
        let usage = Metered {
            cfg: &cfg,
            pending,
            prompt_estimate,
            governed,
            cache: cache.write(request_id, dep.debug_counters),
        };
        let reply = respond(outcome, &state, &log, dep, usage, conversation).await;
        Ok(reply.and_then(|r| cache.mark().apply(r)))
    }
    .await;
    let resp = match result {
        Ok(Ok(resp)) => resp,
        // Logged with its attempts by `respond`.
        Ok(Err(err)) => http::error_in(surface, &err)?,
        Err(err) => {
            log.emit("rejected", err.status(), &[]);
            log.count_rejected(&err);
            http::error_in(surface, &err)?
        }
    };
    with_memory_counter(resp, dep)
}

/// What a request's usage record needs from the request path.
struct Metered<'a> {
    cfg: &'a TenantConfig,
    pending: PendingUsage,
    /// What the request's prompt is charged when the upstream reports no usage.
    prompt_estimate: u64,
    /// How the record goes to the ledger.
    governed: Governed,
    /// Where a miss's answer is stored (`None`: the cache is not used).
    cache: Option<CacheWrite>,
}

/// The cascade's outcome as the caller's response; logged here, once. A served or exhausted
/// request hands off its usage record (a stream's when it settles).
async fn respond(
    outcome: Outcome<UpstreamBody>,
    state: &RoutingClient<'_>,
    log: &LogContext<'_>,
    dep: &Deployment,
    Metered {
        cfg,
        pending,
        prompt_estimate,
        governed,
        cache,
    }: Metered<'_>,
    conversation: Option<Conversation>,
) -> HttpReply {
    let Outcome { ending, attempts } = outcome;
    let streamed = matches!(
        &ending,
        Ending::Served {
            body: UpstreamBody::Stream(_),
            ..
        }
    );
    let headers_ms = match &ending {
        Ending::Served { body, .. } => Some(body.headers_ms()),
        _ => None,
    };
    live_stats::record_attempts(&cfg.tenant, &attempts, streamed, headers_ms);
    live_stats::flush_due(state.env, state.ctx, &cfg.tenant, dep.stats_flush_ms);
    let mut log_usage = None;
    let (label, result) = match ending {
        Ending::Served {
            status,
            body,
            depth,
            settlement,
            refusal,
        } => {
            let served = refusal
                .as_ref()
                .map_or(attempts.last(), |r| r.served_attempt(&attempts));
            let mut by = ServedBy {
                depth,
                model: served.map(|a| a.model.as_str()).unwrap_or(""),
                provider: served.map(|a| a.provider.as_str()).unwrap_or(""),
                truncated: served.and_then(|a| a.truncated),
                cost_usd: None,
                cache_affinity: conversation
                    .as_ref()
                    .map(|c| super::affinity_memory::with(|m| c.served(served, now_ms(), m))),
                policy_fallback: refusal.as_ref().map(|r| r.fallback),
            };
            // A fallback's answer is charged at the model that served it.
            let serving_model = cfg.models.get(by.model);
            let metric = log.served_metric(by.model, depth, &attempts);
            let resp = match body {
                UpstreamBody::Full {
                    content_type,
                    bytes,
                    usage,
                    ..
                } => {
                    settle(state, settlement).await;
                    let mut cost_usd = 0.0;
                    if let Some(model) = serving_model {
                        // No `usage` in the answer: charged the estimate, never nothing.
                        let tokens = answer_tokens(usage, prompt_estimate, &bytes);
                        // A refusal's answers are billed too (`usage::billed`).
                        let others = refusal.map(|r| r.billed).unwrap_or_default();
                        let also = super::refusal::billed(cfg, &attempts, others, prompt_estimate);
                        let record = pending.served_with(now_ms(), (model, tokens), &also);
                        by.cost_usd = record.cost_usd.map(usd_decimal);
                        cost_usd = record.cost_usd.unwrap_or(0.0);
                        log_usage = LogUsage::of(record.tokens, record.cost_usd);
                        usage_sink::hand_off(state.env, state.ctx, record, governed);
                    }
                    log.count_served(metric, by.provider, log_usage);
                    if let Some(write) = cache {
                        let answered = Answered::of(log.surface, status, &content_type, &bytes);
                        write.store(state.env, state.ctx, answered.by(&by, cost_usd));
                    }
                    http::bytes(status, &content_type, bytes)
                }
                // A stream settles when it ends: a failure after the first byte still counts.
                UpstreamBody::Stream(start) => {
                    let finish = log.stream_metric(metric, by.provider);
                    let usage = match serving_model {
                        Some(model) => Some(StreamUsageOwner {
                            pending,
                            model: model.clone(),
                            prompt_estimate,
                            hand_off: StreamHandOff::start(state.env, state.ctx, governed, finish),
                        }),
                        None => finish.count_now(log),
                    };
                    let at = (state.env, state.ctx);
                    let cache = cache
                        .and_then(|w| w.streaming(at, (status, log.surface), &by, serving_model));
                    let owner = StreamOwner {
                        env: state.env.clone(),
                        tenant: state.tenant.clone(),
                        request_id: log.request_id.to_owned(),
                        settlement,
                        probe_hold_ms: dep.defaults.request_budget_ms,
                        usage,
                        cache,
                    };
                    piped_response(status, streamed::body(start, owner, state.ctx))
                }
            };
            (
                by.policy_fallback.map_or("served", |f| f.log_outcome()),
                resp.and_then(|r| with_served_headers(r, &by, log.metrics, dep)),
            )
        }
        Ending::Refused(err) => {
            log.count_unserved(MetricOutcome::Refused, &attempts);
            ("refused", Err(err))
        }
        Ending::Exhausted => {
            let (outcome, _) = unserved(&attempts);
            log.count_unserved(outcome, &attempts);
            let record = pending.exhausted(now_ms());
            usage_sink::hand_off(state.env, state.ctx, record, governed);
            ("exhausted", exhausted(&attempts, log.surface))
        }
        Ending::Cancelled => (
            "cancelled",
            Err(ApiError::new(
                ErrorKind::ClientClosedRequest,
                "The client closed the request.",
            )),
        ),
    };
    let status = match &result {
        Ok(r) => r.status_code(),
        Err(e) => e.status(),
    };
    log.emit_with(label, status, &attempts, log_usage);
    result
}
