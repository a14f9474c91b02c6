//! A request that met a safety refusal made two upstream
//! calls that both generated an answer, and both providers bill for theirs. The ledger settles
//! once per request id (`governance::settled`: a second record of the same id would be a
//! duplicate and charge nothing), so the request keeps its one record, summed: the tokens of
//! every answer, each answer priced at the model that gave it, under the model whose answer the
//! caller got. Nothing is free and nothing is counted twice; the request counts once.

use super::{cache_savings_usd, cost_usd, PendingUsage, TokenCounts, UsageRecord, UsageSource};
use crate::config::CatalogModel;

/// One generated answer's model and tokens (reported or estimated).
pub type Billed<'m> = (&'m CatalogModel, (TokenCounts, UsageSource));

impl PendingUsage {
    /// `served` for the answer the caller got, plus every other answer `also` billed for this
    /// request (the refusal a fallback replaced, or a fallback's own refusal). Estimated if any
    /// part was.
    pub fn served_with(
        self,
        at_ms: u64,
        (model, tokens): Billed<'_>,
        also: &[Billed<'_>],
    ) -> UsageRecord {
        let mut record = self.served(at_ms, model, tokens);
        for (model, (tokens, source)) in also {
            let sum = record.tokens.unwrap_or_default();
            record.tokens = Some(sum.zip(*tokens, u64::saturating_add));
            record.cost_usd = Some(record.cost_usd.unwrap_or(0.0) + cost_usd(tokens, model));
            record.cache_savings_usd =
                match (record.cache_savings_usd, cache_savings_usd(tokens, model)) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            if *source == UsageSource::Estimated {
                record.usage_source = UsageSource::Estimated;
            }
        }
        record
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, ModelBody};
    use crate::config::{ModelId, TenantId};

    fn pending() -> PendingUsage {
        PendingUsage {
            request_id: "req_1".into(),
            tenant: TenantId::parse("acme").unwrap(),
            key_id: "key_1".into(),
            end_user: None,
            requested: "best".into(),
            generation: 1,
        }
    }

    fn model(id: &str, provider: &str, price: f64) -> CatalogModel {
        let body = format!(
            r#"{{"provider":"{provider}","context_window":8000,"input_price_per_mtok":{price},"output_price_per_mtok":{price}}}"#
        );
        let m: ModelBody = parse_body(body.as_bytes()).unwrap();
        m.validate(ModelId::parse(id).unwrap()).unwrap()
    }

    const REPORTED: UsageSource = UsageSource::Reported;

    #[test]
    fn a_refusal_and_its_fallback_are_one_record_summing_both_answers_each_at_its_own_price() {
        let (refuser, fallback) = (model("m1", "p1", 1.0), model("m2", "p2", 10.0));
        let refusal = (TokenCounts::new(500_000, 0, 0), REPORTED);
        let answer = (TokenCounts::new(500_000, 100_000, 0), REPORTED);
        let r = pending().served_with(7, (&fallback, answer), &[(&refuser, refusal)]);
        assert_eq!(r.served_model.as_ref().map(|m| m.as_str()), Some("m2"));
        assert_eq!(r.provider.as_ref().map(|p| p.as_str()), Some("p2"));
        assert_eq!(r.tokens, Some(TokenCounts::new(1_000_000, 100_000, 0)));
        // 0.5 M at $1 for the refusal, 0.6 M at $10 for the answer.
        assert!((r.cost_usd.unwrap() - 6.5).abs() < 1e-9, "{:?}", r.cost_usd);
        assert_eq!(r.usage_source, REPORTED);
        assert_eq!(r.request_id, "req_1");
    }

    #[test]
    fn each_answers_cache_savings_are_priced_at_its_own_model_and_summed() {
        let cheap = model("m1", "p1", 1.0);
        let dear = model("m2", "p2", 10.0);
        // Reads cost the input price without a cached price: only the writes' premium counts.
        let written = (
            TokenCounts::new(1_000, 0, 0).with_writes(1_000, 0),
            REPORTED,
        );
        let plain = (TokenCounts::new(1_000, 0, 0), REPORTED);
        let r = pending().served(1, &cheap, plain);
        assert_eq!(r.cache_savings_usd, None, "no cache tokens, no savings");
        let r = pending().served_with(1, (&dear, written), &[(&cheap, written)]);
        // 1000 × 0.25 × 10 + 1000 × 0.25 × 1 = 2750 per million, lost.
        assert!(
            (r.cache_savings_usd.unwrap() + 0.00275).abs() < 1e-12,
            "{r:?}"
        );
        assert_eq!(r.tokens.map(|t| t.cache_write), Some(2_000));
    }

    #[test]
    fn an_estimated_part_makes_the_record_estimated_and_with_nothing_else_it_is_served() {
        let m = model("m1", "p1", 1.0);
        let t = TokenCounts::new(10, 2, 0);
        let est =
            pending().served_with(1, (&m, (t, REPORTED)), &[(&m, (t, UsageSource::Estimated))]);
        assert_eq!(est.usage_source, UsageSource::Estimated);
        assert_eq!(est.tokens, Some(TokenCounts::new(20, 4, 0)));
        let alone = pending().served_with(1, (&m, (t, REPORTED)), &[]);
        assert_eq!(alone, pending().served(1, &m, (t, REPORTED)));
    }
}
