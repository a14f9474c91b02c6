//! Answer and bill: the cascade's run as the caller's reply. A served non-streamed answer is
//! billed here, at the model that served it (its reported usage, or else the estimate: never
//! nothing), and stored on a miss; a served stream is handed to the runtime with its bill, to be
//! billed when it ends; an exhausted request is billed $0 so its reservation is released.

use super::admit::Governed;
use super::finish::{Ended, Finish};
use super::lookup::{Answered, CacheWrite};
use super::ports::{LedgerPort, Meter, Ports, TraceSink};
use super::reply::{Body, Reply, ServedBy, StreamBill, StreamStore};
use super::Deployed;
use crate::api::{ApiError, ErrorKind};
use crate::cascade::{
    exhausted_error, exhausted_retry_after_secs, send_owed, CandidateAttempt, Clock, Ending, Run,
    UpstreamBody,
};
use crate::config::TenantConfig;
use crate::events::log_line::LogUsage;
use crate::metrics::counts::MetricOutcome;
use crate::metrics::request_metric::unserved;
use crate::request::conversation::Conversation;
use crate::request::trace_end::{self, cache_attr};
use crate::surfaces::Surface;
use crate::traces::answer_facts::response_facts;
use crate::traces::request_trace::Ending as TraceEnding;
use crate::traces::traced::{self, Traced};
use crate::traces::ResponseFacts;
use crate::usage::estimate::answer_tokens;
use crate::usage::{usd_decimal, Billed, PendingUsage};

/// What a request's usage record needs from the request path.
pub struct Metered<'a> {
    pub cfg: &'a TenantConfig,
    pub pending: PendingUsage,
    /// What the request's prompt is charged when the upstream reports no usage.
    pub prompt_estimate: u64,
    /// How the record goes to the ledger.
    pub governed: Governed,
    /// Where a miss's answer is stored (`None`: the cache is not used).
    pub cache: Option<CacheWrite>,
    /// The miss's `X-CogniGate-Cache` value.
    pub mark: Option<&'static str>,
    /// The request's trace (`None`: not traced).
    pub trace: Option<Traced>,
}

/// The reply, and what the request's event says of it.
pub struct Answer<S> {
    pub reply: Reply<S>,
    pub outcome: &'static str,
    pub usage: Option<LogUsage>,
    pub attempts: Vec<CandidateAttempt>,
}

impl<S> Answer<S> {
    pub fn ended(&self) -> Ended<'_> {
        Ended {
            outcome: self.outcome,
            status: self.reply.status,
            attempts: &self.attempts,
            usage: self.usage,
        }
    }
}

