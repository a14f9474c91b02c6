//! Slices: the ledger grants an isolate part of what a key (and the tenant, and the
//! end user, where they are limited) has left of its `rpm`, `tpm` and budget, with a short lease.
//! The isolate admits requests from it locally, with no round trip, and gives back what it did
//! not use. The same idea as the routing grants (`health::grant`).
//!
//! A slice is a hold at the ledger (`holds`), so while the ledger keeps its memory, slices add
//! no overshoot: what every isolate may still spend is already counted. Sizing:
//! - each slice is at most `1/SLICE_DIVISOR` of what is left after every other hold, and at
//!   most `MAX_SLICE_REQUESTS` requests (of this request's reservation, for tokens and money);
//! - "nearly spent": when any limit has less left than `SLICE_DIVISOR × MIN_SLICE_REQUESTS`
//!   (64) requests' worth, no slice is granted and each request makes its own round trip.

use super::admission::ScopeId;
use super::reserve::{HoldRef, Need};
use serde::{Deserialize, Serialize};

/// How long a slice admits locally; the isolate renews it in the background at half this.
pub const SLICE_LEASE_MS: u64 = 2_000;
pub const SLICE_DIVISOR: u64 = 16;
pub const MIN_SLICE_REQUESTS: u64 = 4;
/// As `GRANT_BLOCK` bounds a routing grant: a busy isolate renews about every 256 requests.
pub const MAX_SLICE_REQUESTS: u64 = 512;
/// While the ledger cannot be reached, an isolate keeps admitting from what is left of its last
/// slice for this long past the slice's lease; then it refuses the key's requests (429, retry
/// in 1 s) until the ledger answers again. The ledger holds a slice until this has passed.
pub const OUTAGE_GRACE_MS: u64 = 60_000;

/// What a slice lets an isolate admit: `None` where no scope has that limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Allowance {
    pub requests: u64,
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceGrant {
    pub id: String,
    /// Epoch ms (the ledger's clock) after which the isolate must ask again.
    pub until_ms: u64,
    pub allowance: Allowance,
}

/// The unused part of a slice, given back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceReturn {
    pub id: String,
    /// The scopes it was held on (the ledger visits only those).
    #[serde(default)]
    pub scopes: Vec<ScopeId>,
    pub unused_requests: u64,
    pub unused_tokens: u64,
    pub unused_usd: f64,
}

/// What is left under the tightest scope in each dimension (`None`: unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Remaining {
    pub requests: Option<u64>,
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}

/// The slice to grant with `remaining` left, sized in requests like `unit`; `None` when a limit
/// is nearly spent.
pub fn size(remaining: Remaining, unit: Need) -> Option<Allowance> {
    let floor = SLICE_DIVISOR * MIN_SLICE_REQUESTS;
    let requests = match remaining.requests {
        Some(r) if r < floor => return None,
        Some(r) => (r / SLICE_DIVISOR).min(MAX_SLICE_REQUESTS),
        None => MAX_SLICE_REQUESTS,
    };
    let tokens = match remaining.tokens {
        None => None,
        Some(t) => {
            let unit = unit.tokens.max(1);
            if t < floor.saturating_mul(unit) {
                return None;
            }
            Some((t / SLICE_DIVISOR).min(MAX_SLICE_REQUESTS.saturating_mul(unit)))
        }
    };
    let usd = match remaining.usd {
        None => None,
        Some(u) => {
            if u.is_nan() || u <= 0.0 || u < floor as f64 * unit.usd {
                return None;
            }
            Some((u / SLICE_DIVISOR as f64).min(MAX_SLICE_REQUESTS as f64 * unit.usd))
        }
    };
    Some(Allowance {
        requests,
        tokens,
        usd,
    })
}

/// A slice as the isolate holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSlice {
    pub id: String,
    granted_at: u64,
    until: u64,
    granted: Allowance,
    left: Allowance,
}

impl LocalSlice {
    pub fn new(grant: SliceGrant, now: u64) -> Self {
        Self {
            id: grant.id,
            granted_at: now,
            until: grant.until_ms,
            granted: grant.allowance,
            left: grant.allowance,
        }
    }

    pub fn is_live(&self, now: u64) -> bool {
        now < self.until
    }

    /// Still usable while the ledger cannot be reached.
    pub fn is_live_in_outage(&self, now: u64) -> bool {
        now < self.until.saturating_add(OUTAGE_GRACE_MS)
    }

    /// Admits one request of `need` from the slice if it fits in every dimension.
    pub fn take(&mut self, need: Need) -> Option<HoldRef> {
        let fits = self.left.requests >= 1
            && self.left.tokens.is_none_or(|t| t >= need.tokens)
            && self.left.usd.is_none_or(|u| u >= need.usd);
        if !fits {
            return None;
        }
        self.left.requests -= 1;
        let tokens = self.left.tokens.map(|t| {
            self.left.tokens = Some(t - need.tokens);
            need.tokens
        });
        let usd = self.left.usd.map(|u| {
            self.left.usd = Some(u - need.usd);
            need.usd
        });
        Some(HoldRef {
            id: self.id.clone(),
            requests: 1,
            tokens: tokens.unwrap_or(0),
            usd: usd.unwrap_or(0.0),
        })
    }

