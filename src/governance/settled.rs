//! Each request is settled once. A record whose `request_id` the ledger has settled
//! before is either a retried hand-off (the same record again: nothing changes) or a late usage
//! report after an estimate (`Estimated`, then `Reported`): only the difference is charged.
//!
//! The charge only ever rises: a report above the estimate adds the difference; a report below
//! it leaves the estimate charged. Spend and the usage API's roll-ups then always agree (a
//! roll-up may already be in D1), and the estimate is the price of usage reported late.
//!
//! The ids are bounded both in time (`SETTLED_TTL_MS`, far past any request budget and an
//! isolate's retries) and in count (`MAX_SETTLED`, oldest forgotten first). They survive a
//! restart of the ledger object: each id's charge is stored (`SETTLED_PREFIX` + the id, one small
//! value) in the same storage write as the spend and roll-ups its settle changed, so storage
//! never holds a settle's effect without its id; a forgotten id's value is deleted with a later
//! write, and an object that starts again reads them all back once, deleting those past their
//! time.

use crate::usage::rollup_store::StorageWrites;
use crate::usage::{TokenCounts, UsageRecord, UsageSource};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet, VecDeque};

pub const SETTLED_TTL_MS: u64 = 15 * 60_000;
pub const MAX_SETTLED: usize = 100_000;
/// The storage key of a settled id is this prefix and the id.
pub const SETTLED_PREFIX: &str = "settled:";

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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

/// One settled id as stored: when it settled, and what it was charged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Stored {
    at: u64,
    #[serde(flatten)]
    charged: Charged,
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
    by_id: HashMap<String, Stored>,
    /// (when settled, id), oldest first.
    order: VecDeque<(u64, String)>,
    /// Ids whose charge storage does not have yet (new, or raised by a late report).
    unstored: HashSet<String>,
    /// Forgotten ids whose stored value is still to be deleted.
    forgotten: HashSet<String>,
    /// The stored ids were read back (`load`).
    loaded: bool,
}

fn storage_key(id: &str) -> String {
    format!("{SETTLED_PREFIX}{id}")
}

