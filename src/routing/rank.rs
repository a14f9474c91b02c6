//! Ranking by what was measured: the models that passed an alias's constraints (or every
//! model an `auto` name may use), ordered by one axis or by a weighted score, with a small share
//! of requests exploring a model whose stats went stale.
//!
//! The order is a pure function of the models, their measured health, `now_ms` and the request's
//! draw: the same snapshot and draw always give the same order, and ties break on model id.
//!
//! - An open breaker sorts after every closed one (the cascade would skip it with no call).
//! - With `prefer_newest_version`, dated models newest first, undated ones after.
//! - Then the constraint order (`tier`: the alias's provider preference), as the spec says.
//! - Then the axis: latency and ttfb ascending, success descending, price ascending (the
//!   effective price, `CatalogModel::effective_price`; descending and by list price for
//!   `best`/`auto:smart`), score descending. A model with no value on the axis ranks as if
//!   it had the best value of the set there, and before the measured model holding it, so it
//!   gets tried (a tie broken on id alone could leave it behind for ever).
//! - Then the alias's `prefer_platforms`, where it has one.
//! - Then model id.
//!
//! In the `score` rank and the `auto` strategies (`headroom_threshold` set), a model whose best
//! key's headroom is below the tenant's threshold has its score multiplied by
//! `0.5 + 0.5 × headroom / threshold` (`headroom_factor`); an `auto` strategy on one axis then
//! sorts by its normalised value times that factor, which orders as the axis does when no factor
//! applies.

use super::draw::{mix64, GOLDEN};
use super::observed::ModelHealth;
use super::versions::{newest_first, VersionDate};
use crate::config::alias::{RankBy, Weights};
use crate::config::sort::sort_by;
use crate::config::CatalogModel;
use std::cmp::Reverse;

/// A model whose newest outcome is at least this old has stale stats: exploration may try it.
pub const STALE_MS: u64 = 60_000;
/// Score multiplier when more than `PARKED_ABOVE` of the provider's keys are parked (a live
/// rate-limit penalty).
pub const PARKED_FACTOR: f64 = 0.5;
pub const PARKED_ABOVE: f64 = 0.5;
/// Score multiplier when the provider has used `RPM_FROM` or more of its `rpm` this minute.
pub const RPM_FACTOR: f64 = 0.7;
pub const RPM_FROM: f64 = 0.8;
/// Added to both sides of a latency ratio (ms) and a price ratio ($/Mtok), so a zero is no
/// division by zero and a free model is not infinitely better.
const LATENCY_FLOOR_MS: f64 = 1.0;
const PRICE_FLOOR: f64 = 0.01;

/// How one name ranks its models.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    pub rank_by: RankBy,
    /// Price descending (`cost_tier: best`, `auto:smart`), else ascending.
    pub price_descending: bool,
    pub weights: Weights,
    /// Share of requests (0 to 1) that put a stale model first (`exploration_share`).
    pub exploration_share: f64,
    /// Dated models newest first, ahead of the axis (`prefer_newest_version`).
    pub prefer_newest: bool,
    /// The tenant's `headroom_threshold` where the headroom factor applies (the `score` rank
    /// and the `auto` strategies); `None` elsewhere.
    pub headroom_threshold: Option<f64>,
}

/// One model to rank: its constraint tier (lower first) and what was measured of it (`None`:
/// nothing yet).
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'c> {
    pub model: &'c CatalogModel,
    pub tier: usize,
    /// Where its platform sorts in the alias's `prefer_platforms` (0 for every model without).
    pub platform: usize,
    pub health: Option<ModelHealth>,
}

impl Ranked<'_> {
    fn breaker_open(&self) -> bool {
        self.health.is_some_and(|h| h.breaker_open)
    }

    fn value(&self, axis: Axis) -> Option<f64> {
        match axis {
            // A cost: the input priced at the measured cached share (the list price until then).
            Axis::Price => Some(
                self.model
                    .effective_price(self.health.and_then(|h| h.cached_share)),
            ),
            Axis::Latency => self.health.and_then(|h| h.latency_ms),
            Axis::Ttfb => self.health.and_then(|h| h.ttfb_ms),
            Axis::Success => self.health.and_then(|h| h.success_rate),
        }
    }

    fn is_stale(&self, now_ms: u64) -> bool {
        self.health
            .and_then(|h| h.last_outcome_ms)
            .is_some_and(|t| now_ms.saturating_sub(t) >= STALE_MS)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Price,
    Latency,
    Ttfb,
    Success,
}

impl Axis {
    fn higher_is_better(self) -> bool {
        self == Self::Success
    }

