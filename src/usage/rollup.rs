//! Per-minute usage roll-ups: what the ledger accumulates from finished requests and flushes to
//! D1 in one batch, so D1 sees one upsert per (minute, model, provider, key, end user) group and
//! never one write per request.

pub use crate::api::usage_sums::UsageSums;
use crate::config::SortedMap;
use crate::usage::{Outcome, UsageRecord};
use serde::{Deserialize, Serialize};

/// One roll-up row's identity. An absent model, provider or end user is the empty string
/// (D1 keys cannot hold NULL usefully); the usage API turns it back into `null`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RollupKey {
    /// The first millisecond of the UTC minute.
    pub minute: u64,
    pub model: String,
    pub provider: String,
    pub key_id: String,
    pub end_user: String,
}

impl RollupKey {
    /// The row a record rolls up into.
    pub fn of(record: &UsageRecord) -> Self {
        Self {
            minute: record.at_ms - record.at_ms % 60_000,
            model: record
                .served_model
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            provider: record
                .provider
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            key_id: record.key_id.clone(),
            end_user: record.end_user.clone().unwrap_or_default(),
        }
    }
}

impl UsageSums {
    /// A record standing for `requests` requests (folded records; 0 for a late difference).
    pub fn counted(record: &UsageRecord, requests: u64) -> Self {
        Self {
            requests,
            cache_hits: if record.cache_hit { requests } else { 0 },
            ..Self::of(record)
        }
    }

    /// One request's contribution: an exhausted request counts with zero cost, and unknown
    /// usage adds no tokens.
    pub fn of(record: &UsageRecord) -> Self {
        let tokens = record.tokens.unwrap_or_default();
        let cost = match record.outcome {
            Outcome::Served => record.cost_usd.filter(|c| c.is_finite() && *c > 0.0),
            Outcome::Exhausted => None,
        };
        Self {
            requests: 1,
            prompt_tokens: tokens.prompt,
            completion_tokens: tokens.completion,
            cached_tokens: tokens.cached,
            cost_usd: cost.unwrap_or(0.0),
            cache_hits: u64::from(record.cache_hit),
            saved_usd: record
                .saved_usd
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(0.0),
            cache_write_tokens: tokens.cache_writes(),
            // Savings may be negative (writes never read); an exhausted request has none.
            cache_savings_usd: match record.outcome {
                Outcome::Served => record.cache_savings_usd.filter(|s| s.is_finite()),
                Outcome::Exhausted => None,
            }
            .unwrap_or(0.0),
        }
    }
}

/// One group of the usage API's read as D1 answers it: the group and each column's sum, a
/// number or `null` (D1 numbers are doubles; a sum over no rows is `null`). Counts read as 0
/// when absent or negative; money keeps its sign (cache savings may be negative).
#[derive(Debug, Default, Deserialize)]
pub struct SummedRow {
    grp: Option<String>,
    requests: Option<f64>,
    prompt_tokens: Option<f64>,
    completion_tokens: Option<f64>,
    cached_tokens: Option<f64>,
    cost_usd: Option<f64>,
    cache_hits: Option<f64>,
    saved_usd: Option<f64>,
    cache_write_tokens: Option<f64>,
    cache_savings_usd: Option<f64>,
}

impl SummedRow {
    /// The group's name (empty: none) and its sums.
    pub fn into_group(self) -> (String, UsageSums) {
        let n = |v: Option<f64>| v.unwrap_or(0.0).max(0.0) as u64;
        let usd = |v: Option<f64>| v.filter(|v| v.is_finite()).unwrap_or(0.0);
        let sums = UsageSums {
            requests: n(self.requests),
            prompt_tokens: n(self.prompt_tokens),
            completion_tokens: n(self.completion_tokens),
            cached_tokens: n(self.cached_tokens),
            cost_usd: usd(self.cost_usd),
            cache_hits: n(self.cache_hits),
            saved_usd: usd(self.saved_usd),
            cache_write_tokens: n(self.cache_write_tokens),
            cache_savings_usd: usd(self.cache_savings_usd),
        };
        (self.grp.unwrap_or_default(), sums)
    }
}

