//! `GET /admin/v1/tenants/{t}/explain`: a dry run of a requested name's resolution
//! and chain. Nothing is sent upstream and nothing changes: the routing objects are read, not
//! asked to admit (no probe claimed, no grant taken, no `rpm` counted, no stats folded).
//!
//! Each candidate's decision is `cascade::precheck::decide`, the function the cascade runs for
//! its own request, over the admission the object's `acquire` would answer now
//! (`RoutingSnapshot::dry_acquire`). The chain is `routing::build_chain` with the same inputs a
//! request brings but the ones it cannot have: no caller scope (every model usable), no
//! conversation (no cache affinity), no pin, no prompt (every window fits).

use super::explain_query::ExplainQuery;
use super::stats::SnapshotView;
use super::store::Stored;
use super::{json, Admin, AdminStore, Answer, CommandError, ObjectControl};
use crate::admin::views::{CandidateDecision, CandidateView, Explanation, LiveStats};
use crate::cascade::context_window::Fit;
use crate::cascade::precheck::{decide, Check, Decision};
use crate::cascade::{acquire_request, Limits};
use crate::config::SortedMap;
use crate::config::{ProviderName, TenantConfig, TenantId};
use crate::health::provider_state::BreakerStatus;
use crate::routing::auto::{self, AutoName};
use crate::routing::facts::{Agent, RequestFacts, Task};
use crate::routing::rank::{headroom_factor, scores, Ranked, Ranking};
use crate::routing::resolve::{alias_model, alias_ranking, cached_shares, lookup, Target};
use crate::routing::stats::routing_snapshot::RoutingSnapshot;
use crate::routing::{build_chain, Candidate, ChainError, Observed, RouteInput};
use std::rc::Rc;

/// What `explain` reads besides the admin store: the tenant's config as the request path holds
/// it (provider keys opened, so a provider without a usable key is gone here too), and a read of
/// each provider's routing object.
#[allow(async_fn_in_trait)]
pub trait ExplainControl {
    async fn route_config(&self, t: &TenantId) -> Result<Option<Rc<TenantConfig>>, CommandError>;
    /// By provider name; a provider whose object holds nothing yet may be absent.
    async fn snapshots(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, RoutingSnapshot>>;
}

/// The moment and the reads a dry run is made of.
pub struct DryRun<'a> {
    pub snapshots: &'a SortedMap<String, RoutingSnapshot>,
    pub now_ms: u64,
    /// The request's random draw (spreads, exploration), as a request would have one.
    pub draw: u64,
    pub request_budget_ms: u64,
}

/// The facts a request with these query values would bring (none when no condition reads any).
fn facts(cfg: &TenantConfig, q: &ExplainQuery) -> Option<RequestFacts> {
    let reads = cfg.reads();
    let (task, agent) = client(q);
    reads.any.then(|| RequestFacts {
        model: q.model.clone(),
        stream: q.stream,
        tools: q.tools,
        max_tokens: None,
        has_images: false,
        endpoint: q.endpoint,
        metadata: q
            .metadata
            .clone()
            .filter(|_| reads.metadata)
            .unwrap_or_default(),
        task: Some(task),
        agent: Some(agent),
    })
}

/// The query's task and agent: an agent not given is `unknown`, a task not given follows the
/// agent (`code` for a coding agent, else `chat`), as a request without other signals is.
fn client(q: &ExplainQuery) -> (Task, Agent) {
    let agent = q.agent.unwrap_or(Agent::Unknown);
    let task = q.task.unwrap_or(if agent.codes() {
        Task::Code
    } else {
        Task::Chat
    });
    (task, agent)
}