    /// The best value of the set on this axis, among the models that have one.
    fn best(self, set: &[Ranked<'_>]) -> Option<f64> {
        let values = set.iter().filter_map(|r| r.value(self));
        if self.higher_is_better() {
            values.reduce(f64::max)
        } else {
            values.reduce(f64::min)
        }
    }

    /// 1 for the best value of the set (and for a model with none), less the worse it is:
    /// `x / best` where higher is better, `(best + floor) / (x + floor)` where lower is.
    fn normalised(self, value: Option<f64>, best: Option<f64>) -> f64 {
        let (Some(x), Some(best)) = (value, best) else {
            return 1.0;
        };
        let ratio = match self {
            Self::Success if best > 0.0 => x / best,
            Self::Success => 1.0,
            Self::Latency | Self::Ttfb => (best + LATENCY_FLOOR_MS) / (x + LATENCY_FLOOR_MS),
            Self::Price => (best + PRICE_FLOOR) / (x + PRICE_FLOOR),
        };
        ratio.clamp(0.0, 1.0)
    }
}

/// The product of the multipliers that hold a model back in a score (1 when none applies).
pub fn penalty(health: Option<ModelHealth>) -> f64 {
    let Some(h) = health else { return 1.0 };
    let parked = if h.parked_share > PARKED_ABOVE {
        PARKED_FACTOR
    } else {
        1.0
    };
    let near_rpm = if h.rpm_share >= RPM_FROM {
        RPM_FACTOR
    } else {
        1.0
    };
    parked * near_rpm
}

/// The multiplier a model's scarce quota puts on its score: `0.5 + 0.5 × headroom / threshold`
/// while its best key's headroom is below `threshold`, else 1 (also when no key has a figure).
pub fn headroom_factor(health: Option<ModelHealth>, threshold: Option<f64>) -> f64 {
    match (health.and_then(|h| h.headroom), threshold) {
        (Some(h), Some(t)) if t > 0.0 && h < t => 0.5 + 0.5 * h / t,
        _ => 1.0,
    }
}

/// The weighted mean of the normalised axes, times `penalty` and the headroom factor (0 to 1,
/// higher is better).
fn score(r: &Ranked<'_>, best: &[(Axis, Option<f64>, f64)], threshold: Option<f64>) -> f64 {
    let total: f64 = best.iter().map(|(_, _, w)| w).sum();
    let factor = headroom_factor(r.health, threshold);
    if total <= 0.0 {
        return penalty(r.health) * factor;
    }
    let blended: f64 = best
        .iter()
        .map(|&(axis, best, weight)| weight * axis.normalised(r.value(axis), best))
        .sum::<f64>()
        / total;
    blended * penalty(r.health) * factor
}

/// Each model's score in its set (0 to 1, higher is better), as `explain` shows it: the blended
/// score for `rank_by: score`, else the model's normalised value on the name's one axis, times
/// `penalty` either way. The order itself is `rank`'s (tiers, open breakers, exploration).
pub fn scores(set: &[Ranked<'_>], how: &Ranking) -> Vec<f64> {
    let factor = |r: &Ranked<'_>| headroom_factor(r.health, how.headroom_threshold);
    let axis = match how.rank_by {
        RankBy::Score => None,
        RankBy::Price if how.price_descending => {
            let top = set.iter().map(|r| r.model.price()).fold(0.0, f64::max);
            return set
                .iter()
                .map(|r| match top {
                    t if t > 0.0 => r.model.price() / t * penalty(r.health) * factor(r),
                    _ => penalty(r.health) * factor(r),
                })
                .collect();
        }
        RankBy::Price => Some(Axis::Price),
        RankBy::Latency => Some(Axis::Latency),
        RankBy::Ttfb => Some(Axis::Ttfb),
        RankBy::Success => Some(Axis::Success),
    };
    let w = how.weights;
    let weighted = match axis {
        Some(a) => vec![(a, 1.0)],
        None => vec![
            (Axis::Success, w.success),
            (Axis::Latency, w.latency),
            (Axis::Ttfb, w.ttfb),
            (Axis::Price, w.price),
        ],
    };
    let axes: Vec<(Axis, Option<f64>, f64)> = weighted
        .into_iter()
        .map(|(a, weight)| (a, a.best(set), weight))
        .collect();
    let threshold = how.headroom_threshold;
    match axis {
        Some(_) => set
            .iter()
            .map(|r| score(r, &axes, None) * factor(r))
            .collect(),
        None => set.iter().map(|r| score(r, &axes, threshold)).collect(),
    }
}

/// What a model sorts by on the name's axis (lower first), and whether it was measured there.
fn sort_keys(set: &[Ranked<'_>], how: &Ranking) -> Vec<(f64, bool)> {
    let single = |axis: Axis| {
        let best = axis.best(set);
        set.iter()
            .map(|r| {
                let value = r.value(axis);
                let key = match how.headroom_threshold {
                    Some(t) => -axis.normalised(value, best) * headroom_factor(r.health, Some(t)),
                    None => {
                        let v = value.or(best).unwrap_or(0.0);
                        if axis.higher_is_better() {
                            -v
                        } else {
                            v
                        }
                    }
                };
                (key, value.is_some())
            })
            .collect()
    };
    match how.rank_by {
        RankBy::Price if how.price_descending => {
            let top = set.iter().map(|r| r.model.price()).fold(0.0, f64::max);
            let factor = |r: &Ranked<'_>| headroom_factor(r.health, how.headroom_threshold);
            set.iter()
                .map(|r| match top {
                    t if t > 0.0 && how.headroom_threshold.is_some() => {
                        (-(r.model.price() / t) * factor(r), true)
                    }
                    _ => (-r.model.price(), true),
                })
                .collect()
        }
        RankBy::Price => single(Axis::Price),
        RankBy::Latency => single(Axis::Latency),
        RankBy::Ttfb => single(Axis::Ttfb),
        RankBy::Success => single(Axis::Success),
        RankBy::Score => {
            let w = how.weights;
            let axes = [
                (Axis::Success, w.success),
                (Axis::Latency, w.latency),
                (Axis::Ttfb, w.ttfb),
                (Axis::Price, w.price),
            ]
            .map(|(axis, weight)| (axis, axis.best(set), weight));
            set.iter()
                .map(|r| {
                    let measured = axes
                        .iter()
                        .any(|&(a, _, w)| w > 0.0 && a != Axis::Price && r.value(a).is_some());
                    (-score(r, &axes, how.headroom_threshold), measured)
                })
                .collect()
        }
    }
}

/// The set in ranked order, exploration applied (see the module's rules). Equal keys put an
/// unmeasured model before a measured one (it ranks as the best, and so gets tried), then
/// break on model id.
pub fn rank<'c>(
    set: Vec<Ranked<'c>>,
    how: &Ranking,
    now_ms: u64,
    draw: u64,
) -> Vec<&'c CatalogModel> {
    let keys = sort_keys(&set, how);
    let mut order: Vec<(Ranked<'c>, f64)> = Vec::with_capacity(set.len());
    let mut measured: Vec<bool> = Vec::with_capacity(set.len());
    for (r, (key, m)) in set.into_iter().zip(keys) {
        order.push((r, key));
        measured.push(m);
    }
    let newest: Vec<Reverse<Option<VersionDate>>> =
        order.iter().map(|(r, _)| recency(r, how)).collect();
    let mut idx: Vec<usize> = (0..order.len()).collect();
    sort_by(&mut idx, |&i, &j| {
        let ((a, ka), (b, kb)) = (&order[i], &order[j]);
        a.breaker_open()
            .cmp(&b.breaker_open())
            .then(newest[i].cmp(&newest[j]))
            .then(a.tier.cmp(&b.tier))
            .then(ka.total_cmp(kb))
            .then(measured[i].cmp(&measured[j]))
            .then(a.platform.cmp(&b.platform))
            .then_with(|| a.model.id.cmp(&b.model.id))
    });
    let mut order: Vec<(Ranked<'c>, f64)> = idx.into_iter().map(|i| order[i]).collect();
    if let Some(i) = explored(&order, how, now_ms, draw) {
        let chosen = order.remove(i);
        order.insert(0, chosen);
    }
    order.into_iter().map(|(r, _)| r.model).collect()
}

/// `prefer_newest_version`'s key of a model (lower first); every model alike without it.
fn recency(r: &Ranked<'_>, how: &Ranking) -> Reverse<Option<VersionDate>> {
    if how.prefer_newest {
        newest_first(r.model.id.as_str())
    } else {
        Reverse(None)
    }
}

/// Which position exploration puts first on this request, if it explores: among the stale
/// models of the leading tier (and, with `prefer_newest`, the leading date) whose breaker is
/// closed, in model-id order, one picked by the draw. Price ranking never explores: it reads no
/// stats but the cached share, which serving a model measures anyway (the order stays exact).
fn explored(order: &[(Ranked<'_>, f64)], how: &Ranking, now_ms: u64, draw: u64) -> Option<usize> {
    if how.rank_by == RankBy::Price || !explores(draw, how.exploration_share) {
        return None;
    }
    let leader = order.first().filter(|(r, _)| !r.breaker_open())?.0;
    let (lead, lead_date) = (leader.tier, recency(&leader, how));
    let mut stale: Vec<(usize, &CatalogModel)> = order
        .iter()
        .enumerate()
        .filter(|(_, (r, _))| r.tier == lead && recency(r, how) == lead_date)
        .filter(|(_, (r, _))| !r.breaker_open() && r.is_stale(now_ms))
        .map(|(i, (r, _))| (i, r.model))
        .collect();
    sort_by(&mut stale, |a, b| a.1.id.cmp(&b.1.id));
    let n = u64::try_from(stale.len()).ok().filter(|n| *n > 0)?;
    let pick = usize::try_from(mix(draw) % n).ok()?;
    stale.get(pick).map(|(i, _)| *i)
}

/// Whether this draw falls in the exploring share: its top 53 bits as a fraction of 1.
pub fn explores(draw: u64, share: f64) -> bool {
    let fraction = (draw >> 11) as f64 / (1u64 << 53) as f64;
    fraction < share
}

/// The draw's other use, decorrelated from `explores`.
fn mix(draw: u64) -> u64 {
    mix64(draw ^ GOLDEN)
}

impl Default for Ranking {
    fn default() -> Self {
        Self {
            rank_by: RankBy::Price,
            price_descending: false,
            weights: Weights::default(),
            exploration_share: 0.0,
            prefer_newest: false,
            headroom_threshold: None,
        }
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "rank_headroom_tests.rs"]
mod headroom_tests;
