//! Breakers this isolate knows to be open from its own reports' answers, so a spread
//! never draws a member whose breaker it just opened.
//!
//! The grant book also learns an open breaker, but only when an acquire is answered with a skip,
//! and keeps it for one lease (1.5 s by default): a spread drawing such a member again after the
//! lease would get a position that yields nothing. This keeps the breaker's own end instead, and
//! is read only by routing (the spread draw, affinity, ranking), never by admission, which still
//! asks the routing object. A manual reset through this isolate forgets the tenant's entries; one
//! through another isolate is seen here when the open duration ends.

use super::live_stats::IsolateView;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::health::breaker::Transition;
use crate::health::provider_state::ModelTransition;
use crate::routing::{ModelHealth, Observed};
use std::cell::RefCell;
use std::collections::HashMap;

type Target = (String, String, String);

thread_local! {
    /// (tenant, provider, model) → the breaker's `breaker_until` (epoch ms).
    static OPEN: RefCell<HashMap<Target, u64>> = RefCell::new(HashMap::new());
}

/// Notes each transition a report was answered with; hands them on unchanged.
pub fn learned(
    tenant: &TenantId,
    provider: &ProviderName,
    transitions: Vec<ModelTransition>,
) -> Vec<ModelTransition> {
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        for t in &transitions {
            let target = (
                tenant.to_string(),
                provider.to_string(),
                t.model.to_string(),
            );
            match &t.transition {
                Transition::Opened { breaker_until, .. } => {
                    o.insert(target, *breaker_until);
                }
                Transition::Closed { .. } => {
                    o.remove(&target);
                }
            }
        }
    });
    transitions
}

/// A manual reset through this isolate: every breaker of the tenant is closed.
pub fn forget_tenant(tenant: &TenantId) {
    OPEN.with(|o| o.borrow_mut().retain(|(t, _, _), _| t != tenant.as_str()));
}

fn known_open(tenant: &TenantId, provider: &ProviderName, model: &ModelId, now: u64) -> bool {
    let target = (tenant.to_string(), provider.to_string(), model.to_string());
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        match o.get(&target) {
            Some(&until) if now < until => true,
            Some(_) => {
                o.remove(&target);
                false
            }
            None => false,
        }
    })
}

/// The isolate's view, with the breakers known open here marked open.
pub struct WithOpenBreakers<'a>(pub IsolateView<'a>);

impl Observed for WithOpenBreakers<'_> {
    fn health(&self, provider: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        let seen = self.0.health(provider, model);
        if !known_open(self.0.tenant, provider, model, self.0.now_ms) {
            return seen;
        }
        Some(ModelHealth {
            breaker_open: true,
            ..seen.unwrap_or_default()
        })
    }
}
