//! The catalog store on D1: providers, models, aliases and routing rules.

use super::{changes, js, num, parse_stored, stored_rule, tid, to_stored, Db, RuleRow};
use crate::admin::store::{
    AliasWrite, CatalogSnapshot, CatalogStore, DepthWrite, ModelWrite, ProviderDelete, StoreError,
    Stored,
};
use crate::admin::stored_rule::{RuleColumns, RULE_ROWS_SQL};
use crate::config::rule::MAX_RULES;
use crate::config::{
    Alias, AliasName, CatalogModel, ModelId, ProviderName, RouteName, Rule, StoredProvider,
    TenantId,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use worker::wasm_bindgen::JsValue;
use worker::D1PreparedStatement;

#[derive(Deserialize)]
struct Spec {
    spec: String,
}

#[derive(Deserialize)]
struct NamedSpec {
    name: String,
    spec: String,
}

const ALIAS_UPSERT: &str = "INSERT INTO aliases (tenant_id, name, spec, updated_at) \
     SELECT ?1, ?2, ?3, ?4 \
     WHERE NOT EXISTS (SELECT 1 FROM models WHERE tenant_id = ?1 AND id = ?2) \
     ON CONFLICT (tenant_id, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at";

impl Db {
    async fn specs<T: DeserializeOwned>(&self, sql: &'static str, t: &TenantId) -> Stored<Vec<T>> {
        let found: Vec<Spec> = self.all(sql, &[js(t.as_str())]).await?;
        found.iter().map(|r| parse_stored(&r.spec)).collect()
    }

    async fn spec<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        t: &TenantId,
        key: &str,
    ) -> Stored<Option<T>> {
        let found: Vec<Spec> = self.all(sql, &[js(t.as_str()), js(key)]).await?;
        found.first().map(|r| parse_stored(&r.spec)).transpose()
    }

    pub(super) async fn delete(&self, sql: &'static str, t: &TenantId, key: &str) -> Stored<bool> {
        Ok(changes(&self.run(sql, &[js(t.as_str()), js(key)]).await?) > 0)
    }

    pub(super) fn alias_upsert(
        &self,
        t: &TenantId,
        name: &AliasName,
        a: &Alias,
        now: u64,
    ) -> Stored<D1PreparedStatement> {
        let spec = to_stored(a)?;
        self.stmt(
            ALIAS_UPSERT,
            &[js(t.as_str()), js(name.as_str()), js(&spec), num(now)],
        )
    }

    async fn named_specs<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        t: &TenantId,
    ) -> Stored<Vec<(AliasName, T)>> {
        let found: Vec<NamedSpec> = self.all(sql, &[js(t.as_str())]).await?;
        found
            .iter()
            .map(|r| {
                let name =
                    AliasName::parse(&r.name).map_err(|e| StoreError::new("alias name", e))?;
                Ok((name, parse_stored(&r.spec)?))
            })
            .collect()
    }
}

impl CatalogStore for Db {
    async fn provider_names(&self, t: &TenantId) -> Stored<Vec<ProviderName>> {
        #[derive(Deserialize)]
        struct Row {
            name: ProviderName,
        }
        let found: Vec<Row> = self
            .all("SELECT name FROM providers WHERE tenant_id = ?1", &tid(t))
            .await?;
        Ok(found.into_iter().map(|r| r.name).collect())
    }

    async fn list_providers(&self, t: &TenantId) -> Stored<Vec<StoredProvider>> {
        self.specs(
            "SELECT spec FROM providers WHERE tenant_id = ?1 ORDER BY rowid",
            t,
        )
        .await
    }

    async fn provider(&self, t: &TenantId, p: &ProviderName) -> Stored<Option<StoredProvider>> {
        self.spec(
            "SELECT spec FROM providers WHERE tenant_id = ?1 AND name = ?2",
            t,
            p.as_str(),
        )
        .await
    }

    async fn put_provider(&self, t: &TenantId, p: &StoredProvider, now: u64) -> Stored<()> {
        let spec = to_stored(p)?;
        self.run(
            "INSERT INTO providers (tenant_id, name, spec, updated_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (tenant_id, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at",
            &[js(t.as_str()), js(p.name.as_str()), js(&spec), num(now)],
        )
        .await
        .map(|_| ())
    }

