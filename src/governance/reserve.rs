//! What admission holds for a request before its usage is known: its estimated tokens
//! and cost. Budgets and `tpm` count spend (or tokens) plus every hold still outstanding, so
//! concurrent requests cannot all pass a budget that only one of them fits: the overshoot is
//! bounded by the estimate's error, not by concurrency.

use crate::config::CatalogModel;
use serde::{Deserialize, Serialize};

/// The tokens and money one request (or one slice of requests) is held for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Need {
    pub tokens: u64,
    pub usd: f64,
}

/// A model's prices: USD per million input and output tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    pub fn of(model: &CatalogModel) -> Self {
        Self {
            input: model.input_price_per_mtok,
            output: model.output_price_per_mtok,
        }
    }

    /// What `prompt` tokens in and `output` tokens out cost at this price (0 if not finite).
    fn cost(self, prompt: u64, output: u64) -> f64 {
        let usd = (prompt as f64 * self.input + output as f64 * self.output) / 1_000_000.0;
        if usd.is_finite() {
            usd.max(0.0)
        } else {
            0.0
        }
    }
}

/// How many answers one request can be billed for. Each upstream answer is billed, so a request
/// whose safety refusal is followed by a fallback (`on_refusal: fallback`, not opted out, with a
/// candidate left to ask) can be billed two: the refusal and the fallback's answer. A stream is
/// never read for a refusal, so it is billed one.
pub fn billable_answers(refusal_fallback: bool, streamed: bool, candidates: usize) -> usize {
    if refusal_fallback && !streamed && candidates >= 2 {
        2
    } else {
        1
    }
}

impl Need {
    /// The reservation of one request: for each answer it can be billed (`billable_answers`),
    /// the prompt estimate (`usage::estimate`, the context guard's rule) plus the caller's
    /// `max_tokens` (0 when unset), priced at the dearest candidates that can give them (the
    /// sum of the `answers` dearest), so whatever serves, and whatever refusal came first, never
    /// costs more than was held. `candidates`: each model that may answer (the chain, and a
    /// refusal fallback's runner-up), with its price; a model without one is held at the
    /// tenant's highest (`tenant_prices`, read only then).
    pub fn of_request(
        prompt_tokens: u64,
        max_output: u64,
        candidates: &[Option<Price>],
        answers: usize,
        tenant_prices: impl IntoIterator<Item = Price>,
    ) -> Self {
        let cost = |p: Price| p.cost(prompt_tokens, max_output);
        let unpriced = candidates.iter().any(Option::is_none);
        let highest = if unpriced {
            tenant_prices.into_iter().map(cost).fold(0.0, f64::max)
        } else {
            0.0
        };
        let mut costs: Vec<f64> = candidates.iter().map(|p| p.map_or(highest, cost)).collect();
        costs.sort_by(|a, b| b.total_cmp(a));
        let answers = answers.min(costs.len()).max(1);
        let usd = costs.iter().take(answers).sum();
        let per_answer = prompt_tokens.saturating_add(max_output);
        Self {
            tokens: per_answer.saturating_mul(u64::try_from(answers).unwrap_or(u64::MAX)),
            usd,
        }
    }

    /// The reference a request admitted by the ledger carries: the same reservation as the
    /// ledger's hold (`Hold::reserving`), under the request id.
    pub fn hold_ref(self, id: &str) -> HoldRef {
        HoldRef {
            id: id.to_owned(),
            requests: 0,
            tokens: self.tokens,
            usd: self.usd,
        }
    }
}

/// The hold a finished request was admitted under, carried by its record so the ledger replaces
/// exactly that reservation with the actual charge. `id` is the request id for a request the
/// ledger admitted itself, or the slice id for one admitted locally from a slice (`requests`
/// is then 1: the request counts toward `rpm` when it settles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldRef {
    pub id: String,
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub usd: f64,
}

