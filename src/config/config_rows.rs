//! One tenant's config assembled from its stored rows: providers opened with their keys, models,
//! aliases and rules with when each took its definition. A provider that cannot be called is left
//! out and the reason returned for the log, never as an error: one bad row never stops a tenant.

use super::sealed::Kek;
use super::{
    Alias, AliasName, CatalogModel, ConfigError, ProviderName, Rule, RuleSet, Settings,
    SettingsOverrides, StoredProvider, TenantConfig, TenantId,
};

/// A tenant's rows as stored, specs parsed, provider keys still sealed. Each model, alias and
/// rule carries when it took its current definition (epoch seconds).
pub struct ConfigRows {
    pub settings: SettingsOverrides,
    /// The degraded-mode state the scheduled pass stored, JSON; none while healthy.
    pub health_mode: Option<String>,
    pub providers: Vec<StoredProvider>,
    pub models: Vec<(CatalogModel, u64)>,
    pub aliases: Vec<(AliasName, Alias, u64)>,
    pub rules: Vec<(Rule, u64)>,
}

/// What opening a provider needs from the deployment.
pub struct Opening<'a> {
    pub kek: Option<&'a Kek>,
    /// `ALLOW_HTTP_UPSTREAMS`: a provider stored with a plain http `base_url`, or a service
    /// account whose `token_uri` is, is used only then.
    pub allow_http: bool,
    /// A Worker secret by name (a key given as `{"secret": "NAME"}`).
    pub secret: &'a dyn Fn(&str) -> Option<String>,
}

/// A provider left out of routing, or kept with some keys unusable, and why.
pub enum LeftOut {
    /// Stored before the https rule, or while the deployment allowed http: never called now.
    Transport {
        provider: ProviderName,
        reason: ConfigError,
    },
    /// Keys that could not be opened; the provider is left out when none could.
    Keys {
        provider: ProviderName,
        problems: Vec<String>,
    },
    /// The trace export could not be opened, and is off until the config is written again.
    Otel(String),
}

impl ConfigRows {
    /// The config of `tenant` under `settings` (the deployment's defaults with the tenant's
    /// overrides and health applied), and what was left out.
    pub fn assemble(
        self,
        tenant: &TenantId,
        opening: &Opening<'_>,
        settings: Settings,
    ) -> (TenantConfig, Vec<LeftOut>) {
        let mut left_out = Vec::new();
        let mut config = TenantConfig::empty(tenant.clone(), settings);
        if let Some(otel) = &self.settings.otel {
            match otel.open(tenant, opening.kek, opening.allow_http, opening.secret) {
                Ok(export) => config.otel = Some(export),
                Err(why) => left_out.push(LeftOut::Otel(why)),
            }
        }
        for stored in self.providers {
            if let Err(reason) = stored.base_url.check_transport(opening.allow_http) {
                let provider = stored.name;
                left_out.push(LeftOut::Transport { provider, reason });
                continue;
            }
            let (provider, problems) = stored.open(tenant, opening);
            if !problems.is_empty() {
                let provider = stored.name.clone();
                left_out.push(LeftOut::Keys { provider, problems });
            }
            // A provider with no usable key cannot serve: its models drop out of chains.
            if let Some(provider) = provider {
                config.providers.insert(provider.name.clone(), provider);
            }
        }
        for (m, at) in self.models {
            config.written_at.insert(m.id.to_string(), at);
            config.models.insert(m.id.clone(), m);
        }
        for (name, alias, at) in self.aliases {
            config.written_at.insert(name.to_string(), at);
            config.aliases.insert(name, alias);
        }
        // A rule's `auto:<rule>` name (reserved, so never a model or alias id) took its meaning
        // when the rule was written.
        let mut rules = RuleSet::new();
        for (rule, at) in self.rules {
            config.written_at.insert(format!("auto:{}", rule.name), at);
            rules.add(rule);
        }
        config.rules = rules;
        (config, left_out)
    }
}

#[cfg(test)]
#[path = "config_rows_tests.rs"]
mod tests;
