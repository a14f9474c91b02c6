//! A provider's keys' remaining quota, read from every answer's rate-limit headers
//! (`cascade::quota_headers`) whatever the key strategy.
//!
//! - A figure is one family's remaining count (requests, tokens, …) with its limit when the
//!   answer gave one. Where none is given, the largest remaining ever seen for that family stands
//!   in as its limit.
//! - A key's headroom is the smallest share left over the families it reports.
//! - A figure expires at its reported reset, or `UNRESET_MS` after it was seen: a key or model
//!   without traffic is never held back for ever by an old figure.
//! - Figures merge by time seen (the newer wins; the largest remaining is kept), so the same
//!   figure sent twice, or from two isolates, merges to the same state.

use super::MAX_SAFE_MS;
use crate::config::sort::sort_by;
use crate::config::{KeyId, SortedMap};
use serde::{Deserialize, Serialize};

/// How long a figure without a reset time holds.
pub const UNRESET_MS: u64 = 60_000;
/// How long an expired figure is kept for its largest remaining (the stand-in limit).
pub const FORGET_MS: u64 = 86_400_000;
/// `most_remaining`: a key at or below this share ranks after the keys without a figure.
pub const LOW_SHARE: f64 = 0.1;

/// Which count a figure is of; `All` is Together's unsuffixed `x-ratelimit-remaining`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Requests,
    Tokens,
    InputTokens,
    OutputTokens,
    All,
}

const FAMILIES: [Family; 5] = [
    Family::Requests,
    Family::Tokens,
    Family::InputTokens,
    Family::OutputTokens,
    Family::All,
];

/// One family's count of one key, as last seen. On the wire (the live stats between isolates and
/// the routing object) it is six numbers, `[family, remaining, limit, largest, seen, until]` with
/// `limit` 0 for none: a named struct's serde code would cost the module more than the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "[u64; 6]", try_from = "[u64; 6]")]
pub struct Figure {
    pub family: Family,
    pub remaining: u64,
    pub limit: Option<u64>,
    /// The largest remaining seen of this family: the limit where the answer gives none.
    pub largest: u64,
    /// Epoch ms when it was seen.
    pub seen: u64,
    /// Epoch ms when it expires: the reported reset, or `UNRESET_MS` after `seen`.
    pub until: u64,
}

impl From<Figure> for [u64; 6] {
    fn from(f: Figure) -> Self {
        let family = FAMILIES.iter().position(|x| *x == f.family).unwrap_or(0);
        let limit = f.limit.unwrap_or(0);
        [
            family as u64,
            f.remaining,
            limit,
            f.largest,
            f.seen,
            f.until,
        ]
    }
}

impl TryFrom<[u64; 6]> for Figure {
    type Error = &'static str;

    fn try_from(
        [family, remaining, limit, largest, seen, until]: [u64; 6],
    ) -> Result<Self, Self::Error> {
        let family = usize::try_from(family).ok().and_then(|i| FAMILIES.get(i));
        Ok(Self {
            family: *family.ok_or("unknown headroom family")?,
            remaining,
            limit: Some(limit).filter(|l| *l > 0),
            largest,
            seen,
            until,
        })
    }
}

impl Figure {
    /// A figure read at `now`; `reset_at` is the answer's reset time if it gave one.
    pub fn read(
        family: Family,
        remaining: u64,
        limit: Option<u64>,
        reset_at: Option<u64>,
        now: u64,
    ) -> Self {
        let remaining = remaining.min(MAX_SAFE_MS);
        Self {
            family,
            remaining,
            limit: limit.filter(|l| *l > 0).map(|l| l.min(MAX_SAFE_MS)),
            largest: remaining,
            seen: now,
            until: reset_at
                .unwrap_or_else(|| now.saturating_add(UNRESET_MS))
                .min(MAX_SAFE_MS),
        }
    }

    /// The share left (0 to 1): remaining over the limit, or over the stand-in limit.
    pub fn share(&self) -> f64 {
        match self.limit.unwrap_or(self.largest) {
            0 => 0.0,
            of => (self.remaining as f64 / of as f64).clamp(0.0, 1.0),
        }
    }
}

/// Key id → its figures, one per family.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headrooms(SortedMap<String, Vec<Figure>>);

impl Headrooms {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Takes in `figures` of `key`; whether anything changed.
    pub fn see(&mut self, key: &str, figures: &[Figure]) -> bool {
        let held = self.0.entry(key.to_owned()).or_default();
        let mut changed = false;
        for f in figures {
            match held.iter_mut().find(|h| h.family == f.family) {
                None => {
                    held.push(*f);
                    changed = true;
                }
                Some(h) => {
                    let largest = h.largest.max(f.largest);
                    let newer = if f.seen > h.seen { *f } else { *h };
                    let merged = Figure { largest, ..newer };
                    changed |= merged != *h;
                    *h = merged;
                }
            }
        }
        changed
    }

    /// Takes in every figure of `other`; whether anything changed.
    pub fn merge(&mut self, other: &Headrooms) -> bool {
        let mut changed = false;
        for (key, figures) in other.0.iter() {
            changed |= self.see(key, figures);
        }
        changed
    }

    /// Forgets figures expired `FORGET_MS` ago, and keys left without one.
    pub fn forget(&mut self, now: u64) {
        self.0.retain(|_, figures| {
            figures.retain(|f| f.until.saturating_add(FORGET_MS) > now);
            !figures.is_empty()
        });
    }

    /// `key`'s headroom at `now`: the smallest share over its live figures (`None`: none live).
    pub fn headroom(&self, key: &str, now: u64) -> Option<f64> {
        self.0
            .get(key)?
            .iter()
            .filter(|f| f.until > now)
            .map(Figure::share)
            .reduce(f64::min)
    }

    /// When `key`'s newest figure was seen (live or not).
    pub fn seen(&self, key: &str) -> Option<u64> {
        self.0.get(key)?.iter().map(|f| f.seen).max()
    }

    /// The best headroom among the keys with a live figure (`None`: no key has one).
    pub fn best(&self, now: u64) -> Option<f64> {
        self.0
            .keys()
            .filter_map(|k| self.headroom(k, now))
            .reduce(f64::max)
    }

    /// `most_remaining`: `keys` (in round-robin order) by headroom, most first; the keys without
    /// a figure after those above `LOW_SHARE` and before the rest. The sort is stable, so ties
    /// keep the round-robin order they came in.
    pub fn order(&self, keys: &[KeyId], now: u64) -> Vec<KeyId> {
        let mut ranked: Vec<(u8, f64, KeyId)> = keys
            .iter()
            .map(|k| match self.headroom(k.as_str(), now) {
                Some(h) if h > LOW_SHARE => (0, h, k.clone()),
                None => (1, 0.0, k.clone()),
                Some(h) => (2, h, k.clone()),
            })
            .collect();
        sort_by(&mut ranked, |a, b| {
            a.0.cmp(&b.0).then_with(|| b.1.total_cmp(&a.1))
        });
        ranked.into_iter().map(|(_, _, k)| k).collect()
    }
}

#[cfg(test)]
#[path = "headroom_tests.rs"]
mod tests;
