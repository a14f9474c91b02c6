use super::*;
use crate::config::Defaults;
use crate::config::RouteName;
use crate::routing::test_config::{add_alias, add_model, add_rule_json, tenant_with};

/// Providers a, b, c and d; models ma (a), mb (b), mc (c, with `vision`), md (d).
fn tenant() -> TenantConfig {
    let mut c = tenant_with(Defaults::default().settings, &["a", "b", "c", "d"]);
    add_model(&mut c, "ma", "a", 1.0);
    add_model(&mut c, "mb", "b", 2.0);
    add_model(&mut c, "mc", "c", 3.0);
    add_model(&mut c, "md", "d", 4.0);
    add_alias(&mut c, "pinned", r#"{"pin":"mb"}"#);
    add_alias(&mut c, "any", r#"{"capabilities":["chat"]}"#);
    add_rule_json(
        &mut c,
        r#"{"name":"coding","match":"code","chain":[{"spread":[{"model":"mc","weight":1},{"model":"pinned","weight":1}]}]}"#,
    );
    c
}

fn only(names: &[&str]) -> KeyPolicy {
    let mut names: Vec<RouteName> = names.iter().map(|n| RouteName::parse(n).unwrap()).collect();
    names.sort();
    KeyPolicy {
        models: Some(names),
        ..KeyPolicy::default()
    }
}

fn reached(c: &TenantConfig, p: &KeyPolicy) -> Vec<String> {
    let names = providers_reached(c, p).into_iter();
    names.map(|n| n.as_str().to_owned()).collect()
}

#[test]
fn a_key_without_an_allow_list_reaches_every_provider_of_its_tenant() {
    assert_eq!(
        reached(&tenant(), &KeyPolicy::default()),
        ["a", "b", "c", "d"]
    );
}

#[test]
fn a_scoped_key_reaches_only_the_providers_of_the_models_its_names_can_reach() {
    let c = tenant();
    assert_eq!(reached(&c, &only(&["ma"])), ["a"]);
    assert_eq!(reached(&c, &only(&["pinned"])), ["b"], "a pinned alias");
    assert_eq!(
        reached(&c, &only(&["code"])),
        ["b", "c"],
        "a rule's spread, through an alias"
    );
    assert_eq!(
        reached(&c, &only(&["auto:coding"])),
        ["b", "c"],
        "a rule by its auto name"
    );
    assert!(reached(&c, &only(&["nothing"])).is_empty());
}

#[test]
fn an_alias_reaches_every_model_it_may_resolve_to() {
    assert_eq!(reached(&tenant(), &only(&["any"])), ["a", "b", "c", "d"]);
}

#[test]
fn a_name_no_rule_holds_also_reaches_where_its_links_lead_and_the_tenant_fallback() {
    let mut c = tenant();
    c.models.get_mut("ma").unwrap().fallback_model =
        Some(crate::config::ModelId::parse("mb").unwrap());
    assert_eq!(reached(&c, &only(&["ma"])), ["a", "b"]);
    c.settings.fallback_model = Some(RouteName::parse("md").unwrap());
    assert_eq!(reached(&c, &only(&["ma"])), ["a", "b", "d"]);
    // A rule's chain is used as written: mc's link is not followed from `code`.
    c.models.get_mut("mc").unwrap().fallback_model =
        Some(crate::config::ModelId::parse("ma").unwrap());
    assert_eq!(reached(&c, &only(&["code"])), ["b", "c"]);
}
