//! What a safety refusal falls back to. A rule's chain has its own next
//! positions. An alias requested on its own contributes one candidate (the spec), so with
//! `on_refusal: fallback` the model it would resolve to without the one that refused is kept
//! aside, asked only after a refusal, never after a failure.

use super::chain::{Candidate, RouteInput};
use super::resolve::{alias_runner_up, lookup, Target};
use super::settings_owner::SettingsOwner;
use crate::config::{Chain, OnRefusal, TenantConfig};

/// The requested name's `on_refusal`, from its settings' owner; `answer` for a bare model.
pub fn on_refusal(owner: SettingsOwner<'_>) -> OnRefusal {
    owner
        .read(Chain::on_refusal, |a| a.on_refusal)
        .unwrap_or_default()
}

/// The refusal-only candidate: for an alias requested on its own with `on_refusal: fallback`,
/// its runner-up to the chain's one candidate; `None` for a rule or a model.
pub fn refusal_only<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    rule: Option<&Chain>,
    input: &RouteInput<'_>,
    chain: &[Candidate<'c>],
) -> Option<Candidate<'c>> {
    let (None, Some(Target::Alias(_, alias)), [top]) = (rule, lookup(cfg, requested), chain) else {
        return None;
    };
    if alias.on_refusal != OnRefusal::Fallback {
        return None;
    }
    let model = alias_runner_up(cfg, alias, input, &top.model.id)?;
    let provider = cfg.providers.get(&model.provider)?;
    Some(Candidate { model, provider })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::build_chain;
    use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};

    fn ids(c: &TenantConfig, name: &str) -> (Vec<String>, Option<String>) {
        let route = build_chain(c, name, &RouteInput::unmeasured()).unwrap();
        let chain = route.candidates.iter().map(|c| c.model.id.to_string());
        let extra = route.refusal_only.map(|c| c.model.id.to_string());
        (chain.collect(), extra)
    }

    #[test]
    fn an_alias_on_its_own_with_on_refusal_fallback_keeps_its_runner_up_for_a_refusal_only() {
        let mut c = cfg();
        for (id, price) in [("a", 1.0), ("b", 2.0), ("c", 3.0)] {
            add_model(&mut c, id, "openai", price);
        }
        add_alias(
            &mut c,
            "safe",
            r#"{"cost_tier":"cheapest","on_refusal":"fallback"}"#,
        );
        add_alias(&mut c, "pinned", r#"{"pin":"c","on_refusal":"fallback"}"#);
        add_alias(&mut c, "plain", r#"{"cost_tier":"cheapest"}"#);
        assert_eq!(ids(&c, "safe"), (vec!["a".into()], Some("b".into())));
        // A pin that refused falls through to the constraints, as a retired pin does.
        assert_eq!(ids(&c, "pinned"), (vec!["c".into()], Some("a".into())));
        assert_eq!(ids(&c, "plain"), (vec!["a".into()], None));
        // A rule's chain has its own next positions: nothing is kept aside.
        add_rule_json(
            &mut c,
            r#"{"match":"app","chain":["safe"],"on_refusal":"fallback"}"#,
        );
        assert_eq!(ids(&c, "app"), (vec!["a".into()], None));
    }
}