    /// Time to renew, in the background: half the lease has passed or half the allowance is
    /// used, so the new slice is in before this one runs out.
    pub fn renewal_due(&self, now: u64) -> bool {
        let half_time = self.granted_at + self.until.saturating_sub(self.granted_at) / 2;
        let half_used = self.left.requests * 2 <= self.granted.requests
            || self
                .left
                .tokens
                .zip(self.granted.tokens)
                .is_some_and(|(l, g)| l * 2 <= g)
            || self
                .left
                .usd
                .zip(self.granted.usd)
                .is_some_and(|(l, g)| l * 2.0 <= g);
        now >= half_time || half_used
    }

    /// What this slice gives back when it is retired (replaced, or lapsed).
    pub fn give_back(&self) -> SliceReturn {
        SliceReturn {
            id: self.id.clone(),
            scopes: Vec::new(),
            unused_requests: self.left.requests,
            unused_tokens: self.left.tokens.unwrap_or(0),
            unused_usd: self.left.usd.unwrap_or(0.0).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(tokens: u64, usd: f64) -> Need {
        Need { tokens, usd }
    }

    #[test]
    fn a_slice_is_a_sixteenth_of_what_is_left_and_at_most_512_requests() {
        let a = size(
            Remaining {
                requests: Some(1_600),
                tokens: None,
                usd: Some(16.0),
            },
            unit(100, 0.0001),
        )
        .unwrap();
        assert_eq!(a.requests, 100);
        assert_eq!(a.tokens, None);
        // 16/16 = $1, but 512 requests of $0.0001 is $0.0512.
        assert!((a.usd.unwrap() - 0.0512).abs() < 1e-12);
        let big = size(Remaining::default(), unit(1, 0.0)).unwrap();
        assert_eq!(big.requests, MAX_SLICE_REQUESTS);
    }

    #[test]
    fn a_nearly_spent_limit_grants_no_slice() {
        // rpm: fewer than 64 requests left.
        let r = |n| Remaining {
            requests: Some(n),
            ..Remaining::default()
        };
        assert!(size(r(63), unit(1, 0.0)).is_none());
        assert!(size(r(64), unit(1, 0.0)).is_some());
        // Budget: less than 64 of this request's reservation left, or nothing.
        let u = |usd| Remaining {
            usd: Some(usd),
            ..Remaining::default()
        };
        assert!(size(u(0.0063), unit(1, 0.0001)).is_none());
        assert!(size(u(0.0064), unit(1, 0.0001)).is_some());
        assert!(size(u(0.0), unit(1, 0.0)).is_none());
        // tpm: less than 64 requests of this size.
        let t = Remaining {
            tokens: Some(6_399),
            ..Remaining::default()
        };
        assert!(size(t, unit(100, 0.0)).is_none());
    }

    #[test]
    fn an_isolate_admits_from_its_slice_while_every_dimension_fits() {
        let mut s = LocalSlice::new(
            SliceGrant {
                id: "s".into(),
                until_ms: 2_000,
                allowance: Allowance {
                    requests: 10,
                    tokens: Some(250),
                    usd: None,
                },
            },
            0,
        );
        let need = unit(100, 1.0);
        let h = s.take(need).unwrap();
        assert_eq!((h.requests, h.tokens, h.usd), (1, 100, 0.0));
        assert!(s.take(need).is_some());
        assert!(s.take(need).is_none(), "50 tokens left");
        assert!(s.take(unit(50, 0.0)).is_some());
        let back = s.give_back();
        assert_eq!((back.unused_requests, back.unused_tokens), (7, 0));
    }

    #[test]
    fn renewal_is_due_at_half_the_lease_or_half_the_allowance() {
        let mut s = LocalSlice::new(
            SliceGrant {
                id: "s".into(),
                until_ms: 2_000,
                allowance: Allowance {
                    requests: 4,
                    tokens: None,
                    usd: None,
                },
            },
            0,
        );
        assert!(!s.renewal_due(999));
        assert!(s.renewal_due(1_000));
        s.take(unit(0, 0.0));
        assert!(!s.renewal_due(0));
        s.take(unit(0, 0.0));
        assert!(s.renewal_due(0));
        assert!(s.is_live(1_999) && !s.is_live(2_000));
        assert!(s.is_live_in_outage(2_000 + OUTAGE_GRACE_MS - 1));
        assert!(!s.is_live_in_outage(2_000 + OUTAGE_GRACE_MS));
    }
}