/// The cascade's run as the caller's reply. `state` is the routing state the run used.
pub async fn answer<P: Ports>(
    p: &P,
    state: &P::State<'_>,
    run: Run<UpstreamBody<P::Stream>>,
    (finish, at): (&Finish<'_>, &Deployed),
    metered: Metered<'_>,
    conversation: Option<Conversation>,
) -> Answer<P::Stream> {
    let Run { ending, attempts } = run;
    let now = p.clock().now_ms();
    let tenant = &metered.cfg.tenant;
    let (streamed, headers_ms) = match &ending {
        Ending::Served { body, .. } => (
            matches!(body, UpstreamBody::Stream(_)),
            Some(body.headers_ms()),
        ),
        _ => (false, None),
    };
    p.observe(tenant, &attempts, streamed, headers_ms);
    let surface = finish.surface;
    let trace_mark = cache_attr(metered.mark);
    let unanswered = |reply, outcome, attempts| Answer {
        reply,
        outcome,
        usage: None,
        attempts,
    };
    match ending {
        Ending::Served {
            status,
            body,
            depth,
            owed_report,
            refusal,
        } => {
            let served = refusal
                .as_ref()
                .map_or(attempts.last(), |r| r.served_attempt(&attempts));
            let mut by = ServedBy {
                depth,
                model: served.map(|a| a.model.as_str()).unwrap_or(""),
                provider: served.map(|a| a.provider.as_str()).unwrap_or(""),
                platform: None,
                truncated: served.and_then(|a| a.truncated),
                cost_usd: None,
                cache_affinity: conversation
                    .as_ref()
                    .map(|c| p.memory(|m| c.served(served, now, m))),
                policy_fallback: refusal.as_ref().map(|r| r.fallback),
            };
            let Metered {
                cfg,
                pending,
                prompt_estimate,
                governed,
                cache,
                mark,
                trace,
            } = metered;
            let served_at = served.and_then(|s| attempts.iter().position(|a| std::ptr::eq(a, s)));
            let traced_end = |response, billing, end_ms| TraceEnding {
                attempts: &attempts,
                served: served_at,
                depth: Some(depth),
                response,
                billing,
                cache: trace_mark,
                status,
                outcome: "served",
                end_ms,
            };
            by.platform = cfg
                .providers
                .get(by.provider)
                .map(|p| p.platform().as_str());
            // A fallback's answer is charged at the model that served it.
            let serving_model = cfg.models.get(by.model);
            let metric = finish.served_metric(by.model, depth, &attempts, now);
            let mut usage = None;
            let body = match body {
                UpstreamBody::Full {
                    content_type,
                    bytes,
                    usage: reported,
                    ..
                } => {
                    send_owed(state, owed_report).await;
                    let mut cost_usd = 0.0;
                    let mut billing = None;
                    if let Some(model) = serving_model {
                        let tokens = answer_tokens(reported, prompt_estimate, &bytes);
                        // A refusal's answers are billed too (`usage::billed`).
                        let others = refusal.map(|r| r.billed).unwrap_or_default();
                        let also = billed(cfg, &attempts, others, prompt_estimate);
                        let record = pending.served_with(now, (model, tokens), &also);
                        by.cost_usd = record.cost_usd.map(usd_decimal);
                        cost_usd = record.cost_usd.unwrap_or(0.0);
                        usage = LogUsage::of(record.tokens, record.cost_usd);
                        billing = traced::billing(&record);
                        p.ledger().hand_off(record, governed);
                    }
                    if let Some(t) = &trace {
                        let response = response_facts(surface, &bytes, t.capture());
                        let end = traced_end(response, billing, p.clock().now_ms());
                        trace_end::export(p, Some(t), &end);
                    }
                    finish.count_served(p, metric, by.provider, usage);
                    if let Some(write) = cache {
                        let answered = Answered {
                            surface,
                            status,
                            refused: by.policy_fallback.is_some(),
                            content_type: &content_type,
                            bytes: &bytes,
                            served_by: (by.model, by.provider, by.depth),
                            platform: by.platform,
                            cost_usd,
                        };
                        write.store(p.cache(), answered, now);
                    }
                    Body::Bytes {
                        content_type,
                        bytes,
                    }
                }
                // A stream is billed when it ends: a failure after the first byte still counts.
                UpstreamBody::Stream(start) => {
                    let mut metric = finish.stream_metric(metric, by.provider);
                    metric.trace = trace
                        .map(|t| t.unsettled(&traced_end(ResponseFacts::default(), None, now)));
                    let bill = match serving_model {
                        Some(model) => Some(StreamBill {
                            pending,
                            model: model.clone(),
                            prompt_estimate,
                            governed,
                            metric,
                        }),
                        None => {
                            if let Some(u) = metric.trace.take() {
                                let (tenant, export, spans) = u.settle(None, now);
                                if let Some(export) = export {
                                    p.traces().export(&tenant, &export, spans);
                                }
                            }
                            if let Some((tenant, m, provider, _)) = metric.at_end(None, now) {
                                p.meter().count(&tenant, &m, &provider, None);
                            }
                            None
                        }
                    };
                    let capture = status == 200
                        && by.policy_fallback.is_none()
                        && surface != Surface::Embeddings;
                    let store = cache.filter(|_| capture).map(|write| StreamStore {
                        write,
                        surface,
                        model: serving_model.cloned(),
                        served_by: (by.model.to_owned(), by.provider.to_owned(), by.depth),
                        platform: by.platform,
                    });
                    Body::Relay(Box::new(super::reply::Relay {
                        start,
                        tenant: tenant.clone(),
                        request_id: finish.request_id.to_owned(),
                        owed_report,
                        probe_hold_ms: at.request_budget_ms,
                        bill,
                        store,
                    }))
                }
            };
            let mut headers = Vec::new();
            by.headers(&mut headers);
            at.counters(p, &mut headers);
            if let Some(mark) = mark {
                headers.push(("x-cognigate-cache", mark.to_owned()));
            }
            let outcome = by.policy_fallback.map_or("served", |f| f.log_outcome());
            Answer {
                reply: Reply {
                    status,
                    headers,
                    body,
                },
                outcome,
                usage,
                attempts,
            }
        }
        Ending::RequestCaused(err) => {
            let reply = Reply::error(surface, &err);
            unserved_trace(
                p,
                (metered.trace.as_ref(), metered.mark),
                &attempts,
                (reply.status, "refused", now),
            );
            finish.count_unserved(p, MetricOutcome::Refused, &attempts, now);
            unanswered(reply, "refused", attempts)
        }
        Ending::Exhausted => {
            let (outcome, _) = unserved(&attempts);
            finish.count_unserved(p, outcome, &attempts, now);
            let record = metered.pending.exhausted(now);
            p.ledger().hand_off(record, metered.governed);
            let retry = exhausted_retry_after_secs(&attempts, now);
            let mut reply = Reply::retry_after(surface, &exhausted_error(&attempts), retry);
            if let Some(mark) = metered.mark {
                reply.headers.push(("x-cognigate-cache", mark.to_owned()));
            }
            unserved_trace(
                p,
                (metered.trace.as_ref(), metered.mark),
                &attempts,
                (reply.status, outcome.as_str(), now),
            );
            unanswered(reply, "exhausted", attempts)
        }
        Ending::Cancelled => {
            let err = ApiError::new(
                ErrorKind::ClientClosedRequest,
                "The client closed the request.",
            );
            let reply = Reply::error(surface, &err);
            unserved_trace(
                p,
                (metered.trace.as_ref(), metered.mark),
                &attempts,
                (reply.status, "cancelled", now),
            );
            unanswered(reply, "cancelled", attempts)
        }
    }
}

/// The spans of a request nothing served.
fn unserved_trace<P: Ports>(
    p: &P,
    (trace, mark): (Option<&Traced>, Option<&'static str>),
    attempts: &[CandidateAttempt],
    (status, outcome, end_ms): (u16, &'static str, u64),
) {
    let end = TraceEnding {
        attempts,
        served: None,
        depth: None,
        response: ResponseFacts::default(),
        billing: None,
        cache: cache_attr(mark),
        status,
        outcome,
        end_ms,
    };
    trace_end::export(p, trace, &end);
}

/// Each answer billed beside the served one, at the model of its attempt: its reported usage,
/// or the estimate (an answer is never free for want of a report).
pub fn billed<'c, S>(
    cfg: &'c TenantConfig,
    attempts: &[CandidateAttempt],
    answers: Vec<(usize, UpstreamBody<S>)>,
    prompt_estimate: u64,
) -> Vec<Billed<'c>> {
    answers
        .into_iter()
        .filter_map(|(at, body)| {
            let model = cfg.models.get(attempts.get(at)?.model.as_str())?;
            match body {
                UpstreamBody::Full { usage, bytes, .. } => {
                    Some((model, answer_tokens(usage, prompt_estimate, &bytes)))
                }
                // Never held: a stream is not read for a refusal.
                UpstreamBody::Stream(_) => None,
            }
        })
        .collect()
}
