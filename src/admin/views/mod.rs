//! Every admin answer body is one of these typed views, so its JSON Schema can be derived (on the
//! host) and checked against `openapi.json` (`admin::openapi_check`): a field added here and not to
//! the document fails the build. Three live with what they show and are named here too: the
//! stats answer (`routing::stats::view`), the usage answer (`governance::usage_query`) and a
//! skip's reason (`cascade::precheck`).

mod catalog;
mod explain;
mod operations;
mod tenants;

pub use crate::governance::usage_query::{UsageGroupView, UsageView};
pub use crate::routing::stats::view::{BreakerState, ParkedKey, StatsRow, TenantStats};
pub use catalog::{AliasView, KeyRef, ModelView, ProviderView, RuleView, WrittenRuleView};
#[cfg(not(target_arch = "wasm32"))]
pub use explain::AppliedRestriction;
pub use explain::{CandidateDecision, CandidateView, Explanation, LiveStats, SkipReason};
pub use operations::{ClosedBreaker, EventView, ResetView};
pub use tenants::{
    Deleted, KeyView, List, NewKeyView, PolicyView, SpendView, TenantSummary, TenantView,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        Alias, AliasName, CatalogModel, Chain, ChainEntry, RouteName, StoredProvider,
    };
    use serde_json::Value;

    fn provider(p: &StoredProvider) -> Value {
        serde_json::to_value(ProviderView::from(p)).unwrap()
    }

    fn model(m: &CatalogModel) -> Value {
        serde_json::to_value(ModelView::new(m, |_| true)).unwrap()
    }

    fn alias(name: &AliasName, a: &Alias) -> Value {
        serde_json::to_value(AliasView::new(name, a)).unwrap()
    }

    fn rule(matches: &RouteName, chain: &Chain) -> Value {
        let r = crate::config::Rule::unconditional(matches.clone(), chain.clone());
        serde_json::to_value(RuleView::new(&r)).unwrap()
    }
    use crate::config::admin_body::{parse_body, AliasBody, ModelBody, ProviderBody};
    use crate::config::sealed::Kek;
    use crate::config::{ModelId, ProviderName, TenantId};
    use serde_json::json;

    fn stored_provider(body: &[u8]) -> StoredProvider {
        let p: ProviderBody = parse_body(body).unwrap();
        let kek = Kek::from_hex(&"11".repeat(32)).unwrap();
        let tenant = TenantId::parse("acme").unwrap();
        p.validate(ProviderName::parse("openai").unwrap())
            .unwrap()
            .seal(&tenant, Some(&kek), || Some([3; 12]))
            .unwrap()
    }

    #[test]
    fn provider_view_shows_key_ids_last_four_and_secret_names_only() {
        let p = stored_provider(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234",{"secret":"PROVIDER_OPENAI_2"}]}"#,
        );
        let shown = provider(&p).to_string();
        assert!(!shown.contains("sk-live-abcdefgh1234"));
        assert!(!shown.contains("abcdefgh"));
        assert!(!shown.contains("sealed") && !shown.contains("v1:"));
        assert!(shown.contains(r#""last4":"1234""#));
        assert!(shown.contains(r#""secret":"PROVIDER_OPENAI_2""#));
        assert!(shown.contains(p.keys[0].id()));
    }

    #[test]
    fn the_typed_views_answer_the_same_json_as_before_them() {
        let p = stored_provider(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-1",{"secret":"PROVIDER_X"}],"rate_limit_signals":["x-ratelimit-reset"]}"#,
        );
        assert_eq!(
            provider(&p),
            json!({"name": "openai", "kind": "openai", "base_url": "https://api.openai.com/v1",
                "platform": "direct", "keys": [{"id": p.keys[0].id(), "last4": null}, {"id": p.keys[1].id(), "secret": "PROVIDER_X"}],
                "key_strategy": "round_robin", "timeout_ms": 30000,
                "retry": {"max_retries": 0, "base_delay_ms": 100, "max_delay_ms": 2000},
                "rate_limit_signals": ["x-ratelimit-reset"], "auth_cooldown_ms": 0, "rpm": null,
                "max_park_ms": null, "rate_limit_cooldown_ms": null})
        );
        let id = ModelId::parse("meta/llama").unwrap();
        for body in [
            &br#"{"provider":"p","context_window":8000}"#[..],
            br#"{"provider":"p","context_window":8000,"max_output_tokens":10,"capabilities":["tools"],"cached_input_price_per_mtok":0.5}"#,
        ] {
            let m = parse_body::<ModelBody>(body)
                .unwrap()
                .validate(id.clone())
                .unwrap();
            assert_eq!(model(&m), json!(m), "{m:?}");
        }
        let name = AliasName::parse("fast").unwrap();
        for body in [
            &br#"{}"#[..],
            br#"{"pin":"m","min_context_window":5,"provider_preference":["a"],"cost_tier":"best"}"#,
        ] {
            let a = parse_body::<AliasBody>(body).unwrap().validate().unwrap();
            let mut before = json!(a);
            before["name"] = json!(name);
            assert_eq!(alias(&name, &a), before, "{a:?}");
        }
        let matches = RouteName::parse("best").unwrap();
        let chain = Chain::new(vec![ChainEntry::Name(matches.clone())], 5).unwrap();
        assert_eq!(
            rule(&matches, &chain),
            json!({"name": "best", "match": "best", "priority": 0, "chain": ["best"]}),
            "a rule written without a name or priority shows its match as its name and priority 0"
        );
    }
}