/// Roll-ups not yet in D1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingRollups {
    rows: SortedMap<String, (RollupKey, UsageSums)>,
}

impl PendingRollups {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn add(&mut self, record: &UsageRecord) {
        self.add_counted(record, 1);
    }

    /// A record standing for `requests` requests: several folded into one by an isolate that
    /// could not hand them over, or 0 for a late report's difference (its request is counted).
    pub fn add_counted(&mut self, record: &UsageRecord, requests: u64) {
        self.merge(RollupKey::of(record), UsageSums::counted(record, requests));
    }

    fn merge(&mut self, key: RollupKey, sums: UsageSums) {
        // Stored as a JSON map: its keys must be strings.
        let id = serde_json::to_string(&key).unwrap_or_default();
        self.rows
            .entry(id)
            .or_insert_with(|| (key, UsageSums::default()))
            .1
            .add(&sums);
    }

    /// Takes at most `max` rows out for one flush, in key order.
    pub fn take(&mut self, max: usize) -> Vec<(RollupKey, UsageSums)> {
        let mut taken = Vec::with_capacity(max.min(self.rows.len()));
        let mut rest = std::mem::take(&mut self.rows).into_values();
        taken.extend(rest.by_ref().take(max));
        for (k, s) in rest {
            self.merge(k, s);
        }
        crate::config::sort::sort_by(&mut taken, |a, b| a.0.cmp(&b.0));
        taken
    }

    /// Every row, consuming the roll-ups (the legacy value folded into the row store).
    pub fn into_rows(self) -> impl Iterator<Item = (RollupKey, UsageSums)> {
        self.rows.into_values()
    }

