//! What admission holds for a request before its usage is known (issue 21): its estimated tokens
//! and cost. Budgets and `tpm` count spend (or tokens) plus every hold still outstanding, so
//! concurrent requests cannot all pass a budget that only one of them fits: the overshoot is
//! bounded by the estimate's error, not by concurrency.

use serde::{Deserialize, Serialize};

/// The tokens and money one request (or one slice of requests) is held for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Need {
    pub tokens: u64,
    pub usd: f64,
}

impl Need {
    /// The reservation of one request: the prompt estimate (`usage::estimate`, the context
    /// guard's rule) plus the caller's `max_tokens` (0 when unset), priced at the most expensive
    /// candidate of the chain. A fallback never costs more than was held, whatever serves.
    /// `prices`: (input, output) USD per million tokens of each candidate.
    pub fn of_request(
        prompt_tokens: u64,
        max_output: u64,
        prices: impl IntoIterator<Item = (f64, f64)>,
    ) -> Self {
        let usd = prices
            .into_iter()
            .map(|(input, output)| {
                (prompt_tokens as f64 * input + max_output as f64 * output) / 1_000_000.0
            })
            .filter(|usd| usd.is_finite())
            .fold(0.0, f64::max);
        Self {
            tokens: prompt_tokens.saturating_add(max_output),
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

    #[test]
    fn a_reservation_is_the_prompt_estimate_and_max_tokens_at_the_dearest_candidate() {
        // 1,000 prompt tokens and 500 out: $1/$2 per M → 0.002; $3/$1 per M → 0.0035.
        let n = Need::of_request(1_000, 500, [(1.0, 2.0), (3.0, 1.0)]);
        assert_eq!(n.tokens, 1_500);
        assert!((n.usd - 0.0035).abs() < 1e-12);
        // Without max_tokens only the prompt is priced; a free chain holds no money.
        assert!((Need::of_request(1_000, 0, [(1.0, 100.0)]).usd - 0.001).abs() < 1e-12);
        assert_eq!(Need::of_request(10, 0, [(0.0, 0.0)]).usd, 0.0);
        assert_eq!(Need::of_request(10, 0, []).usd, 0.0);
    }
}
