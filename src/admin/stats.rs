//! `GET /admin/v1/tenants/{t}/stats`: the tenant's live stats, one row per catalog
//! model whose provider exists, and the keys parked now (the console), read from the
//! routing objects (one call per provider).

use super::{json, Admin, AdminStore, Answer, ObjectControl};
use crate::admin::views::{ParkedKey, StatsRow, TenantStats};
use crate::config::SortedMap;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::routing::stats::isolate_stats::ProviderStats;
use crate::routing::stats::stats_book::StatsSnapshot;
use crate::routing::{ModelHealth, Observed};

/// What the ranking reads, from the routing objects' snapshots (a request reads its isolate's
/// copy): `explain` and the chain presets.
pub(super) struct SnapshotView {
    by_provider: SortedMap<String, ProviderStats>,
    now_ms: u64,
}

impl SnapshotView {
    /// The snapshots by provider name, as of `now_ms`.
    pub(super) fn of<'s>(
        snapshots: impl Iterator<Item = (&'s String, &'s StatsSnapshot)>,
        now_ms: u64,
    ) -> Self {
        let by_provider = snapshots
            .map(|(p, snap)| {
                let mut stats = ProviderStats::default();
                stats.install(snap.clone());
                (p.clone(), stats)
            })
            .collect();
        Self {
            by_provider,
            now_ms,
        }
    }
}

impl Observed for SnapshotView {
    fn health(&self, provider: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        self.by_provider
            .get(provider.as_str())?
            .health(model.as_str(), self.now_ms)
    }
}

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn stats(&self, t: &TenantId) -> Answer {
        let providers = self.store.provider_names(t).await?;
        let models = self.store.list_models(t).await?;
        let snapshots = self.routing.stats(t, &providers).await?;
        let rows = models
            .iter()
            .filter(|m| providers.contains(&m.provider))
            .map(|m| (m.id.as_str(), m.provider.as_str()));
        let data = StatsRow::rows(rows, &snapshots, self.cx.now);
        let parked_keys = ParkedKey::all(&snapshots, self.cx.now);
        json(200, &TenantStats { data, parked_keys })
    }
}
