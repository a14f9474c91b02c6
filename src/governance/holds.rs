//! The holds on one scope's limits: requests admitted but not settled, and slices granted to
//! isolates. The ledger checks a budget against spend plus every hold's money, `tpm` against the
//! minute's tokens plus every hold's tokens, `rpm` against the minute's requests plus every
//! slice's requests. Holds live in memory, like the minute windows.

use super::reserve::{HoldRef, Need};
use super::slice::SliceReturn;
use crate::config::SortedMap;

/// Money below this is float noise left by subtracting what was added.
const USD_EPSILON: f64 = 1e-12;

#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    pub requests: u64,
    pub tokens: u64,
    pub usd: f64,
    /// Released (and logged) if still held then: a guard against a request that died unsettled.
    /// A request still running renews it (`lease`), so only one that stopped renewing lapses.
    pub expires_ms: u64,
}

impl Hold {
    /// The hold of one request the ledger admits: its reservation, counted toward no request
    /// rate (the request counted at admission). `Need::hold_ref` is what its record carries.
    pub fn reserving(need: Need, expires_ms: u64) -> Self {
        Self {
            requests: 0,
            tokens: need.tokens,
            usd: need.usd,
            expires_ms,
        }
    }

    fn is_empty(&self) -> bool {
        self.requests == 0 && self.tokens == 0 && self.usd <= USD_EPSILON
    }

    fn take(&mut self, requests: u64, tokens: u64, usd: f64) {
        self.requests = self.requests.saturating_sub(requests);
        self.tokens = self.tokens.saturating_sub(tokens);
        self.usd = (self.usd - usd.max(0.0)).max(0.0);
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Holds {
    by_id: SortedMap<String, Hold>,
}

impl Holds {
    pub fn requests(&self) -> u64 {
        self.by_id
            .values()
            .fold(0u64, |s, h| s.saturating_add(h.requests))
    }

    pub fn tokens(&self) -> u64 {
        self.by_id
            .values()
            .fold(0u64, |s, h| s.saturating_add(h.tokens))
    }

    pub fn usd(&self) -> f64 {
        self.by_id.values().map(|h| h.usd).sum()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    pub fn next_expiry(&self) -> Option<u64> {
        self.by_id.values().map(|h| h.expires_ms).min()
    }

    pub fn place(&mut self, id: &str, hold: Hold) {
        if !hold.is_empty() {
            self.by_id.insert(id.to_owned(), hold);
        }
    }

    /// A finished request gives back what it was held for; the hold ends once nothing is left.
    pub fn release(&mut self, r: &HoldRef) {
        self.give_back(&r.id, r.requests, r.tokens, r.usd, u64::MAX);
    }

    /// An isolate gives back the unused part of a slice. What is left is held for the slice's
    /// requests still in flight, whose records release it, until `drain_until`.
    pub fn returned(&mut self, ret: &SliceReturn, drain_until: u64) {
        let (requests, tokens, usd) = (ret.unused_requests, ret.unused_tokens, ret.unused_usd);
        self.give_back(&ret.id, requests, tokens, usd, drain_until);
    }

    /// A request still running holds `id` until `until` at least (`lease`); `false` if no hold
    /// has that id. A slice's hold is renewed whole: what its other requests still hold is kept
    /// with it.
    pub fn renew(&mut self, id: &str, until: u64) -> bool {
        let Some(h) = self.by_id.get_mut(id) else {
            return false;
        };
        h.expires_ms = h.expires_ms.max(until);
        true
    }

    /// Takes from hold `id`, which is then released by `expire_by` at the latest; the hold ends
    /// once nothing is left.
    fn give_back(&mut self, id: &str, requests: u64, tokens: u64, usd: f64, expire_by: u64) {
        if let Some(h) = self.by_id.get_mut(id) {
            h.take(requests, tokens, usd);
            h.expires_ms = h.expires_ms.min(expire_by);
            if h.is_empty() {
                self.by_id.remove(id);
            }
        }
    }

    /// Releases every hold past its expiry; returns them (to be logged).
    pub fn expire(&mut self, now_ms: u64) -> Vec<(String, Hold)> {
        let (gone, kept): (SortedMap<_, _>, SortedMap<_, _>) = std::mem::take(&mut self.by_id)
            .into_iter()
            .partition(|(_, h)| h.expires_ms <= now_ms);
        self.by_id = kept;
        gone.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::ScopeId;

    fn hold(requests: u64, tokens: u64, usd: f64) -> Hold {
        Hold {
            requests,
            tokens,
            usd,
            expires_ms: 100,
        }
    }

    #[test]
    fn a_hold_ends_when_its_records_and_its_return_have_given_everything_back() {
        let mut h = Holds::default();
        h.place("s1", hold(4, 400, 0.4));
        h.place("r1", hold(0, 10, 0.01));
        assert_eq!((h.requests(), h.tokens()), (4, 410));
        let one = HoldRef {
            id: "s1".into(),
            requests: 1,
            tokens: 100,
            usd: 0.1,
        };
        h.release(&one);
        h.returned(
            &SliceReturn {
                id: "s1".into(),
                scopes: vec![ScopeId::Key("k".into())],
                unused_requests: 2,
                unused_tokens: 200,
                unused_usd: 0.2,
            },
            50,
        );
        assert_eq!((h.requests(), h.tokens(), h.len()), (1, 110, 2));
        h.release(&one);
        assert_eq!(h.len(), 1, "the slice's last in-flight request settled");
        assert!((h.usd() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn a_hold_not_given_back_is_released_at_its_expiry() {
        let mut h = Holds::default();
        h.place("r1", hold(0, 10, 0.01));
        assert!(h.expire(99).is_empty());
        assert_eq!(h.expire(100).len(), 1);
        assert!(h.is_empty());
        // Releasing a hold that is gone changes nothing.
        h.release(&HoldRef {
            id: "r1".into(),
            requests: 0,
            tokens: 10,
            usd: 0.01,
        });
        assert!(h.is_empty());
    }
}