    /// One statement deletes only an unused provider; when it deletes nothing, the models
    /// table says whether the provider was in use or absent.
    async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> Stored<ProviderDelete> {
        let deleted = self
            .delete(
                "DELETE FROM providers WHERE tenant_id = ?1 AND name = ?2 \
                 AND NOT EXISTS (SELECT 1 FROM models WHERE tenant_id = ?1 AND provider = ?2)",
                t,
                p.as_str(),
            )
            .await?;
        if deleted {
            return Ok(ProviderDelete::Deleted);
        }
        #[derive(Deserialize)]
        struct Row {
            id: ModelId,
        }
        let users: Vec<Row> = self
            .all(
                "SELECT id FROM models WHERE tenant_id = ?1 AND provider = ?2 ORDER BY id",
                &[js(t.as_str()), js(p.as_str())],
            )
            .await?;
        Ok(if users.is_empty() {
            ProviderDelete::NotFound
        } else {
            ProviderDelete::InUse(users.into_iter().map(|r| r.id).collect())
        })
    }

    async fn list_models(&self, t: &TenantId) -> Stored<Vec<CatalogModel>> {
        self.specs(
            "SELECT spec FROM models WHERE tenant_id = ?1 ORDER BY rowid",
            t,
        )
        .await
    }

    async fn model(&self, t: &TenantId, id: &ModelId) -> Stored<Option<CatalogModel>> {
        self.spec(
            "SELECT spec FROM models WHERE tenant_id = ?1 AND id = ?2",
            t,
            id.as_str(),
        )
        .await
    }

    /// One statement: the provider must exist and the id must not be an alias.
    async fn put_model(&self, t: &TenantId, m: &CatalogModel, now: u64) -> Stored<ModelWrite> {
        let spec = to_stored(m)?;
        let r = self
            .run(
                "INSERT INTO models (tenant_id, id, provider, spec, updated_at) \
                 SELECT ?1, ?2, ?3, ?4, ?5 \
                 WHERE EXISTS (SELECT 1 FROM providers WHERE tenant_id = ?1 AND name = ?3) \
                   AND NOT EXISTS (SELECT 1 FROM aliases WHERE tenant_id = ?1 AND name = ?2) \
                 ON CONFLICT (tenant_id, id) DO UPDATE SET provider = excluded.provider, spec = excluded.spec, updated_at = excluded.updated_at",
                &[js(t.as_str()), js(m.id.as_str()), js(m.provider.as_str()), js(&spec), num(now)],
            )
            .await?;
        if changes(&r) > 0 {
            return Ok(ModelWrite::Written);
        }
        Ok(if self.provider_names(t).await?.contains(&m.provider) {
            ModelWrite::IsAnAlias
        } else {
            ModelWrite::NoSuchProvider
        })
    }

    async fn delete_model(&self, t: &TenantId, id: &ModelId) -> Stored<bool> {
        self.delete(
            "DELETE FROM models WHERE tenant_id = ?1 AND id = ?2",
            t,
            id.as_str(),
        )
        .await
    }

    async fn list_aliases(&self, t: &TenantId) -> Stored<Vec<(AliasName, Alias)>> {
        self.named_specs(
            "SELECT name, spec FROM aliases WHERE tenant_id = ?1 ORDER BY name",
            t,
        )
        .await
    }

    async fn alias(&self, t: &TenantId, name: &AliasName) -> Stored<Option<Alias>> {
        self.spec(
            "SELECT spec FROM aliases WHERE tenant_id = ?1 AND name = ?2",
            t,
            name.as_str(),
        )
        .await
    }

    async fn put_alias(
        &self,
        t: &TenantId,
        name: &AliasName,
        a: &Alias,
        now: u64,
    ) -> Stored<AliasWrite> {
        let stmt = self.alias_upsert(t, name, a, now)?;
        let r = stmt
            .run()
            .await
            .map_err(|e| StoreError::new("write alias", e))?;
        Ok(if changes(&r) > 0 {
            AliasWrite::Written
        } else {
            AliasWrite::IsAModel
        })
    }

