//! Breakers this isolate knows to be open from its own reports' answers
//! (`routing::open_breakers`), as routing reads them.

use super::isolate::isolate;
use super::live_stats::IsolateView;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::health::provider_state::ModelTransition;
use crate::routing::{ModelHealth, Observed};

/// Notes each transition a report was answered with; hands them on unchanged.
pub fn learned(
    tenant: &TenantId,
    provider: &ProviderName,
    transitions: Vec<ModelTransition>,
) -> Vec<ModelTransition> {
    isolate(|i| {
        i.open_breakers
            .borrow_mut()
            .learn(tenant, provider, &transitions)
    });
    transitions
}

/// A manual reset through this isolate: every breaker of the tenant is closed.
pub fn forget_tenant(tenant: &TenantId) {
    isolate(|i| i.open_breakers.borrow_mut().forget_tenant(tenant));
}

fn known_open(tenant: &TenantId, provider: &ProviderName, model: &ModelId, now: u64) -> bool {
    isolate(|i| {
        i.open_breakers
            .borrow_mut()
            .known_open(tenant, provider, model, now)
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
