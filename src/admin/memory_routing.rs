//! In-memory routing state and ledger spends for host tests: what the admin side wipes, resets
//! and reads through `RoutingControl`, recorded so a test can see it.

use super::explain::ExplainControl;
use super::store::{RoutingControl, Stored};
use super::CommandError;
use crate::config::SortedMap;
use crate::config::TenantConfig;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::routing::stats::routing_snapshot::RoutingSnapshot;
use crate::routing::stats::stats_book::StatsSnapshot;
use std::cell::RefCell;
use std::rc::Rc;

/// Routing state as the admin side sees it: which providers were wiped, and which breakers are
/// open (by provider, model) for resets to close.
#[derive(Debug, Default)]
pub struct MemoryRouting {
    pub wiped: RefCell<Vec<(TenantId, ProviderName)>>,
    pub open: RefCell<Vec<(TenantId, ProviderName, ModelId)>>,
    /// The ledger's spend per (tenant, key), as tests set it.
    pub spends: RefCell<SortedMap<(TenantId, String), crate::usage::spend::Spend>>,
    pub ledgers_wiped: RefCell<Vec<TenantId>>,
    /// Live stats snapshots by (tenant, provider), as tests set them.
    pub stats: RefCell<SortedMap<(TenantId, String), StatsSnapshot>>,
    /// `explain`'s reads, as tests set them: the request path's config and the objects' state.
    pub configs: RefCell<SortedMap<TenantId, Rc<TenantConfig>>>,
    pub snapshots: RefCell<SortedMap<(TenantId, String), RoutingSnapshot>>,
}

impl ExplainControl for MemoryRouting {
    async fn route_config(&self, t: &TenantId) -> Result<Option<Rc<TenantConfig>>, CommandError> {
        Ok(self.configs.borrow().get(t).cloned())
    }

    async fn snapshots(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, RoutingSnapshot>> {
        Ok(held_for(&self.snapshots.borrow(), t, providers))
    }
}

impl RoutingControl for MemoryRouting {
    async fn wipe(&self, t: &TenantId, provider: &ProviderName) {
        self.wiped.borrow_mut().push((t.clone(), provider.clone()));
        self.open
            .borrow_mut()
            .retain(|(ot, op, _)| !(ot == t && op == provider));
    }

    async fn reset(
        &self,
        t: &TenantId,
        provider: &ProviderName,
        model: Option<&ModelId>,
    ) -> Stored<Vec<ModelId>> {
        let mut open = self.open.borrow_mut();
        let hit = |(ot, op, m): &(TenantId, ProviderName, ModelId)| {
            ot == t && op == provider && model.is_none_or(|want| want == m)
        };
        let closed: Vec<ModelId> = open
            .iter()
            .filter(|e| hit(e))
            .map(|e| e.2.clone())
            .collect();
        open.retain(|e| !hit(e));
        Ok(closed)
    }

    async fn stats(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, StatsSnapshot>> {
        Ok(held_for(&self.stats.borrow(), t, providers))
    }
}

/// What the fake holds for these providers of `t`, keyed by provider name, as an object read
/// answers it (a provider with nothing held is absent).
fn held_for<T: Clone>(
    held: &SortedMap<(TenantId, String), T>,
    t: &TenantId,
    providers: &[ProviderName],
) -> SortedMap<String, T> {
    providers
        .iter()
        .filter_map(|p| {
            Some((
                p.to_string(),
                held.get(&(t.clone(), p.to_string()))?.clone(),
            ))
        })
        .collect()
}
