//! Restrictions through `build_chain`: only providers inside every matching restriction serve.

use super::*;
use crate::config::admin_body::{parse_body, ProviderBody};
use crate::config::restriction::Restriction;
use crate::config::{Defaults, ProviderName, SortedMap, TenantId};
use crate::routing::facts::{Agent, Endpoint, Task};
use crate::routing::test_config::{add_alias, add_model, add_rule_json};
use crate::routing::{build_chain, pin, Route, RouteInput};

/// Providers `anthropic` (direct), `claude-bedrock` (bedrock) and `claude-vertex` (vertex), a
/// model on each, and the restrictions given.
fn tenant(restrictions: &[&str]) -> TenantConfig {
    let mut c = TenantConfig::empty(TenantId::parse("t").unwrap(), Defaults::default().settings);
    for (name, platform) in [
        ("anthropic", "direct"),
        ("claude-bedrock", "bedrock"),
        ("claude-vertex", "vertex"),
    ] {
        let json = format!(
            r#"{{"kind":"openai","base_url":"http://x/v1","keys":["k"],"platform":"{platform}"}}"#
        );
        let body: ProviderBody = parse_body(json.as_bytes()).unwrap();
        let name = ProviderName::parse(name).unwrap();
        let provider = body
            .validate(name.clone())
            .unwrap()
            .resolve(|_| None)
            .unwrap();
        c.providers.insert(name, provider);
    }
    add_model(&mut c, "claude-direct", "anthropic", 1.0);
    add_model(&mut c, "claude-on-bedrock", "claude-bedrock", 2.0);
    add_model(&mut c, "claude-on-vertex", "claude-vertex", 3.0);
    add_rule_json(
        &mut c,
        r#"{"match":"claude","chain":["claude-direct","claude-on-bedrock","claude-on-vertex"]}"#,
    );
    c.settings.restrictions = restrictions
        .iter()
        .enumerate()
        .map(|(i, r)| Restriction::parse(&serde_json::from_str(r).unwrap(), i).unwrap())
        .collect();
    c
}

const PII_BEDROCK: &str =
    r#"{"when":{"metadata.data_class":"pii"},"allowed_platforms":["bedrock"]}"#;

fn facts(labels: &[(&str, &str)], task: Task) -> RequestFacts {
    RequestFacts {
        model: "claude".into(),
        stream: false,
        tools: false,
        max_tokens: None,
        has_images: false,
        endpoint: Endpoint::Chat,
        metadata: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<SortedMap<_, _>>(),
        task: Some(task),
        agent: Some(Agent::Unknown),
    }
}

fn route<'c>(
    c: &'c TenantConfig,
    name: &str,
    f: &RequestFacts,
    pin: Option<(&str, &str)>,
) -> Result<Route<'c>, ChainError> {
    let pinned = pin.map(|(provider, platform)| {
        let provider = (!provider.is_empty()).then_some(provider);
        let platform = (!platform.is_empty()).then_some(platform);
        pin::parse(c, provider, platform).unwrap().unwrap()
    });
    let input = RouteInput {
        facts: Some(f),
        pin: pinned.as_ref(),
        ..RouteInput::unmeasured()
    };
    build_chain(c, name, &input)
}

fn ids(r: &Route<'_>) -> Vec<String> {
    r.candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect()
}

#[test]
fn a_pii_request_is_kept_off_the_disallowed_providers_while_a_plain_one_uses_them() {
    let c = tenant(&[PII_BEDROCK]);
    let pii = route(
        &c,
        "claude",
        &facts(&[("data_class", "pii")], Task::Chat),
        None,
    )
    .unwrap();
    assert_eq!(ids(&pii), ["claude-on-bedrock"]);
    assert_eq!(pii.restrictions, [0]);
    let plain = route(&c, "claude", &facts(&[], Task::Chat), None).unwrap();
    assert_eq!(
        ids(&plain),
        ["claude-direct", "claude-on-bedrock", "claude-on-vertex"]
    );
    assert!(plain.restrictions.is_empty());
}

