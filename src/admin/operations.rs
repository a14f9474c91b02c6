//! Settings, breaker events and manual breaker resets.

use super::store::{AlertSecretWrite, DepthWrite};
use super::{
    depth_changed, json, not_found, query_param, Admin, AdminStore, Answer, CommandError,
    ObjectControl,
};
use crate::admin::views::{ClosedBreaker, EventView, List, ResetView};
use crate::api::{ApiError, ErrorKind};
use crate::config::admin_body::{parse_body, parse_optional_body, validate_settings, BreakerReset};
use crate::config::{ConfigError, RouteName, Rule, SettingsOverrides, TenantId};

/// Events listed per request at most; a caller pages on with `since`.
const EVENTS_PAGE: u32 = 1000;

/// The rules a new depth limit would cut short, as "'name' (n entries)".
pub fn rules_longer_than(rules: &[Rule], max_depth: u32) -> Vec<String> {
    rules
        .iter()
        .filter(|r| r.chain.len() > max_depth as usize)
        .map(|r| format!("'{}' ({} entries)", r.name, r.chain.len()))
        .collect()
}

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn get_settings(&self, t: &TenantId) -> Answer {
        json(200, &self.settings(t).await?)
    }

    /// A depth limit below an existing rule's chain is refused: the rule would stop loading. The
    /// store checks it again in the write itself, so a rule written meanwhile is seen.
    pub(super) async fn put_settings(&self, t: &TenantId, body: &[u8]) -> Answer {
        let mut overrides = parse_body::<SettingsOverrides>(body).and_then(validate_settings)?;
        if let Some(a) = &overrides.alerts {
            a.webhook_url.check_reach(self.cx.allow_http_upstreams)?;
        }
        if let Some(name) = &overrides.fallback_model {
            self.check_fallback_model(t, name).await?;
        }
        if let Some(otel) = overrides.otel.take() {
            otel.validate(self.cx.allow_http_upstreams)?;
            let nonces = (0..otel.literals())
                .map(|_| self.random::<12>())
                .collect::<Result<Vec<_>, _>>()?;
            overrides.otel = Some(otel.sealed(self.cx.kek, t, nonces)?);
        }
        let secret = self.alert_secret(t, &overrides).await?;
        let secret_write = match (&secret, &overrides.alerts) {
            (Some((_, sealed)), _) => AlertSecretWrite::Set(sealed),
            (None, Some(_)) => AlertSecretWrite::Keep,
            (None, None) => AlertSecretWrite::Clear,
        };
        let mut effective = self.cx.defaults.effective(&overrides);
        let depth = effective.max_fallback_depth;
        let written = self
            .store
            .put_settings(t, &overrides, depth, secret_write)
            .await?;
        if written == DepthWrite::DepthExceeded {
            // Refused in the write: name the rules only while they are still too long.
            if !self.store.tenant_exists(t).await? {
                return Err(not_found(&format!("Tenant '{t}'")));
            }
            let rules = self.store.list_rules(t).await?;
            let too_long = rules_longer_than(&rules, depth);
            if too_long.is_empty() {
                return Err(depth_changed());
            }
            return Err(ConfigError::invalid(
                "max_fallback_depth",
                format!(
                    "{depth} would be below the chain length of routing rules {}",
                    too_long.join(", ")
                ),
            )
            .into());
        }
        if let (Some((plain, _)), Some(a)) = (secret, effective.alerts.as_mut()) {
            a.secret = Some(plain);
        }
        json(200, &effective)
    }

    /// The tenant fallback must name a model or an alias the tenant has when it is written; one
    /// deleted later is skipped by routing like a dead link.
    async fn check_fallback_model(
        &self,
        t: &TenantId,
        name: &RouteName,
    ) -> Result<(), CommandError> {
        let catalog = self.store.catalog(t).await?;
        let known = catalog
            .models
            .iter()
            .any(|m| m.id.as_str() == name.as_str())
            || catalog
                .aliases
                .iter()
                .any(|(a, _)| a.as_str() == name.as_str());
        if known {
            return Ok(());
        }
        Err(ConfigError::invalid(
            "fallback_model",
            format!("'{name}' is neither a model nor an alias of the tenant"),
        )
        .into())
    }

    /// A new signing secret when this PUT sets a `webhook_url` the tenant did not have (the
    /// secret rotates with the URL): `(shown once, sealed for storage)`. The same URL again keeps
    /// the secret it has.
    async fn alert_secret(
        &self,
        t: &TenantId,
        o: &SettingsOverrides,
    ) -> Result<Option<(String, String)>, CommandError> {
        let Some(alerts) = &o.alerts else {
            return Ok(None);
        };
        let before = self.store.tenant(t).await?;
        let same_url = before
            .as_ref()
            .and_then(|r| r.settings.alerts.as_ref())
            .is_some_and(|a| a.webhook_url == alerts.webhook_url);
        if same_url {
            return Ok(None);
        }
        let kek = self.cx.kek.ok_or_else(|| {
            ConfigError::invalid(
                "alerts.webhook_url",
                "needs the deployment secret CG_KEK to seal its signing secret",
            )
        })?;
        let plain = format!("whsec_{}", hex::encode(self.random::<32>()?));
        let sealed = kek.seal_alert_secret(t, &plain, self.random::<12>()?)?;
        Ok(Some((plain, sealed)))
    }

    pub(super) async fn list_events(&self, t: &TenantId, query: Option<&str>) -> Answer {
        let since = match query_param(query, "since") {
            None => 0,
            Some(v) => v.parse::<u64>().map_err(|_| {
                ApiError::new(
                    ErrorKind::InvalidRequest,
                    "'since' must be epoch milliseconds.",
                )
                .with_param("since")
            })?,
        };
        let rows = self.store.events(t, since, EVENTS_PAGE).await?;
        let data = rows
            .iter()
            .map(|r| {
                let event: EventView = serde_json::from_str(&r.body)
                    .map_err(|e| super::StoreError::new("stored event", e))?;
                Ok(EventView {
                    seq: r.seq,
                    ..event
                })
            })
            .collect::<Result<Vec<EventView>, CommandError>>()?;
        json(200, &List { data })
    }

    /// Closes breakers by hand: one provider's (optionally one model's), or every provider's.
    pub(super) async fn reset_breakers(&self, t: &TenantId, body: &[u8]) -> Answer {
        let target: BreakerReset = parse_optional_body(body)?;
        let names = self.store.provider_names(t).await?;
        let providers = match &target.provider {
            Some(p) if !names.contains(p) => return Err(not_found(&format!("The provider '{p}'"))),
            Some(p) => vec![p.clone()],
            None => names,
        };
        let mut closed = Vec::new();
        for p in providers {
            let models = self.routing.reset(t, &p, target.model.as_ref()).await?;
            closed.extend(models.into_iter().map(|m| ClosedBreaker {
                provider: p.to_string(),
                model: m.to_string(),
            }));
        }
        json(200, &ResetView { closed })
    }
}
