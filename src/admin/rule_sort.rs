//! `POST /admin/v1/tenants/{t}/routing-rules/{name}/sort`: rewrites the order of a rule's chain
//! positions by a preset (`routing::presets`), and only the order; stored as a rule's PUT is.
//! The positions resolve as a request would now: aliases at the live stats' cached shares and
//! latencies, read from the routing objects as the stats route reads them.

use super::catalog::catalog_config;
use super::stats::SnapshotView;
use super::{json, not_found, Admin, AdminStore, Answer, ObjectControl};
use crate::admin::views::RuleView;
use crate::config::admin_body::parse_body;
use crate::config::chain_preset::{ChainPreset, SortBody};
use crate::config::{RouteName, Rule, TenantId};
use crate::routing::presets::sorted_chain;
use crate::routing::resolve::resolve_aliases_with;
use crate::routing::RouteInput;

/// A draw that never explores (below an exploration share of 1): a ranked alias sorts as the
/// model it ranks first.
const NO_EXPLORATION: u64 = u64::MAX;

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn sort_rule(&self, t: &TenantId, name: &RouteName, body: &[u8]) -> Answer {
        let SortBody { preset } = parse_body::<SortBody>(body)?;
        let rules = self.store.list_rules(t).await?;
        let rule = rules
            .into_iter()
            .find(|r| r.name == *name)
            .ok_or_else(|| not_found(&format!("The routing rule '{name}'")))?;
        let snapshot = self.store.catalog(t).await?;
        let settings = self.settings(t).await?;
        let cfg = catalog_config(t, settings, snapshot.models, snapshot.aliases);
        // `fastest` needs the stats; the other presets read them for aliases only, at best effort.
        let stats = self.routing.stats(t, &snapshot.provider_names).await;
        let stats = match preset {
            ChainPreset::Fastest => stats?,
            ChainPreset::Smartest | ChainPreset::Budget => stats.unwrap_or_default(),
        };
        let view = SnapshotView::of(stats.iter(), self.cx.now);
        resolve_aliases_with(&cfg, &view);
        let input = RouteInput {
            observed: &view,
            now_ms: self.cx.now,
            draw: NO_EXPLORATION,
            ..RouteInput::unmeasured()
        };
        let sorted = Rule {
            chain: sorted_chain(&cfg, &rule.chain, preset, &input),
            ..rule
        };
        self.write_rule(t, &sorted).await?;
        json(200, &RuleView::new(&sorted))
    }
}