impl SettledIds {
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// Reads back the stored ids (`SETTLED_PREFIX` keys and their values), once: those past
    /// their time, and values that do not parse, are deleted with the next write. Memory is
    /// never older than storage: an id already known keeps what memory says.
    pub fn load(&mut self, stored: impl IntoIterator<Item = (String, String)>, now_ms: u64) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        for (key, value) in stored {
            let Some(id) = key.strip_prefix(SETTLED_PREFIX) else {
                continue;
            };
            match serde_json::from_str::<Stored>(&value) {
                Ok(s) if s.at.saturating_add(SETTLED_TTL_MS) > now_ms => {
                    if !self.by_id.contains_key(id) {
                        self.by_id.insert(id.to_owned(), s);
                    }
                }
                _ => {
                    self.forgotten.insert(id.to_owned());
                }
            }
        }
        let mut order: Vec<(u64, String)> = self
            .by_id
            .iter()
            .map(|(id, s)| (s.at, id.clone()))
            .collect();
        order.sort();
        self.order = order.into();
        self.forget_old(now_ms);
    }

    /// The puts and deletes that bring storage in line with memory, to go in the same write as
    /// the spend and roll-ups of the settles that made them.
    pub fn take_writes(&mut self) -> StorageWrites {
        let mut w = StorageWrites::default();
        let mut unstored: Vec<String> = std::mem::take(&mut self.unstored).into_iter().collect();
        unstored.sort();
        for id in unstored {
            if let Some(s) = self.by_id.get(&id) {
                if let Ok(v) = serde_json::to_string(s) {
                    w.puts.push((storage_key(&id), v));
                }
            }
        }
        let mut gone: Vec<String> = std::mem::take(&mut self.forgotten).into_iter().collect();
        gone.sort();
        w.deletes = gone.iter().map(|id| storage_key(id)).collect();
        w
    }

    fn forget_old(&mut self, now_ms: u64) {
        while let Some((at, _)) = self.order.front() {
            let too_many = self.order.len() > MAX_SETTLED;
            if !too_many && at.saturating_add(SETTLED_TTL_MS) > now_ms {
                break;
            }
            if let Some((_, id)) = self.order.pop_front() {
                self.by_id.remove(&id);
                self.unstored.remove(&id);
                self.forgotten.insert(id);
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
        let id = &record.request_id;
        let Some(stored) = self.by_id.get_mut(id) else {
            let at = now_ms;
            self.by_id.insert(id.clone(), Stored { at, charged: now });
            self.order.push_back((at, id.clone()));
            self.forgotten.remove(id);
            self.unstored.insert(id.clone());
            self.forget_old(now_ms);
            return Seen::New;
        };
        let before = &mut stored.charged;
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
        self.unstored.insert(id.clone());
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
            cache_savings_usd: None,
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

    /// What a ledger that starts again reads back: the values its writes left.
    fn restarted(stored: &mut Vec<(String, String)>, w: StorageWrites, now: u64) -> SettledIds {
        stored.retain(|(k, _)| !w.deletes.contains(k) && !w.puts.iter().any(|(p, _)| p == k));
        stored.extend(w.puts);
        let mut s = SettledIds::default();
        s.load(stored.clone(), now);
        s
    }

    #[test]
    fn a_settled_id_survives_a_restart_through_storage_and_is_still_settled_once() {
        let mut stored = Vec::new();
        let mut s = SettledIds::default();
        s.load(Vec::new(), 0);
        let r = rec("req_1", UsageSource::Reported, 10, 5, 0.1);
        let e = rec("req_2", UsageSource::Estimated, 10, 5, 0.1);
        assert_eq!(s.check(&r, 0), Seen::New);
        assert_eq!(s.check(&e, 0), Seen::New);
        assert_eq!(
            s.check(&rec("", UsageSource::Reported, 1, 1, 0.0), 0),
            Seen::New
        );
        let w = s.take_writes();
        assert_eq!(w.puts.len(), 2, "one small value per settled id: {w:?}");
        assert!(w
            .puts
            .iter()
            .all(|(k, v)| k.starts_with(SETTLED_PREFIX) && v.len() < 200));
        assert_eq!(s.take_writes(), StorageWrites::default(), "written once");

        let mut s = restarted(&mut stored, w, 1_000);
        assert_eq!(s.check(&r, 1_000), Seen::Duplicate);
        assert_eq!(s.check(&e, 1_000), Seen::Duplicate);
        // The estimate it was charged came back with it: a late report adds the difference.
        let late = rec("req_2", UsageSource::Reported, 12, 9, 0.15);
        assert!(matches!(s.check(&late, 1_001), Seen::Difference(..)));
        let w = s.take_writes();
        assert_eq!(w.puts.len(), 1, "the raised charge is stored");
        let mut s = restarted(&mut stored, w, 2_000);
        assert_eq!(s.check(&late, 2_000), Seen::Duplicate);
    }

    #[test]
    fn stored_settled_ids_past_their_time_are_deleted_not_read_back() {
        let mut stored = Vec::new();
        let mut s = SettledIds::default();
        s.load(Vec::new(), 0);
        s.check(&rec("old", UsageSource::Reported, 1, 1, 0.0), 0);
        s.check(&rec("new", UsageSource::Reported, 1, 1, 0.0), 60_000);
        let w = s.take_writes();
        stored.push(("settled:bad".to_owned(), "not json".to_owned()));
        let mut s = restarted(&mut stored, w, SETTLED_TTL_MS);
        assert_eq!(s.len(), 1, "only the id within its time is read back");
        let w = s.take_writes();
        assert_eq!(w.deletes, ["settled:bad", "settled:old"]);
        assert!(w.puts.is_empty());
        // A running ledger deletes an id it forgets, with its next write.
        s.check(
            &rec("x", UsageSource::Reported, 1, 1, 0.0),
            SETTLED_TTL_MS + 60_000,
        );
        let w = s.take_writes();
        assert_eq!(w.deletes, ["settled:new"]);
        assert_eq!(w.puts.len(), 1);
        let s = restarted(&mut stored, w, SETTLED_TTL_MS + 60_000);
        assert_eq!(s.len(), 1);
    }
}