/// The restrictions the request would match, each as written with its `index` first.
fn applied_views(cfg: &TenantConfig, applied: &[usize]) -> Vec<serde_json::Value> {
    applied
        .iter()
        .filter_map(|&i| {
            let mut shown = serde_json::Map::new();
            shown.insert("index".into(), i.into());
            let body = cfg.settings.restrictions.get(i)?.body().as_object()?;
            shown.extend(body.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(serde_json::Value::Object(shown))
        })
        .collect()
}

/// The dry run: the chain `q` would get, each candidate with the cascade's decision.
pub fn explain(
    cfg: &TenantConfig,
    q: &ExplainQuery,
    dry: &DryRun<'_>,
) -> Result<Explanation, ChainError> {
    let stats = dry
        .snapshots
        .iter()
        .filter_map(|(p, snap)| Some((p, snap.stats.as_ref()?)));
    let view = SnapshotView::of(stats, dry.now_ms);
    let facts = facts(cfg, q);
    let applied = crate::routing::restriction::applied(cfg, facts.as_ref());
    let (task, agent) = client(q);
    let input = RouteInput {
        observed: &view,
        now_ms: dry.now_ms,
        draw: dry.draw,
        may_use: &|_| true,
        remembered: None,
        facts: facts.as_ref(),
        pin: None,
    };
    let route = match build_chain(cfg, &q.model, &input) {
        Ok(route) => route,
        // Known, but nothing resolves today: the dry run's answer is the empty chain (a request
        // gets 503 `no_candidates`, which is the gateway's state, not a fault of this read).
        Err(ChainError::NoCandidates { .. }) => {
            return Ok(Explanation {
                model: q.model.clone(),
                task: task.as_str(),
                agent: agent.as_str(),
                restrictions: applied_views(cfg, &applied),
                candidates: Vec::new(),
            })
        }
        Err(e) => return Err(e),
    };
    let limits = Limits {
        budget_ms: dry.request_budget_ms,
        breaker: cfg.settings.breaker,
        lease_ms: 0,
        max_park_ms: 0,
        // As the request path sets it (`edge/gateway.rs`): in degraded mode with probes on, a
        // due breaker is left to the scheduled probe and skipped.
        degraded: cfg.settings.degraded_since.is_some() && cfg.settings.probes,
    };
    let origins = origins(cfg, q, &input, &route.candidates);
    // The chain's last positions came from links or the tenant fallback, each its own position.
    let linked_from = route.candidates.len() - route.appended.len();
    let candidates = route
        .candidates
        .iter()
        .zip(origins)
        .enumerate()
        .map(|(i, (c, origin))| {
            let via = i
                .checked_sub(linked_from)
                .and_then(|k| route.appended.get(k).copied());
            let fresh = RoutingSnapshot::default();
            let snap = dry
                .snapshots
                .get(c.provider.name.as_str())
                .unwrap_or(&fresh);
            let check = Check {
                supported: q.endpoint.served_by(c.provider.kind),
                fit: Fit::Fits,
                admission: Some(
                    snap.dry_acquire(&acquire_request(c, &limits), dry.now_ms)
                        .admission,
                ),
                parked_until: snap.pool_parked_until(&c.provider.key_ids(), dry.now_ms),
            };
            let decision = decide(&check, dry.now_ms);
            let cached_share = cached_share(cfg, &view, c, origin.ranked.is_some());
            // A linked position was not chosen by a ranking, whatever the name ranks.
            let (score, stats) = origin.ranked.filter(|_| via.is_none()).unzip();
            CandidateView {
                position: if via.is_some() { i } else { origin.position },
                model: c.model.id.to_string(),
                provider: c.provider.name.to_string(),
                decision: match decision {
                    Decision::Try { .. } => CandidateDecision::Try,
                    Decision::Skip { .. } => CandidateDecision::Skip,
                },
                reason: decision.reason(),
                until: decision.until(),
                breaker_until: breaker_until(snap, c, dry.now_ms),
                score,
                stats,
                via,
                effective_price_per_mtok: c.model.effective_price(cached_share),
                cached_share,
            }
        })
        .collect();
    Ok(Explanation {
        model: q.model.clone(),
        task: task.as_str(),
        agent: agent.as_str(),
        restrictions: applied_views(cfg, &route.restrictions),
        candidates,
    })
}

/// The cached share a candidate's order read: a ranking reads the live stats, a price alias the
/// shares its config was resolved at; only a model with a cached price has one.
fn cached_share(
    cfg: &TenantConfig,
    view: &SnapshotView,
    c: &Candidate<'_>,
    ranked: bool,
) -> Option<f64> {
    c.model.cached_input_price_per_mtok?;
    if ranked {
        view.health(&c.provider.name, &c.model.id)?.cached_share
    } else {
        cached_shares(cfg).get(&c.model.id).copied()
    }
}

fn breaker_until(snap: &RoutingSnapshot, c: &Candidate<'_>, now_ms: u64) -> Option<u64> {
    snap.state
        .not_closed(now_ms)
        .into_iter()
        .find(|v| v.model == c.model.id && v.state == BreakerStatus::Open)
        .and_then(|v| v.breaker_until)
}

/// Where a candidate came from: its position, and its score and stats when a ranking chose it.
struct Origin {
    position: usize,
    ranked: Option<(f64, LiveStats)>,
}

/// Each candidate's origin. A rule's candidate comes from the first entry (or spread member)
/// that resolves to its model; a name without a rule is position 0; an `auto` strategy ranks
/// the whole chain, so its position is its rank.
fn origins(
    cfg: &TenantConfig,
    q: &ExplainQuery,
    input: &RouteInput<'_>,
    chain: &[Candidate<'_>],
) -> Vec<Origin> {
    let entries = match auto::parse(&q.model) {
        Some(AutoName::Strategy(s)) => {
            let set = auto::strategy_set(cfg, input);
            let st = &cfg.settings;
            let how = s.ranking(st.exploration_share, st.headroom_threshold);
            return chain
                .iter()
                .enumerate()
                .map(|(i, c)| Origin {
                    position: i,
                    ranked: score_in(&set, &how, c),
                })
                .collect();
        }
        Some(AutoName::Rule(r)) => cfg.rules.named(r).map(|r| r.chain.entries()),
        None => crate::routing::condition::matched_rule(cfg, &q.model, input.facts)
            .map(|r| r.chain.entries()),
    };
    let names: Vec<Vec<&str>> = match entries {
        Some(entries) => entries
            .iter()
            .map(|e| e.names().into_iter().map(|n| n.as_str()).collect())
            .collect(),
        None => vec![vec![q.model.as_str()]],
    };
    chain
        .iter()
        .map(|c| {
            let found = names.iter().enumerate().find_map(|(i, members)| {
                members
                    .iter()
                    .find(|n| yields(cfg, n, input, c))
                    .map(|n| (i, *n))
            });
            let Some((position, name)) = found else {
                // Not traced to an entry (a loosely matched version): its own name's place.
                return Origin {
                    position: 0,
                    ranked: None,
                };
            };
            let ranked = match lookup(cfg, name) {
                Some(Target::Alias(_, a)) if !a.rank_by.is_price() => {
                    let (set, how) = alias_ranking(cfg, a, input);
                    score_in(&set, &how, c)
                }
                _ => None,
            };
            Origin { position, ranked }
        })
        .collect()
}

/// Whether the entry `name` resolves to `c`'s model for this request.
fn yields(cfg: &TenantConfig, name: &str, input: &RouteInput<'_>, c: &Candidate<'_>) -> bool {
    match lookup(cfg, name) {
        Some(Target::Model(m)) => m.id == c.model.id,
        Some(Target::Alias(n, a)) => {
            alias_model(cfg, n, a, input).is_some_and(|m| m.id == c.model.id)
        }
        None => false,
    }
}

fn score_in(set: &[Ranked<'_>], how: &Ranking, c: &Candidate<'_>) -> Option<(f64, LiveStats)> {
    let at = set.iter().position(|r| r.model.id == c.model.id)?;
    let score = scores(set, how).get(at).copied()?;
    let health = set.get(at)?.health;
    let mut stats = LiveStats::from(health.unwrap_or_default());
    stats.headroom_factor = headroom_factor(health, how.headroom_threshold);
    Some((score, stats))
}

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn explain(&self, t: &TenantId, query: Option<&str>) -> Answer {
        let q = ExplainQuery::parse(query)?;
        let cfg = self
            .routing
            .route_config(t)
            .await?
            .ok_or_else(|| super::not_found(&format!("Tenant '{t}'")))?;
        let providers: Vec<ProviderName> = cfg.providers.keys().cloned().collect();
        let snapshots = self.routing.snapshots(t, &providers).await?;
        let dry = DryRun {
            snapshots: &snapshots,
            now_ms: self.cx.now,
            draw: u64::from_le_bytes(self.random::<8>()?),
            request_budget_ms: self.cx.defaults.request_budget_ms,
        };
        let explained = explain(&cfg, &q, &dry).map_err(|e| CommandError::Api(e.api_error()))?;
        json(200, &explained)
    }
}

#[cfg(test)]
#[path = "explain_tests.rs"]
mod tests;