    async fn delete_alias(&self, t: &TenantId, name: &AliasName) -> Stored<bool> {
        self.delete(
            "DELETE FROM aliases WHERE tenant_id = ?1 AND name = ?2",
            t,
            name.as_str(),
        )
        .await
    }

    async fn list_rules(&self, t: &TenantId) -> Stored<Vec<Rule>> {
        let found: Vec<RuleRow> = self.all(RULE_ROWS_SQL, &tid(t)).await?;
        found.iter().map(stored_rule).collect()
    }

    /// One statement, upserting by name: written only if the chain fits the depth the tenant's
    /// row allows at that moment (its override, else `default_depth`) and, unless the name is
    /// already a rule, the tenant has fewer than `MAX_RULES`; no tenant row, no write. When it
    /// writes nothing, the rule count says which limit refused.
    async fn put_rule(
        &self,
        t: &TenantId,
        rule: &Rule,
        default_depth: u32,
        now: u64,
    ) -> Stored<DepthWrite> {
        let c = RuleColumns::of(rule)?;
        let opt = |v: Option<u32>| v.map_or(JsValue::NULL, |s| num(u64::from(s)));
        let text = |v: &Option<String>| v.as_deref().map_or(JsValue::NULL, js);
        let r = self
            .run(
                "INSERT INTO routing_rules (tenant_id, name, match_name, priority, when_json, on_refusal, \
                 cache_affinity_s, chain, updated_at, cache_ttl_s, prompt_cache, prefer_platforms) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?12, ?13, ?14 \
                 WHERE json_array_length(?8) <= (SELECT COALESCE(json_extract(settings, '$.max_fallback_depth'), ?10) \
                   FROM tenants WHERE id = ?1) \
                 AND (SELECT COUNT(*) FROM routing_rules WHERE tenant_id = ?1 AND name != ?2) < ?11 \
                 ON CONFLICT (tenant_id, name) DO UPDATE SET match_name = excluded.match_name, \
                 priority = excluded.priority, when_json = excluded.when_json, on_refusal = excluded.on_refusal, \
                 cache_affinity_s = excluded.cache_affinity_s, chain = excluded.chain, updated_at = excluded.updated_at, \
                 cache_ttl_s = excluded.cache_ttl_s, prompt_cache = excluded.prompt_cache, \
                 prefer_platforms = excluded.prefer_platforms",
                &[
                    js(t.as_str()),
                    js(rule.name.as_str()),
                    js(rule.matches.as_str()),
                    JsValue::from_f64(f64::from(rule.priority)),
                    text(&c.when_json),
                    js(c.on_refusal),
                    opt(rule.chain.cache_affinity_s()),
                    js(&c.chain),
                    num(now),
                    num(u64::from(default_depth)),
                    num(MAX_RULES as u64),
                    opt(rule.chain.cache_ttl_s()),
                    text(&c.prompt_cache),
                    text(&c.prefer_platforms),
                ],
            )
            .await?;
        if changes(&r) > 0 {
            return Ok(DepthWrite::Written);
        }
        #[derive(Deserialize)]
        struct Count {
            n: f64,
        }
        let others: Vec<Count> = self
            .all(
                "SELECT COUNT(*) AS n FROM routing_rules WHERE tenant_id = ?1 AND name != ?2",
                &[js(t.as_str()), js(rule.name.as_str())],
            )
            .await?;
        let full = others.first().is_some_and(|c| c.n >= MAX_RULES as f64);
        Ok(if full {
            DepthWrite::TooManyRules
        } else {
            DepthWrite::DepthExceeded
        })
    }

    async fn delete_rule(&self, t: &TenantId, name: &RouteName) -> Stored<bool> {
        self.delete(
            "DELETE FROM routing_rules WHERE tenant_id = ?1 AND name = ?2",
            t,
            name.as_str(),
        )
        .await
    }

    async fn catalog(&self, t: &TenantId) -> Stored<CatalogSnapshot> {
        Ok(CatalogSnapshot {
            provider_names: self.provider_names(t).await?,
            models: self.list_models(t).await?,
            aliases: self.list_aliases(t).await?,
        })
    }
}
