//! A usage record still waiting for its answer: who asked, and for what, known before the
//! cascade; what served and what it used, known after.

use super::{cache_savings_usd, cost_usd, Outcome, TokenCounts, UsageRecord, UsageSource};
use crate::config::{CatalogModel, ModelId, ProviderName, TenantId};

#[derive(Debug, Clone, PartialEq)]
pub struct PendingUsage {
    pub request_id: String,
    pub tenant: TenantId,
    pub key_id: String,
    pub end_user: Option<String>,
    pub requested: String,
    /// The tenant generation of the config serving the request.
    pub generation: u64,
}

impl PendingUsage {
    /// An answer from `model` (the candidate that served it, a fallback included), charged at
    /// that model's prices: the tokens the upstream reported, or the gateway's estimate of them
    /// (`source` says which). A served request is never free for want of a report.
    pub fn served(
        self,
        at_ms: u64,
        model: &CatalogModel,
        (tokens, source): (TokenCounts, UsageSource),
    ) -> UsageRecord {
        UsageRecord {
            cost_usd: Some(cost_usd(&tokens, model)),
            cache_savings_usd: cache_savings_usd(&tokens, model),
            served_model: Some(model.id.clone()),
            provider: Some(model.provider.clone()),
            tokens: Some(tokens),
            usage_source: source,
            outcome: Outcome::Served,
            ..self.record(at_ms)
        }
    }

    /// Answered from the response cache. The key and tenant pay nothing and no tokens
    /// were used; the record names the model and provider of the stored answer and what its
    /// original serving cost (`saved_usd`).
    pub fn cache_hit(
        self,
        at_ms: u64,
        served_by: (Option<ModelId>, Option<ProviderName>),
        saved_usd: f64,
    ) -> UsageRecord {
        UsageRecord {
            cost_usd: Some(0.0),
            served_model: served_by.0,
            provider: served_by.1,
            outcome: Outcome::Served,
            cache_hit: true,
            saved_usd: Some(if saved_usd.is_finite() {
                saved_usd.max(0.0)
            } else {
                0.0
            }),
            ..self.record(at_ms)
        }
    }

    /// Every candidate failed: nothing served, nothing to pay.
    pub fn exhausted(self, at_ms: u64) -> UsageRecord {
        UsageRecord {
            cost_usd: Some(0.0),
            ..self.record(at_ms)
        }
    }

    fn record(self, at_ms: u64) -> UsageRecord {
        UsageRecord {
            at_ms,
            request_id: self.request_id,
            tenant: self.tenant,
            key_id: self.key_id,
            end_user: self.end_user,
            requested: self.requested,
            served_model: None,
            provider: None,
            tokens: None,
            cost_usd: None,
            usage_source: UsageSource::Reported,
            generation: self.generation,
            outcome: Outcome::Exhausted,
            cache_hit: false,
            saved_usd: None,
            cache_savings_usd: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, ModelBody};
    use crate::config::ModelId;

    fn pending() -> PendingUsage {
        PendingUsage {
            request_id: "req_1".into(),
            tenant: TenantId::parse("acme").unwrap(),
            key_id: "key_1".into(),
            end_user: Some("u1".into()),
            requested: "fast".into(),
            generation: 1,
        }
    }

    fn model(id: &str, input: f64) -> CatalogModel {
        let m: ModelBody = parse_body(
            format!(r#"{{"provider":"p","context_window":8000,"input_price_per_mtok":{input}}}"#)
                .as_bytes(),
        )
        .unwrap();
        m.validate(ModelId::parse(id).unwrap()).unwrap()
    }

    #[test]
    fn a_served_answer_is_charged_to_the_model_that_served_it() {
        let tokens = TokenCounts::new(1_000_000, 0, 0);
        let r = pending().served(9, &model("fallback", 3.0), (tokens, UsageSource::Reported));
        assert_eq!(
            r.served_model.as_ref().map(|m| m.as_str()),
            Some("fallback")
        );
        assert_eq!(r.provider.as_ref().map(|p| p.as_str()), Some("p"));
        assert_eq!((r.requested.as_str(), r.cost_usd), ("fast", Some(3.0)));
        assert_eq!((r.outcome, r.at_ms), (Outcome::Served, 9));
    }

    #[test]
    fn estimated_tokens_are_charged_like_reported_ones_and_say_so() {
        let tokens = TokenCounts::new(2_000_000, 0, 0);
        let r = pending().served(9, &model("m", 3.0), (tokens, UsageSource::Estimated));
        assert_eq!((r.tokens, r.cost_usd), (Some(tokens), Some(6.0)));
        assert_eq!(r.usage_source, UsageSource::Estimated);
        assert_eq!(
            r.request_id, "req_1",
            "a late report settles against this id"
        );
    }

    #[test]
    fn a_cache_hit_costs_nothing_uses_no_tokens_and_records_what_it_saved() {
        let by = (
            ModelId::parse("gpt").ok(),
            ProviderName::parse("openai").ok(),
        );
        let r = pending().cache_hit(9, by, 0.25);
        assert_eq!(
            (r.cost_usd, r.tokens, r.outcome),
            (Some(0.0), None, Outcome::Served)
        );
        assert!(r.cache_hit);
        assert_eq!(r.saved_usd, Some(0.25));
        assert_eq!(r.served_model.as_ref().map(|m| m.as_str()), Some("gpt"));
        let line = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (line["cache_hit"].as_bool(), line["saved_usd"].as_f64()),
            (Some(true), Some(0.25))
        );
        let miss = serde_json::to_value(pending().exhausted(1)).unwrap();
        assert!(miss.get("cache_hit").is_none(), "absent unless a hit");
    }

    #[test]
    fn an_exhausted_request_costs_zero_with_unknown_tokens_and_no_serving_model() {
        let r = pending().exhausted(5);
        assert_eq!(r.outcome, Outcome::Exhausted);
        assert_eq!(
            (r.tokens, r.cost_usd, r.served_model),
            (None, Some(0.0), None)
        );
        assert_eq!(r.end_user.as_deref(), Some("u1"));
    }
}
