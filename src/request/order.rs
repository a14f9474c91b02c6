//! The order of a caller request, from its first header to its one event: identify, read,
//! scope, resolve, admit, lookup, cascade, answer and bill, then finish. Each stage runs from
//! what the ones before it established, over `Ports`; the stream's relay is the runtime's,
//! handed what it owes in the reply. Every path, early exits included, ends in `finish` once.

use super::admit::{admit, Admitting};
use super::answer::{answer, Answer, Metered};
use super::finish::{Ended, Finish};
use super::lookup::{lookup, Hit, Plan};
use super::ports::{LedgerPort, Meter, Ports, Sending};
use super::reply::{Headers, Reply};
use super::resolve::{resolve, Resolved, View};
use super::{front, BodyLimits, Incoming, Progress, Scoped};
use crate::api::ApiError;
use crate::cascade::{Cascade, Clock, Limits};
use crate::metrics::counts::MetricOutcome;
use crate::response_cache::stored::produced_inside;
use crate::surfaces::Surface;
use crate::traces::traced::{context_of, Traced};

/// What the deployment sets for every request.
#[derive(Debug, Clone, Copy)]
pub struct Deployed {
    pub body: BodyLimits,
    /// `REQUEST_BUDGET_MS`: no new upstream call past it; a reservation lasts about as long.
    pub request_budget_ms: u64,
    /// `ROUTING_LEASE_MS`.
    pub lease_ms: u64,
    /// `MAX_PARK_MS`.
    pub max_park_ms: u64,
    /// `DEBUG_COUNTERS`: answers carry the request's D1 and Durable Object calls.
    pub debug_counters: bool,
}

impl Deployed {
    /// The D1 and Durable Object counters tests and benchmarks read (`DEBUG_COUNTERS`).
    pub fn counters<P: Ports>(&self, p: &P, into: &mut Headers) {
        if self.debug_counters {
            let (d1, objects) = p.meter().calls();
            into.push(("x-cognigate-d1-queries", d1.to_string()));
            into.push(("x-cognigate-do-calls", objects.to_string()));
        }
    }
}

/// Serves one caller request on `surface`.
pub async fn serve<P: Ports>(
    p: &P,
    incoming: &impl Incoming,
    (surface, request_id): (Surface, &str),
    at: &Deployed,
) -> Reply<P::Stream> {
    let mut finish = Finish {
        surface,
        request_id,
        progress: Progress::default(),
        started: p.clock().now_ms(),
        trace: None,
    };
    let (reply, ended) = match run(p, incoming, &mut finish, at).await {
        Ok(Reached::Answer(answer)) => {
            finish.emit(p, answer.ended());
            return answer.reply;
        }
        Ok(Reached::Early(reply, outcome)) => (reply, outcome),
        Err(err) => {
            let now = p.clock().now_ms();
            finish.count_rejected(p, &err, now);
            (Reply::error(surface, &err), "rejected")
        }
    };
    let ended = Ended {
        outcome: ended,
        status: reply.status,
        attempts: &[],
        usage: None,
    };
    finish.emit(p, ended);
    reply
}

/// How far the stages reached: an answer from the cascade, or an early reply of their own.
enum Reached<S> {
    Answer(Answer<S>),
    Early(Reply<S>, &'static str),
}

async fn run<P: Ports>(
    p: &P,
    incoming: &impl Incoming,
    finish: &mut Finish<'_>,
    at: &Deployed,
) -> Result<Reached<P::Stream>, ApiError> {
    let (surface, request_id) = (finish.surface, finish.request_id);
    let digest = |cfg: &_, sent: &_| super::lookup::digest(incoming, cfg, sent);
    let front = front(
        incoming,
        p.callers(),
        (surface, at.body, request_id),
        &mut finish.progress,
        digest,
    );
    let Scoped {
        key,
        cfg,
        inbound,
        pending,
        digest,
    } = front.await?;
    let context = context_of(&cfg, |name| incoming.header(name), request_id);
    finish.trace = Traced::begin(
        &cfg,
        context.as_ref(),
        (surface, inbound.chat()),
        finish.started,
    );
    let now = p.clock().now_ms();
    let observed = p.observed(&cfg.tenant, now);
    let draw = p.clock().random();
    let resolved = p.memory(|memory| {
        let view = View {
            observed: &observed,
            memory,
            now_ms: now,
            draw,
        };
        resolve(incoming, &cfg, &key, &inbound, &view)
    });
    let Resolved {
        route,
        conversation,
        refusals,
        truncate_oldest,
        prompt_estimate,
        need,
        client: (task, agent),
    } = resolved?;
    let inbound = inbound.injecting(route.prompt_cache);
    finish.progress.task = task.map(|t| t.as_str());
    finish.progress.agent = agent.map(|a| a.as_str());
    let plan = Plan::of(incoming, (&cfg, &key), &inbound, digest)?;
    let limits = &cfg.settings.limits;
    let admitting = Admitting {
        tenant: &cfg.tenant,
        key: &key,
        limits,
        end_user: pending.end_user.as_deref(),
        request_id,
        need,
        request_budget_ms: at.request_budget_ms,
    };
    let governed = match admit(p.ledger(), admitting, now).await {
        Ok(governed) => governed,
        Err(denied) => {
            finish.count_unserved(p, MetricOutcome::Refused, &[], p.clock().now_ms());
            let reply = Reply::retry_after(surface, &denied.error, denied.retry_after_secs);
            return Ok(Reached::Early(reply, "limited"));
        }
    };
    let inside = |m: &_| produced_inside(m, &cfg, &route.restrictions);
    let looked = lookup(
        (p.cache(), p.clock()),
        (&plan, &inside),
        &inbound,
        prompt_estimate,
        pending,
    );
    let pending = match looked.await {
        Ok(Hit {
            mut reply,
            record,
            meta,
        }) => {
            let now = record.at_ms;
            // The platform of the provider that served the stored answer, while it is configured.
            if let Some(platform) = cfg.providers.get(meta.provider.as_str()) {
                let platform = platform.platform().as_str().to_owned();
                reply.headers.push(("x-cognigate-platform", platform));
            }
            p.ledger().hand_off(record, governed);
            finish.count_hit(p, &meta, now);
            at.counters(p, &mut reply.headers);
            return Ok(Reached::Early(reply, "cache_hit"));
        }
        Err(pending) => pending,
    };
    let state = p.state(&cfg.tenant);
    let sending = Sending {
        prompt_estimate,
        guard: cfg.settings.context_window_guard,
        truncate_oldest,
        watch_refusals: refusals.watches(),
        trace: context.as_ref(),
    };
    let upstream = p.upstream(&inbound, sending);
    let cascade = Cascade {
        state: &state,
        upstream: &upstream,
        clock: p.clock(),
        limits: Limits {
            budget_ms: at.request_budget_ms,
            breaker: cfg.settings.breaker,
            lease_ms: at.lease_ms,
            max_park_ms: at.max_park_ms,
            degraded: cfg.settings.degraded_since.is_some() && cfg.settings.probes,
        },
    };
    let run = cascade
        .run_with(&route.candidates, refusals, route.refusal_only)
        .await;
    let metered = Metered {
        cfg: &cfg,
        pending,
        prompt_estimate,
        governed,
        cache: plan.write(request_id, at.debug_counters),
        mark: plan.mark(),
        trace: finish.trace.take(),
    };
    let answered = answer(p, &state, run, (finish, at), metered, conversation).await;
    Ok(Reached::Answer(answered))
}
