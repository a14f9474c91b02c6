//! `GET /admin/v1/tenants/{t}/stats`: the tenant's live stats, one row per catalog
//! model whose provider exists, and the keys parked now (the console), read from the
//! routing objects (one call per provider).

use super::{json, Admin, AdminStore, Answer, ObjectControl};
use crate::admin::views::{ParkedKey, StatsRow, TenantStats};
use crate::config::TenantId;

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
