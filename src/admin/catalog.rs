//! A tenant's catalog: providers, models, aliases and routing rules.

use super::store::{AliasWrite, DepthWrite, ModelWrite, ProviderDelete};
use super::{
    conflict, depth_changed, json, not_found, Admin, AdminStore, Answer, CommandError,
    ObjectControl,
};
use crate::admin::views::{
    AliasView, Deleted, List, ModelView, ProviderView, RuleView, WrittenRuleView,
};
use crate::config::admin_body::{parse_body, AliasBody, ModelBody, ProviderBody, RuleBody};
use crate::config::rule::MAX_RULES;
use crate::config::{
    Alias, AliasName, CatalogModel, ConfigError, ModelId, ProviderName, RouteName, Rule, Settings,
    TenantConfig, TenantId,
};
use crate::routing::dead_entries;

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn list_providers(&self, t: &TenantId) -> Answer {
        let providers = self.store.list_providers(t).await?;
        let data = providers.iter().map(ProviderView::from).collect();
        json(200, &List { data })
    }

    pub(super) async fn get_provider(&self, t: &TenantId, p: &ProviderName) -> Answer {
        let found = self.store.provider(t, p).await?;
        let provider = found.ok_or_else(|| not_found(&format!("The provider '{p}'")))?;
        // Best effort: an unreachable routing object leaves the keys without their headroom.
        let read = self.routing.stats(t, std::slice::from_ref(p)).await;
        let figures = read.ok().and_then(|mut s| s.remove(p.as_str()));
        let figures = figures.map(|s| s.headroom).unwrap_or_default();
        json(
            200,
            &ProviderView::from(&provider).with_headroom(&figures, self.cx.now),
        )
    }

    /// Keys are sealed before they reach storage; the view shows ids and last four only.
    pub(super) async fn put_provider(&self, t: &TenantId, p: ProviderName, body: &[u8]) -> Answer {
        let provider = parse_body::<ProviderBody>(body).and_then(|b| b.validate(p))?;
        provider
            .base_url
            .check_transport(self.cx.allow_http_upstreams)?;
        let sealed = provider.seal(t, self.cx.kek, || self.random::<12>().ok())?;
        self.store.put_provider(t, &sealed, self.cx.now).await?;
        json(200, &ProviderView::from(&sealed))
    }

    /// A provider that models still name stays (409); a deleted one's routing state goes too.
    pub(super) async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> Answer {
        match self.store.delete_provider(t, p).await? {
            ProviderDelete::NotFound => Err(not_found(&format!("The provider '{p}'"))),
            ProviderDelete::InUse(models) => {
                let ids: Vec<&str> = models.iter().map(ModelId::as_str).collect();
                Err(conflict(format!(
                    "Provider '{p}' is used by models: {}. Delete or move them first.",
                    ids.join(", ")
                )))
            }
            ProviderDelete::Deleted => {
                self.routing.wipe(t, p).await;
                json(
                    200,
                    &Deleted {
                        deleted: p.as_str(),
                    },
                )
            }
        }
    }

    pub(super) async fn list_models(&self, t: &TenantId) -> Answer {
        let models = self.store.list_models(t).await?;
        let exists = |id: &ModelId| models.iter().any(|m| m.id == *id);
        let data = models.iter().map(|m| ModelView::new(m, exists)).collect();
        json(200, &List { data })
    }

    pub(super) async fn get_model(&self, t: &TenantId, m: &ModelId) -> Answer {
        let found = self.store.model(t, m).await?;
        let model = found.ok_or_else(|| not_found(&format!("The model '{m}'")))?;
        let exists = self.link_exists(t, &model).await?;
        json(200, &ModelView::new(&model, |_| exists))
    }

    /// Whether the model's `fallback_model` names a model the tenant has (true without a link).
    async fn link_exists(&self, t: &TenantId, m: &CatalogModel) -> Result<bool, CommandError> {
        Ok(match &m.fallback_model {
            Some(link) => self.store.model(t, link).await?.is_some(),
            None => true,
        })
    }

    /// The provider must exist and the id must not be an alias, both judged by the store at
    /// the moment of the write. A `fallback_model` naming no model yet is written (a loop, or a
    /// model added later) and shown as missing.
    pub(super) async fn put_model(&self, t: &TenantId, id: ModelId, body: &[u8]) -> Answer {
        let model = parse_body::<ModelBody>(body).and_then(|b| b.validate(id))?;
        match self.store.put_model(t, &model, self.cx.now).await? {
            ModelWrite::Written => {
                let exists = self.link_exists(t, &model).await?;
                json(200, &ModelView::new(&model, |_| exists))
            }
            ModelWrite::NoSuchProvider => Err(ConfigError::invalid(
                "provider",
                format!("provider '{}' does not exist", model.provider),
            )
            .into()),
            ModelWrite::IsAnAlias => Err(conflict(format!("'{}' is already an alias.", model.id))),
        }
    }

    pub(super) async fn delete_model(&self, t: &TenantId, m: &ModelId) -> Answer {
        if !self.store.delete_model(t, m).await? {
            return Err(not_found(&format!("The model '{m}'")));
        }
        json(
            200,
            &Deleted {
                deleted: m.as_str(),
            },
        )
    }

    pub(super) async fn list_aliases(&self, t: &TenantId) -> Answer {
        let aliases = self.store.list_aliases(t).await?;
        let data = aliases.iter().map(|(n, a)| AliasView::new(n, a)).collect();
        json(200, &List { data })
    }

    pub(super) async fn get_alias(&self, t: &TenantId, a: &AliasName) -> Answer {
        let found = self.store.alias(t, a).await?;
        let alias = found.ok_or_else(|| not_found(&format!("The alias '{a}'")))?;
        json(200, &AliasView::new(a, &alias))
    }

    pub(super) async fn put_alias(&self, t: &TenantId, name: AliasName, body: &[u8]) -> Answer {
        crate::config::alias::refuse_reserved("name", name.as_str())?;
        let alias = parse_body::<AliasBody>(body).and_then(AliasBody::validate)?;
        match self.store.put_alias(t, &name, &alias, self.cx.now).await? {
            AliasWrite::Written => json(200, &AliasView::new(&name, &alias)),
            AliasWrite::IsAModel => {
                Err(conflict(format!("'{name}' is already a catalog model id.")))
            }
        }
    }

    pub(super) async fn delete_alias(&self, t: &TenantId, a: &AliasName) -> Answer {
        if !self.store.delete_alias(t, a).await? {
            return Err(not_found(&format!("The alias '{a}'")));
        }
        json(
            200,
            &Deleted {
                deleted: a.as_str(),
            },
        )
    }

    pub(super) async fn list_rules(&self, t: &TenantId) -> Answer {
        let rules = self.store.list_rules(t).await?;
        let data = rules.iter().map(RuleView::new).collect();
        json(200, &List { data })
    }

    /// A chain longer than the tenant's depth limit is refused; entries that would contribute no
    /// candidate today are written anyway and named in `warnings`. The store checks the depth
    /// and the rule count again in the write itself, so settings lowered meanwhile still hold.
    /// Upserted by name (a body without `name` is named after its `match`).
    pub(super) async fn put_rule(&self, t: &TenantId, body: &[u8]) -> Answer {
        let settings = self.settings(t).await?;
        let rule =
            parse_body::<RuleBody>(body).and_then(|b| b.validate(settings.max_fallback_depth))?;
        let snapshot = self.store.catalog(t).await?;
        let cfg = catalog_config(t, settings, snapshot.models, snapshot.aliases);
        let warnings = dead_entries(&cfg, rule.chain.entries(), |p| {
            snapshot.provider_names.contains(p)
        });
        self.write_rule(t, &rule).await?;
        json(200, &WrittenRuleView::new(&rule, warnings))
    }

    /// Stores `rule` as its PUT does: refused when the tenant already holds the most rules, or
    /// when the chain is longer than the tenant's depth (checked in the write, which a PUT's
    /// validation or a sort's unchanged length may have passed before a lower depth was written).
    pub(super) async fn write_rule(&self, t: &TenantId, rule: &Rule) -> Result<(), CommandError> {
        let default_depth = self.cx.defaults.settings.max_fallback_depth;
        let written = self.store.put_rule(t, rule, default_depth, self.cx.now);
        match written.await? {
            DepthWrite::Written => Ok(()),
            DepthWrite::TooManyRules => Err(conflict(format!(
                "The tenant has {MAX_RULES} routing rules, the most it may have; delete one first."
            ))),
            DepthWrite::DepthExceeded => {
                // Refused in the write: say why only while it is still true.
                let max = self.settings(t).await?.max_fallback_depth;
                let len = rule.chain.len();
                if len > max as usize {
                    return Err(ConfigError::ChainTooLong { len, max }.into());
                }
                Err(depth_changed())
            }
        }
    }

    /// By the rule's name (a rule written without one is named after its match).
    pub(super) async fn delete_rule(&self, t: &TenantId, name: &RouteName) -> Answer {
        if !self.store.delete_rule(t, name).await? {
            return Err(not_found(&format!("The routing rule '{name}'")));
        }
        json(
            200,
            &Deleted {
                deleted: name.as_str(),
            },
        )
    }

    /// The tenant's effective settings (404 when the tenant went away meanwhile).
    pub(super) async fn settings(
        &self,
        t: &TenantId,
    ) -> Result<crate::config::Settings, CommandError> {
        let found = self.store.tenant(t).await?;
        let record = found.ok_or_else(|| not_found(&format!("Tenant '{t}'")))?;
        Ok(self.cx.defaults.effective(&record.settings))
    }
}

/// The tenant's config as its catalog holds it: `models` and `aliases` under `settings`, as a
/// request would resolve them.
pub(super) fn catalog_config(
    t: &TenantId,
    settings: Settings,
    models: Vec<CatalogModel>,
    aliases: Vec<(AliasName, Alias)>,
) -> TenantConfig {
    let mut cfg = TenantConfig::empty(t.clone(), settings);
    cfg.models = models.into_iter().map(|m| (m.id.clone(), m)).collect();
    cfg.aliases = aliases.into_iter().collect();
    cfg
}
