//! Each request is settled once (issue 21). A record whose `request_id` the ledger has settled
//! before is either a retried hand-off (the same record again: nothing changes) or a late usage
//! report after an estimate (`Estimated`, then `Reported`): only the difference is charged.
//!
//! The charge only ever rises: a report above the estimate adds the difference; a report below
//! it leaves the estimate charged. Spend and the usage API's roll-ups then always agree (a
//! roll-up may already be in D1), and the estimate is the price of usage reported late.
//!
//! The ids are kept in memory, bounded both in time (`SETTLED_TTL_MS`, far past any request
//! budget and an isolate's retries) and in count (`MAX_SETTLED`, oldest forgotten first).

use crate::usage::{TokenCounts, UsageRecord, UsageSource};
use std::collections::{HashMap, VecDeque};

pub const SETTLED_TTL_MS: u64 = 15 * 60_000;
pub const MAX_SETTLED: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Charged {
    tokens: TokenCounts,
    usd: f64,
    source: UsageSource,
}

impl Charged {
    fn of(r: &UsageRecord) -> Self {
        Self {
            tokens: r.tokens.unwrap_or_default(),
            usd: r.cost_usd.filter(|c| c.is_finite()).unwrap_or(0.0),
            source: r.usage_source,
        }
    }
}

/// What a record adds, given what its request was charged before.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// The request's first record: charged in full.
    New,
    /// Nothing more to charge (a retried hand-off, or a report not above the estimate).
    Duplicate,
    /// A late report above its estimate: only this difference is charged (the record's request
    /// was counted already).
    Difference(TokenCounts, f64),
}

#[derive(Debug, Clone, Default)]
pub struct SettledIds {
    by_id: HashMap<String, Charged>,
    /// (when settled, id), oldest first.
    order: VecDeque<(u64, String)>,
}

impl SettledIds {
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    fn forget_old(&mut self, now_ms: u64) {
        while let Some((at, _)) = self.order.front() {
            let too_many = self.order.len() > MAX_SETTLED;
            if !too_many && at.saturating_add(SETTLED_TTL_MS) > now_ms {
                break;
            }
            if let Some((_, id)) = self.order.pop_front() {
                self.by_id.remove(&id);
            }
        }
    }

    /// Records the request as settled and says what of `record` remains to charge. A record
    /// without an id (from before request ids) is always new.
    pub fn check(&mut self, record: &UsageRecord, now_ms: u64) -> Seen {
        self.forget_old(now_ms);
        if record.request_id.is_empty() {
            return Seen::New;
        }
        let now = Charged::of(record);
        let Some(before) = self.by_id.get_mut(&record.request_id) else {
            self.by_id.insert(record.request_id.clone(), now);
            self.order.push_back((now_ms, record.request_id.clone()));
            self.forget_old(now_ms);
            return Seen::New;
        };
        if before.source != UsageSource::Estimated || now.source != UsageSource::Reported {
            return Seen::Duplicate;
        }
        let delta = now.tokens.zip(before.tokens, u64::saturating_sub);
        let usd = (now.usd - before.usd).max(0.0);
        *before = Charged {
            tokens: before.tokens.zip(now.tokens, u64::max),
            usd: before.usd.max(now.usd),
            source: UsageSource::Reported,
        };
        if delta == TokenCounts::default() && usd == 0.0 {
            Seen::Duplicate
        } else {
            Seen::Difference(delta, usd)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TenantId;
    use crate::usage::Outcome;

    fn rec(id: &str, source: UsageSource, prompt: u64, completion: u64, usd: f64) -> UsageRecord {
        UsageRecord {
            at_ms: 0,
            request_id: id.into(),
            tenant: TenantId::parse("t").unwrap(),
            key_id: "k".into(),
            end_user: None,
            requested: "m".into(),
            served_model: None,
            provider: None,
            tokens: Some(TokenCounts::new(prompt, completion, 0)),
            cost_usd: Some(usd),
            usage_source: source,
            generation: 0,
            outcome: Outcome::Served,
            cache_hit: false,
            saved_usd: None,
        }
    }

    #[test]
    fn a_retried_hand_off_of_the_same_record_changes_nothing() {
        let mut s = SettledIds::default();
        let r = rec("req_1", UsageSource::Reported, 10, 5, 0.1);
        assert_eq!(s.check(&r, 0), Seen::New);
        assert_eq!(s.check(&r, 1), Seen::Duplicate);
        let e = rec("req_2", UsageSource::Estimated, 10, 5, 0.1);
        assert_eq!(s.check(&e, 0), Seen::New);
        assert_eq!(s.check(&e, 1), Seen::Duplicate);
    }

    #[test]
    fn a_late_report_after_an_estimate_settles_only_the_difference_never_both() {
        let mut s = SettledIds::default();
        assert_eq!(
            s.check(&rec("req_1", UsageSource::Estimated, 10, 5, 0.10), 0),
            Seen::New
        );
        match s.check(&rec("req_1", UsageSource::Reported, 12, 9, 0.15), 1) {
            Seen::Difference(t, usd) => {
                assert_eq!(t, TokenCounts::new(2, 4, 0));
                assert!((usd - 0.05).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
        // The same report again, or an estimate after it, changes nothing more.
        let late = rec("req_1", UsageSource::Reported, 12, 9, 0.15);
        assert_eq!(s.check(&late, 2), Seen::Duplicate);
        let again = rec("req_1", UsageSource::Estimated, 50, 50, 1.0);
        assert_eq!(s.check(&again, 2), Seen::Duplicate);
        // A report below the estimate leaves the estimate charged.
        s.check(&rec("req_2", UsageSource::Estimated, 10, 5, 0.10), 0);
        let low = rec("req_2", UsageSource::Reported, 3, 1, 0.02);
        assert_eq!(s.check(&low, 1), Seen::Duplicate);
    }

    #[test]
    fn settled_ids_are_forgotten_after_their_time_or_past_the_count_bound() {
        let mut s = SettledIds::default();
        s.check(&rec("old", UsageSource::Reported, 1, 1, 0.0), 0);
        s.check(
            &rec("new", UsageSource::Reported, 1, 1, 0.0),
            SETTLED_TTL_MS - 1,
        );
        assert_eq!(s.len(), 2);
        s.check(&rec("x", UsageSource::Reported, 1, 1, 0.0), SETTLED_TTL_MS);
        assert_eq!(s.len(), 2, "the oldest is forgotten after SETTLED_TTL_MS");
        for i in 0..MAX_SETTLED + 10 {
            s.check(
                &rec(&format!("r{i}"), UsageSource::Reported, 1, 1, 0.0),
                SETTLED_TTL_MS,
            );
        }
        assert_eq!(s.len(), MAX_SETTLED);
        assert_eq!(s.order.len(), MAX_SETTLED);
    }
}