impl HoldRef {
    /// Two records of the same hold folded into one (records coalesced in an isolate).
    pub fn absorb(&mut self, other: &HoldRef) {
        self.requests = self.requests.saturating_add(other.requests);
        self.tokens = self.tokens.saturating_add(other.tokens);
        self.usd += other.usd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: [Option<Price>; 0] = [];

    fn price(input: f64, output: f64) -> Option<Price> {
        Some(Price { input, output })
    }

    #[test]
    fn a_reservation_is_the_prompt_estimate_and_max_tokens_at_the_dearest_candidate() {
        // 1,000 prompt tokens and 500 out: $1/$2 per M → 0.002; $3/$1 per M → 0.0035.
        let chain = [price(1.0, 2.0), price(3.0, 1.0)];
        let n = Need::of_request(1_000, 500, &chain, 1, []);
        assert_eq!(n.tokens, 1_500);
        assert!((n.usd - 0.0035).abs() < 1e-12);
        // Without max_tokens only the prompt is priced; a free chain holds no money.
        let n = Need::of_request(1_000, 0, &[price(1.0, 100.0)], 1, []);
        assert!((n.usd - 0.001).abs() < 1e-12);
        assert_eq!(Need::of_request(10, 0, &[price(0.0, 0.0)], 1, []).usd, 0.0);
        assert_eq!(Need::of_request(10, 0, &ONE, 1, []).usd, 0.0);
        assert_eq!(Need::of_request(10, 0, &ONE, 1, []).tokens, 10);
    }

    #[test]
    fn a_refusal_fallback_reserves_both_answers_it_may_bill_each_at_its_models_price() {
        // Non-streamed, with a candidate left to ask: the refusal and the fallback's answer.
        assert_eq!(billable_answers(true, false, 2), 2);
        assert_eq!(
            billable_answers(true, false, 3),
            2,
            "one fallback, never more"
        );
        assert_eq!(billable_answers(true, false, 1), 1, "no one left to ask");
        assert_eq!(
            billable_answers(true, true, 2),
            1,
            "a stream is not read for a refusal"
        );
        assert_eq!(billable_answers(false, false, 3), 1);
        // 1,000 + 500 tokens per answer; $1/$1 → 0.0015, $100/$100 → 0.15, $10/$10 → 0.015:
        // the two dearest, whichever position they are at (an alias's runner-up is last).
        let route = [price(1.0, 1.0), price(10.0, 10.0), price(100.0, 100.0)];
        let n = Need::of_request(1_000, 500, &route, 2, []);
        assert_eq!(n.tokens, 3_000);
        assert!((n.usd - 0.165).abs() < 1e-12, "{}", n.usd);
        let one = Need::of_request(1_000, 500, &route, 1, []);
        assert!((one.usd - 0.15).abs() < 1e-12, "{}", one.usd);
        // Never more answers than candidates.
        let n = Need::of_request(1_000, 500, &[price(1.0, 1.0)], 2, []);
        assert_eq!(n.tokens, 1_500);
    }

    #[test]
    fn a_model_without_a_price_is_held_at_the_tenants_highest() {
        let tenant = [
            Price {
                input: 1.0,
                output: 1.0,
            },
            Price {
                input: 50.0,
                output: 10.0,
            },
            Price {
                input: 2.0,
                output: 200.0,
            },
        ];
        // 1,000 in, 100 out: the tenant's costs are 0.0011, 0.051 and 0.022.
        let n = Need::of_request(1_000, 100, &[price(1.0, 1.0), None], 2, tenant);
        assert!((n.usd - (0.0011 + 0.051)).abs() < 1e-12, "{}", n.usd);
        let alone = Need::of_request(1_000, 100, &[None], 1, tenant);
        assert!((alone.usd - 0.051).abs() < 1e-12, "{}", alone.usd);
        // Priced candidates never read the tenant's prices.
        let n = Need::of_request(1_000, 100, &[price(1.0, 1.0)], 1, tenant);
        assert!((n.usd - 0.0011).abs() < 1e-12, "{}", n.usd);
    }
}
