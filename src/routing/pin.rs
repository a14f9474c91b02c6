//! The pins: `X-CogniGate-Pin-Provider: <provider>` keeps only that provider's candidates, and
//! `X-CogniGate-Pin-Platform: <platform>` only those of providers on that platform, wherever they
//! sit in the chain; both together keep the intersection.
//!
//! A pinned request resolves every position against the pinned part of the catalog, so each
//! position still contributes one candidate (the spec), now of an admitted provider:
//! - a model entry of another provider is dropped (an id with no exact entry on an admitted
//!   provider may still reach a dated sibling there, `routing::versions`);
//! - an alias resolves among the admitted models as if the catalog held only them (its own pin,
//!   when elsewhere, falls through to the constraints like a retired pin);
//! - a spread draws among the members that resolve on an admitted provider;
//! - an `auto` strategy ranks the admitted models only.
//!
//! What the caller means by the pin is "serve this from there", so a position with an admitted
//! model serves it rather than being dropped because its unpinned choice lay elsewhere. No
//! candidate left is `no_candidates` naming the pin.

use super::chain::ChainError;
use crate::config::{CatalogModel, Platform, ProviderName, TenantConfig};
use std::fmt;

/// The request headers, as the OpenAPI document and error `param` name them.
pub const HEADER: &str = "X-CogniGate-Pin-Provider";
pub const PLATFORM_HEADER: &str = "X-CogniGate-Pin-Platform";

/// A request's pins: the providers they admit, and how to name them in a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    admitted: Vec<ProviderName>,
    provider: Option<ProviderName>,
    platform: Option<Platform>,
    /// The data restrictions that narrowed it (`routing::restriction`), as messages name them.
    restricted_by: Option<String>,
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.provider, self.platform, &self.restricted_by) {
            (Some(p), None, _) => write!(f, "{HEADER} '{p}'")?,
            (None, Some(p), _) => write!(f, "{PLATFORM_HEADER} '{}'", p.as_str())?,
            (Some(p), Some(pl), _) => {
                write!(f, "{PLATFORM_HEADER} '{}' with {HEADER} '{p}'", pl.as_str())?
            }
            (None, None, Some(r)) => return f.write_str(r),
            (None, None, None) => return f.write_str("the pin"),
        }
        match &self.restricted_by {
            Some(r) => write!(f, " within {r}"),
            None => Ok(()),
        }
    }
}