#[test]
fn a_restriction_applies_whatever_name_is_asked_for_a_bare_model_an_alias_or_auto() {
    let mut c = tenant(&[PII_BEDROCK]);
    add_alias(&mut c, "cheapest", r#"{"cost_tier":"cheapest"}"#);
    let pii = facts(&[("data_class", "pii")], Task::Chat);
    assert_eq!(
        ids(&route(&c, "cheapest", &pii, None).unwrap()),
        ["claude-on-bedrock"]
    );
    assert_eq!(
        ids(&route(&c, "auto:cheap", &pii, None).unwrap()),
        ["claude-on-bedrock"]
    );
    let bare = route(&c, "claude-direct", &pii, None).unwrap_err();
    assert!(matches!(bare, ChainError::NoCandidates { .. }), "{bare:?}");
}

#[test]
fn a_request_matching_several_restrictions_may_use_only_their_intersection() {
    let c = tenant(&[
        PII_BEDROCK,
        r#"{"when":{"params.task":"code"},"allowed_platforms":["bedrock","vertex"],"allowed_providers":["claude-bedrock","claude-vertex"]}"#,
        r#"{"when":{"metadata.region":"eu"},"allowed_platforms":["vertex","direct"]}"#,
    ]);
    let code = route(&c, "claude", &facts(&[], Task::Code), None).unwrap();
    assert_eq!(ids(&code), ["claude-on-bedrock", "claude-on-vertex"]);
    let pii_code = route(
        &c,
        "claude",
        &facts(&[("data_class", "pii")], Task::Code),
        None,
    )
    .unwrap();
    assert_eq!(ids(&pii_code), ["claude-on-bedrock"]);
    assert_eq!(pii_code.restrictions, [0, 1]);
    let eu_code = facts(&[("region", "eu")], Task::Code);
    assert_eq!(
        ids(&route(&c, "claude", &eu_code, None).unwrap()),
        ["claude-on-vertex"]
    );
}

#[test]
fn a_pin_outside_a_restriction_is_403_restricted() {
    let c = tenant(&[PII_BEDROCK]);
    let pii = facts(&[("data_class", "pii")], Task::Chat);
    let err = route(&c, "claude", &pii, Some(("anthropic", ""))).unwrap_err();
    let api = err.api_error();
    assert_eq!((api.status(), api.code()), (403, Some("restricted")));
    assert_eq!(api.param(), Some(pin::HEADER));
    assert_eq!(
        api.message(),
        "X-CogniGate-Pin-Provider 'anthropic' asks for providers outside restrictions[0] (allowed_platforms [bedrock]), which this request matches."
    );
    let platform = route(&c, "claude", &pii, Some(("", "vertex"))).unwrap_err();
    assert_eq!(platform.api_error().param(), Some(pin::PLATFORM_HEADER));
    // A pin inside serves; the same pin without pii is no matter of the restriction.
    let inside = route(&c, "claude", &pii, Some(("claude-bedrock", ""))).unwrap();
    assert_eq!(ids(&inside), ["claude-on-bedrock"]);
    let plain = route(
        &c,
        "claude",
        &facts(&[], Task::Chat),
        Some(("anthropic", "")),
    )
    .unwrap();
    assert_eq!(ids(&plain), ["claude-direct"]);
}

#[test]
fn no_candidate_inside_a_restriction_is_503_no_candidates_naming_it() {
    let c = tenant(&[r#"{"when":{"metadata.data_class":"pii"},"allowed_platforms":["azure"]}"#]);
    let err = route(
        &c,
        "claude",
        &facts(&[("data_class", "pii")], Task::Chat),
        None,
    )
    .unwrap_err()
    .api_error();
    assert_eq!((err.status(), err.code()), (503, Some("no_candidates")));
    assert!(
        err.message().starts_with(
            "No routing candidate is available for 'claude': restrictions[0] (allowed_platforms [azure]) leaves no candidate (model 'claude-direct' is on provider 'anthropic', outside restrictions[0]"
        ),
        "{}",
        err.message()
    );
}

#[test]
fn a_stored_answer_is_inside_only_when_its_provider_and_platform_are() {
    let c = tenant(&[
        PII_BEDROCK,
        r#"{"when":{"params.task":"code"},"allowed_providers":["claude-bedrock"]}"#,
    ]);
    assert!(inside(&c, &[], "anthropic", Platform::Direct));
    assert!(inside(&c, &[0], "anthropic", Platform::Bedrock));
    assert!(!inside(&c, &[0], "anthropic", Platform::Direct));
    assert!(!inside(&c, &[0, 1], "other", Platform::Bedrock));
    assert!(inside(&c, &[0, 1], "claude-bedrock", Platform::Bedrock));
}
