//! This isolate's grant books: one `ProviderGrants` per tenant/provider.
//!
//! While one request of a candidate is asking the routing object for a grant, others of the same
//! candidate wait for that answer instead of sending their own (`bench/capacity.py`: without
//! this, every request arriving during the round trip asks too, and a hot candidate's object load
//! roughly doubles). They wait by polling on their own short timer, never by being woken from the
//! leader's request: the runtime runs a task woken by another request in that request's context,
//! where its own I/O is refused, and cancels a request that only waits on another's promise.

use super::isolate::isolate;
use crate::config::TenantId;
use crate::health::ProviderGrants;

/// A tenant/provider.
pub type Scope = (String, String);
/// A tenant/provider/model.
pub type Candidate = (String, String, String);

pub fn with_grants<R>(
    tenant: &TenantId,
    provider: &str,
    f: impl FnOnce(&mut ProviderGrants) -> R,
) -> R {
    isolate(|i| {
        let mut g = i.grants.borrow_mut();
        f(g.entry((tenant.to_string(), provider.to_owned()))
            .or_default())
    })
}

/// Anything this isolate reports about a provider ends its grants there, both when the report is
/// sent and when its answer is back: from then on the routing object decides again, with what
/// was just reported, and a grant from an acquire that crossed the report is discarded.
pub fn news(tenant: &TenantId, provider: &str) {
    isolate(|i| {
        let key = (tenant.to_string(), provider.to_owned());
        if let Some(book) = i.grants.borrow_mut().get_mut(&key) {
            book.news();
        }
    });
}

/// A manual breaker reset through this isolate ends every grant and skip of the tenant here.
pub fn news_for_tenant(tenant: &TenantId) {
    isolate(|i| {
        for ((t, _), book) in i.grants.borrow_mut().iter_mut() {
            if t == tenant.as_str() {
                book.news();
            }
        }
    });
}

/// Held by the one request asking for a candidate's grant; dropping it (answered, or the
/// request cancelled) lets the waiters see the answer or ask for themselves.
pub struct Leader(Candidate);

impl Drop for Leader {
    fn drop(&mut self) {
        isolate(|i| i.acquiring.borrow_mut().remove(&self.0));
    }
}

/// `Some` if this request leads the candidate's acquire; `None` if another already does.
pub fn lead(tenant: &TenantId, provider: &str, model: &str) -> Option<Leader> {
    let candidate = (tenant.to_string(), provider.to_owned(), model.to_owned());
    // The Leader is made only after the borrow ends: dropping one takes the set again.
    let first = isolate(|i| i.acquiring.borrow_mut().insert(candidate.clone()));
    first.then(|| Leader(candidate))
}

pub fn in_flight(tenant: &TenantId, provider: &str, model: &str) -> bool {
    let candidate = (tenant.to_string(), provider.to_owned(), model.to_owned());
    isolate(|i| i.acquiring.borrow().contains(&candidate))
}
