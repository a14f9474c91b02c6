//! Breakers an isolate knows to be open from its own reports' answers, so a spread never draws a
//! member whose breaker it just opened.
//!
//! The grant book also learns an open breaker, but only when an acquire is answered with a skip,
//! and keeps it for one lease (1.5 s by default): a spread drawing such a member again after the
//! lease would get a position that yields nothing. This keeps the breaker's own end instead, and
//! is read only by routing (the spread draw, affinity, ranking), never by admission, which still
//! asks the routing object. A manual reset through this isolate forgets the tenant's entries; one
//! through another isolate is seen here when the open duration ends.

use crate::config::{ModelId, ProviderName, TenantId};
use crate::health::provider_state::ModelTransition;
use crate::health::Transition;
use std::collections::HashMap;

/// A tenant/provider/model.
type Target = (String, String, String);

/// (tenant, provider, model) → the breaker's `breaker_until` (epoch ms).
#[derive(Debug, Default)]
pub struct OpenBreakers(HashMap<Target, u64>);

fn target(tenant: &TenantId, provider: &ProviderName, model: &ModelId) -> Target {
    (tenant.to_string(), provider.to_string(), model.to_string())
}

impl OpenBreakers {
    /// Notes each transition a report was answered with: an opened breaker until its end, a
    /// closed one forgotten.
    pub fn learn(&mut self, tenant: &TenantId, provider: &ProviderName, ts: &[ModelTransition]) {
        for t in ts {
            let target = target(tenant, provider, &t.model);
            match &t.transition {
                Transition::Opened { breaker_until, .. } => {
                    self.0.insert(target, *breaker_until);
                }
                Transition::Closed { .. } => {
                    self.0.remove(&target);
                }
            }
        }
    }

    /// A manual reset through this isolate: every breaker of the tenant is closed.
    pub fn forget_tenant(&mut self, tenant: &TenantId) {
        self.0.retain(|(t, _, _), _| t != tenant.as_str());
    }

    /// Whether the breaker is known open at `now`; one past its end is forgotten.
    pub fn known_open(
        &mut self,
        tenant: &TenantId,
        provider: &ProviderName,
        model: &ModelId,
        now: u64,
    ) -> bool {
        let target = target(tenant, provider, model);
        match self.0.get(&target) {
            Some(&until) if now < until => true,
            Some(_) => {
                self.0.remove(&target);
                false
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> (TenantId, ProviderName, ModelId) {
        (
            TenantId::parse("acme").unwrap(),
            ProviderName::parse("p1").unwrap(),
            ModelId::parse("m1").unwrap(),
        )
    }

    fn transition(transition: Transition) -> ModelTransition {
        ModelTransition {
            model: names().2,
            transition_seq: 1,
            transition,
            open_ms: None,
        }
    }

    fn opened(until: u64) -> ModelTransition {
        transition(Transition::Opened {
            reason: "server".into(),
            breaker_until: until,
        })
    }

    #[test]
    fn an_opened_breaker_is_known_open_until_its_end_then_forgotten() {
        let (t, p, m) = names();
        let mut open = OpenBreakers::default();
        open.learn(&t, &p, &[opened(1_000)]);
        assert!(open.known_open(&t, &p, &m, 999));
        assert!(!open.known_open(&t, &p, &m, 1_000));
        assert!(open.is_empty(), "an ended breaker is dropped when read");
    }

    #[test]
    fn a_closed_breaker_and_a_reset_tenant_are_forgotten() {
        let (t, p, m) = names();
        let mut open = OpenBreakers::default();
        open.learn(&t, &p, &[opened(1_000)]);
        let closed = transition(Transition::Closed {
            reason: "probe succeeded".into(),
        });
        open.learn(&t, &p, &[closed]);
        assert!(!open.known_open(&t, &p, &m, 0));
        let other = TenantId::parse("other").unwrap();
        open.learn(&t, &p, &[opened(1_000)]);
        open.learn(&other, &p, &[opened(1_000)]);
        open.forget_tenant(&t);
        assert!(!open.known_open(&t, &p, &m, 0));
        assert!(open.known_open(&other, &p, &m, 0));
        assert_eq!(open.len(), 1);
    }
}