    /// Puts rows back after a failed flush, added to whatever arrived meanwhile.
    pub fn restore(&mut self, rows: Vec<(RollupKey, UsageSums)>) {
        for (k, s) in rows {
            self.merge(k, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ModelId, ProviderName, TenantId};
    use crate::usage::TokenCounts;

    fn record(at_ms: u64, model: Option<&str>, cost: Option<f64>, outcome: Outcome) -> UsageRecord {
        UsageRecord {
            at_ms,
            request_id: String::new(),
            tenant: TenantId::parse("t").unwrap(),
            key_id: "ck_1".into(),
            end_user: None,
            requested: "fast".into(),
            served_model: model.map(|m| ModelId::parse(m).unwrap()),
            provider: model.map(|_| ProviderName::parse("p").unwrap()),
            tokens: Some(TokenCounts::new(5, 7, 2)),
            cost_usd: cost,
            usage_source: Default::default(),
            generation: 0,
            outcome,
            cache_hit: false,
            saved_usd: None,
            cache_savings_usd: None,
        }
    }

    #[test]
    fn requests_of_one_minute_and_group_add_up_into_one_row() {
        let mut p = PendingRollups::default();
        p.add(&record(120_500, Some("m"), Some(0.5), Outcome::Served));
        p.add(&record(179_999, Some("m"), Some(0.25), Outcome::Served));
        p.add(&record(180_000, Some("m"), Some(1.0), Outcome::Served));
        let rows = p.take(10);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0.minute, 120_000);
        assert_eq!(rows[0].1.requests, 2);
        assert_eq!(rows[0].1.prompt_tokens, 10);
        assert_eq!(rows[0].1.cost_usd, 0.75);
        assert!(p.is_empty());
    }

    #[test]
    fn a_flush_takes_at_most_its_share_and_leaves_the_rest_pending() {
        let mut p = PendingRollups::default();
        for minute in 0..5 {
            p.add(&record(
                minute * 60_000,
                Some("m"),
                Some(1.0),
                Outcome::Served,
            ));
        }
        assert_eq!(p.take(3).len(), 3);
        assert_eq!(p.len(), 2);
        assert_eq!(p.take(3).len(), 2);
        assert!(p.is_empty());
    }

    #[test]
    fn an_exhausted_request_counts_as_a_request_with_zero_cost() {
        let s = UsageSums::of(&record(0, None, Some(3.0), Outcome::Exhausted));
        assert_eq!((s.requests, s.cost_usd), (1, 0.0));
    }

    #[test]
    fn rows_put_back_after_a_failed_flush_add_to_what_arrived_meanwhile() {
        let mut p = PendingRollups::default();
        p.add(&record(0, Some("m"), Some(1.0), Outcome::Served));
        let taken = p.take(10);
        p.add(&record(10, Some("m"), Some(2.0), Outcome::Served));
        p.restore(taken);
        let rows = p.take(10);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].1.requests, rows[0].1.cost_usd), (2, 3.0));
    }

    #[test]
    fn cache_writes_and_net_savings_roll_up_and_negative_savings_are_kept() {
        let mut saving = record(0, Some("m"), Some(1.0), Outcome::Served);
        saving.tokens = Some(TokenCounts::new(1_310, 4, 1_000).with_writes(100, 200));
        saving.cache_savings_usd = Some(0.002);
        let mut losing = saving.clone();
        losing.tokens = Some(TokenCounts::new(1_000, 4, 0).with_writes(1_000, 0));
        losing.cache_savings_usd = Some(-0.003);
        let mut p = PendingRollups::default();
        p.add(&saving);
        p.add(&losing);
        let rows = p.take(10);
        let sums = rows[0].1;
        assert_eq!(
            (sums.cached_tokens, sums.cache_write_tokens),
            (1_000, 1_300)
        );
        assert!((sums.cache_savings_usd + 0.001).abs() < 1e-12, "{sums:?}");
        let mut exhausted = saving;
        exhausted.outcome = Outcome::Exhausted;
        assert_eq!(UsageSums::of(&exhausted).cache_savings_usd, 0.0);
    }

    #[test]
    fn a_summed_row_reads_nulls_as_zero_and_keeps_the_sign_of_savings() {
        let row: SummedRow = serde_json::from_str(
            r#"{"grp":"m","requests":2,"prompt_tokens":null,"cached_tokens":1000,
                "cache_write_tokens":1300,"cache_savings_usd":-0.001}"#,
        )
        .unwrap();
        let (group, sums) = row.into_group();
        assert_eq!(group, "m");
        assert_eq!((sums.requests, sums.prompt_tokens), (2, 0));
        assert_eq!(
            (sums.cached_tokens, sums.cache_write_tokens),
            (1_000, 1_300)
        );
        assert_eq!(sums.cache_savings_usd, -0.001);
        let (group, sums) = serde_json::from_str::<SummedRow>(r#"{"grp":null}"#)
            .unwrap()
            .into_group();
        assert_eq!((group.as_str(), sums), ("", UsageSums::default()));
    }

    #[test]
    fn sums_stored_before_cache_writes_read_as_none() {
        let old: UsageSums = serde_json::from_str(
            r#"{"requests":1,"prompt_tokens":5,"completion_tokens":7,"cached_tokens":2,"cost_usd":0.5}"#,
        )
        .unwrap();
        assert_eq!((old.cache_write_tokens, old.cache_savings_usd), (0, 0.0));
    }

    #[test]
    fn cache_hits_and_their_savings_roll_up_per_group_and_folded_hits_count_each_request() {
        let mut hit = record(60_000, Some("m"), Some(0.0), Outcome::Served);
        hit.tokens = None;
        hit.cache_hit = true;
        hit.saved_usd = Some(0.5);
        let mut p = PendingRollups::default();
        p.add(&record(60_000, Some("m"), Some(1.0), Outcome::Served));
        p.add(&hit);
        p.add_counted(&hit, 3);
        let rows: Vec<_> = p.rows.values().collect();
        assert_eq!(rows.len(), 1);
        let sums = rows[0].1;
        assert_eq!((sums.requests, sums.cache_hits), (5, 4));
        assert!((sums.saved_usd - 1.0).abs() < 1e-12 && (sums.cost_usd - 1.0).abs() < 1e-12);
    }
}
