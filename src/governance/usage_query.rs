//! `GET /admin/v1/tenants/{t}/usage?from=&to=&group_by=`: the query, checked, and the answer's
//! shape. Roll-ups are per minute, so a minute is counted when it overlaps `[from, to)`.

use crate::config::ConfigError;
use crate::usage::rollup::UsageSums;
use serde::Serialize;

/// The usage API's answer: one row per group, and their total.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct UsageView {
    pub data: Vec<UsageGroupView>,
    pub total: SumsView,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct UsageGroupView {
    /// The model, provider, key id, end user or day; `null` for usage without one.
    pub group: Option<String>,
    #[serde(flatten)]
    pub sums: SumsView,
}

/// A group's sums as the API shows them: the stored sums, and the prompt cache's reads once
/// more as `cache_read_tokens`, beside `cache_write_tokens` (`cached_tokens` stays, for the
/// clients that read it).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct SumsView {
    #[serde(flatten)]
    pub sums: UsageSums,
    pub cache_read_tokens: u64,
}

impl From<UsageSums> for SumsView {
    fn from(sums: UsageSums) -> Self {
        Self {
            cache_read_tokens: sums.cached_tokens,
            sums,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Model,
    Provider,
    Key,
    User,
    Day,
}

impl GroupBy {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "model" => Self::Model,
            "provider" => Self::Provider,
            "key" => Self::Key,
            "user" => Self::User,
            "day" => Self::Day,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageQuery {
    pub from_ms: u64,
    pub to_ms: u64,
    pub group_by: GroupBy,
}

impl UsageQuery {
    /// The first minute whose roll-up can hold a request at or after `from`.
    pub fn first_minute(&self) -> u64 {
        self.from_ms - self.from_ms % 60_000
    }

    pub fn parse(query: Option<&str>) -> Result<Self, ConfigError> {
        let param = |name: &str| {
            query
                .unwrap_or("")
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v)
        };
        let ms = |name: &str| {
            param(name)
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v <= i64::MAX as u64 / 2)
                .ok_or_else(|| ConfigError::invalid(name, "must be epoch milliseconds"))
        };
        let (from_ms, to_ms) = (ms("from")?, ms("to")?);
        if from_ms >= to_ms {
            return Err(ConfigError::invalid("to", "must be later than 'from'"));
        }
        let group_by = param("group_by").and_then(GroupBy::parse).ok_or_else(|| {
            ConfigError::invalid("group_by", "must be model, provider, key, user or day")
        })?;
        Ok(Self {
            from_ms,
            to_ms,
            group_by,
        })
    }
}

/// `{"data": [{"group", ...sums}], "total": {...sums}}`, groups in the order given; an empty
/// group (no model served, no end user named) is `null`.
pub fn usage_answer(groups: &[(String, UsageSums)]) -> UsageView {
    let mut total = UsageSums::default();
    let data = groups
        .iter()
        .map(|(g, s)| {
            total.add(s);
            UsageGroupView {
                group: (!g.is_empty()).then(|| g.clone()),
                sums: (*s).into(),
            }
        })
        .collect();
    UsageView {
        data,
        total: total.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(q: &str) -> String {
        UsageQuery::parse(Some(q))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_usage_query_needs_from_before_to_and_a_known_group_by() {
        let q = UsageQuery::parse(Some("from=61000&to=120000&group_by=day")).unwrap();
        assert_eq!(
            (q.from_ms, q.to_ms, q.group_by),
            (61_000, 120_000, GroupBy::Day)
        );
        assert_eq!(q.first_minute(), 60_000);
        assert_eq!(
            err("to=5&group_by=model"),
            "from: must be epoch milliseconds"
        );
        assert_eq!(
            err("from=-1&to=5&group_by=model"),
            "from: must be epoch milliseconds"
        );
        assert_eq!(
            err("from=5&to=5&group_by=model"),
            "to: must be later than 'from'"
        );
        assert_eq!(
            err("from=1&to=5&group_by=week"),
            "group_by: must be model, provider, key, user or day"
        );
        assert!(UsageQuery::parse(None).is_err());
    }

    #[test]
    fn the_answer_lists_each_group_and_their_total_with_empty_groups_as_null() {
        let s = |r, c| UsageSums {
            requests: r,
            prompt_tokens: 5 * r,
            completion_tokens: 7 * r,
            cached_tokens: 0,
            cost_usd: c,
            cache_hits: 0,
            saved_usd: 0.0,
            cache_write_tokens: 2 * r,
            cache_savings_usd: c - 1.0,
        };
        let v = serde_json::to_value(usage_answer(&[
            ("m".into(), s(2, 0.5)),
            (String::new(), s(1, 0.0)),
        ]))
        .unwrap();
        assert_eq!(v["data"][0]["group"], "m");
        assert_eq!(v["data"][1]["group"], serde_json::Value::Null);
        assert_eq!(v["total"]["requests"], 3);
        assert_eq!(v["total"]["prompt_tokens"], 15);
        assert_eq!(v["total"]["cost_usd"], 0.5);
    }

    #[test]
    fn each_group_and_the_total_show_cache_reads_writes_and_net_savings_negative_included() {
        let s = |reads, writes, savings| UsageSums {
            cached_tokens: reads,
            cache_write_tokens: writes,
            cache_savings_usd: savings,
            ..UsageSums::default()
        };
        let v = serde_json::to_value(usage_answer(&[
            ("a".into(), s(1000, 100, 0.002)),
            ("b".into(), s(0, 300, -0.003)),
        ]))
        .unwrap();
        assert_eq!(v["data"][0]["cache_read_tokens"], 1000);
        assert_eq!(
            v["data"][0]["cached_tokens"], 1000,
            "kept for older clients"
        );
        assert_eq!(v["data"][1]["cache_write_tokens"], 300);
        assert_eq!(v["data"][1]["cache_savings_usd"], -0.003);
        assert_eq!(v["total"]["cache_read_tokens"], 1000);
        assert_eq!(v["total"]["cache_write_tokens"], 400);
        assert!((v["total"]["cache_savings_usd"].as_f64().unwrap() + 0.001).abs() < 1e-12);
    }
}