/// The pins a request asks for: `None` without either header (or with blank ones). Provider
/// names and platforms are read case-insensitively. A name that is not one of the tenant's
/// providers is `UnknownProvider`; a value that is no platform, `UnknownPlatform`.
pub fn parse(
    cfg: &TenantConfig,
    provider: Option<&str>,
    platform: Option<&str>,
) -> Result<Option<Pin>, ChainError> {
    let given = |h: Option<&str>| {
        h.map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let (provider, platform) = (given(provider), given(platform));
    let platform = match platform {
        Some(raw) => Some(Platform::parse(&raw).ok_or(ChainError::UnknownPlatform(raw))?),
        None => None,
    };
    let provider = match provider {
        Some(raw) => Some(
            cfg.providers
                .get_key_value(raw.to_ascii_lowercase().as_str())
                .map(|(name, _)| name.clone())
                .ok_or(ChainError::UnknownProvider(raw))?,
        ),
        None => None,
    };
    if provider.is_none() && platform.is_none() {
        return Ok(None);
    }
    let admitted = cfg
        .providers
        .iter()
        .filter(|(name, p)| {
            provider.as_ref().is_none_or(|pin| pin == *name)
                && platform.is_none_or(|pin| p.platform() == pin)
        })
        .map(|(name, _)| name.clone())
        .collect();
    Ok(Some(Pin {
        admitted,
        provider,
        platform,
        restricted_by: None,
    }))
}

/// `pin` (or no pin) narrowed to the providers `inside` admits, named `by` in messages. A pin
/// that admits providers, none of them inside, is `Restricted`: the caller asked for a place
/// the request's data may not go.
pub(super) fn within(
    cfg: &TenantConfig,
    pin: Option<&Pin>,
    inside: impl Fn(&ProviderName, &crate::config::Provider) -> bool,
    by: String,
) -> Result<Pin, ChainError> {
    let admitted: Vec<ProviderName> = cfg
        .providers
        .iter()
        .filter(|(name, p)| inside(name, p) && pin.is_none_or(|pin| pin.admitted.contains(name)))
        .map(|(name, _)| name.clone())
        .collect();
    if let Some(pin) = pin.filter(|p| !p.admitted.is_empty() && admitted.is_empty()) {
        return Err(ChainError::Restricted {
            pin: pin.to_string(),
            restrictions: by,
            param: if pin.provider.is_some() {
                HEADER
            } else {
                PLATFORM_HEADER
            },
        });
    }
    Ok(Pin {
        admitted,
        provider: pin.and_then(|p| p.provider.clone()),
        platform: pin.and_then(|p| p.platform),
        restricted_by: Some(by),
    })
}

/// Whether a request pinned to `pin` (if any) may use `model`.
pub fn admits(pin: Option<&Pin>, model: &CatalogModel) -> bool {
    pin.is_none_or(|p| p.admitted.contains(&model.provider))
}

/// Why a model named by a position is not a candidate under the pin.
pub fn elsewhere(model: &CatalogModel, pin: &Pin) -> String {
    let (id, on) = (&model.id, &model.provider);
    match (&pin.provider, pin.platform) {
        (Some(p), None) => format!("model '{id}' is on provider '{on}', not the pinned '{p}'"),
        (None, Some(pl)) => format!(
            "model '{id}' is on provider '{on}', not on the pinned platform '{}'",
            pl.as_str()
        ),
        (Some(p), Some(pl)) => format!(
            "model '{id}' is on provider '{on}', not the pinned '{p}' on platform '{}'",
            pl.as_str()
        ),
        (None, None) => match &pin.restricted_by {
            Some(r) => format!("model '{id}' is on provider '{on}', outside {r}"),
            None => format!("model '{id}' is on provider '{on}'"),
        },
    }
}

/// The reasons of a `no_candidates` under a pin: the pin first, then each position's reason.
pub fn no_candidates(pin: &Pin, reasons: &[String]) -> String {
    let mut why = format!("{pin} leaves no candidate");
    if !reasons.is_empty() {
        why.push_str(&format!(" ({})", reasons.join("; ")));
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::test_config::{add_model, cfg};

    #[test]
    fn no_header_or_a_blank_one_is_no_pin() {
        let c = cfg();
        assert_eq!(parse(&c, None, None), Ok(None));
        assert_eq!(parse(&c, Some("  "), Some(" ")), Ok(None));
    }

    #[test]
    fn a_provider_the_tenant_has_is_the_pin_in_any_case() {
        let c = cfg();
        let pin = parse(&c, Some(" Together "), None).unwrap().unwrap();
        assert_eq!(pin.to_string(), "X-CogniGate-Pin-Provider 'together'");
    }

    #[test]
    fn a_provider_the_tenant_does_not_have_is_unknown_provider() {
        let c = cfg();
        for name in ["anthropic", "not a name", "open ai"] {
            assert_eq!(
                parse(&c, Some(name), None),
                Err(ChainError::UnknownProvider(name.to_owned()))
            );
        }
    }

    #[test]
    fn only_the_pinned_providers_models_are_admitted() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0);
        let a = &c.models["a"];
        let openai = parse(&c, Some("openai"), None).unwrap();
        let together = parse(&c, Some("together"), None).unwrap();
        assert!(admits(None, a) && admits(openai.as_ref(), a));
        assert!(!admits(together.as_ref(), a));
    }

    #[test]
    fn a_value_that_is_no_platform_is_unknown_platform() {
        let c = cfg();
        assert_eq!(
            parse(&c, None, Some("gcp")),
            Err(ChainError::UnknownPlatform("gcp".into()))
        );
    }

    #[test]
    fn a_platform_pin_admits_the_providers_on_that_platform_and_both_pins_their_intersection() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0);
        let a = &c.models["a"];
        // The test tenant's providers are on hosts other than the vendors': `custom`.
        let custom = parse(&c, None, Some("CUSTOM")).unwrap();
        let direct = parse(&c, None, Some("direct")).unwrap();
        assert!(admits(custom.as_ref(), a) && !admits(direct.as_ref(), a));
        let both = parse(&c, Some("openai"), Some("direct")).unwrap();
        assert!(!admits(both.as_ref(), a));
        assert!(no_candidates(both.as_ref().unwrap(), &[])
            .starts_with("X-CogniGate-Pin-Platform 'direct' with X-CogniGate-Pin-Provider 'openai' leaves no candidate"));
        assert!(no_candidates(direct.as_ref().unwrap(), &[])
            .starts_with("X-CogniGate-Pin-Platform 'direct' leaves no candidate"));
    }
}
