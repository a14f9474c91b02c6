//! The provider pin: `X-CogniGate-Pin-Provider: <provider>` keeps only
//! that provider's candidates, wherever they sit in the chain.
//!
//! A pinned request resolves every position against the pinned provider's part of the catalog,
//! so each position still contributes one candidate (the spec), now of that provider:
//! - a model entry of another provider is dropped (an id with no exact entry on the provider may
//!   still reach a dated sibling there, `routing::versions`);
//! - an alias resolves among that provider's models as if the catalog held only them (its own
//!   pin, when on another provider, falls through to the constraints like a retired pin);
//! - a spread draws among the members that resolve on that provider;
//! - an `auto` strategy ranks that provider's models only.
//!
//! What the caller means by the pin is "serve this from that provider", so a position with a
//! model of the provider serves it rather than being dropped because its unpinned choice lay
//! elsewhere. No candidate left is `no_candidates` naming the pin.

use super::chain::ChainError;
use crate::config::{CatalogModel, ProviderName, TenantConfig};

/// The request header, as the OpenAPI document and error `param` name it.
pub const HEADER: &str = "X-CogniGate-Pin-Provider";

/// The pin a request asks for: `None` without the header (or with a blank one). Provider names
/// are lowercase, so the value is read case-insensitively. A name that is not one of the
/// tenant's providers is `UnknownProvider`.
pub fn parse<'c>(
    cfg: &'c TenantConfig,
    header: Option<&str>,
) -> Result<Option<&'c ProviderName>, ChainError> {
    let Some(raw) = header.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    cfg.providers
        .get_key_value(raw.to_ascii_lowercase().as_str())
        .map(|(name, _)| Some(name))
        .ok_or_else(|| ChainError::UnknownProvider(raw.to_owned()))
}

/// Whether a request pinned to `pin` (if any) may use `model`.
pub fn admits(pin: Option<&ProviderName>, model: &CatalogModel) -> bool {
    pin.is_none_or(|p| model.provider == *p)
}

/// Why a model named by a position is not a candidate under the pin.
pub fn elsewhere(model: &CatalogModel, pin: &ProviderName) -> String {
    format!(
        "model '{}' is on provider '{}', not the pinned '{pin}'",
        model.id, model.provider
    )
}

/// The reasons of a `no_candidates` under a pin: the pin first, then each position's reason.
pub fn no_candidates(pin: &ProviderName, reasons: &[String]) -> String {
    let mut why = format!("{HEADER} '{pin}' leaves no candidate");
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
        assert_eq!(parse(&c, None), Ok(None));
        assert_eq!(parse(&c, Some("  ")), Ok(None));
    }

    #[test]
    fn a_provider_the_tenant_has_is_the_pin_in_any_case() {
        let c = cfg();
        let pin = parse(&c, Some(" Together ")).unwrap().map(|p| p.as_str());
        assert_eq!(pin, Some("together"));
    }

    #[test]
    fn a_provider_the_tenant_does_not_have_is_unknown_provider() {
        let c = cfg();
        for name in ["anthropic", "not a name", "open ai"] {
            assert_eq!(
                parse(&c, Some(name)),
                Err(ChainError::UnknownProvider(name.to_owned()))
            );
        }
    }

    #[test]
    fn only_the_pinned_providers_models_are_admitted() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0);
        let a = &c.models["a"];
        let openai = ProviderName::parse("openai").unwrap();
        let together = ProviderName::parse("together").unwrap();
        assert!(admits(None, a) && admits(Some(&openai), a));
        assert!(!admits(Some(&together), a));
    }
}
