//! Weighted spread: a chain position lists several members with weights,
//! and each request draws one of them among those that can serve now. The position still
//! contributes exactly one candidate (the spec).

use super::chain::Candidate;
use super::draw::{mix64, GOLDEN};
use super::observed::Observed;
use crate::config::{ModelId, PlatformOrder, SpreadMember};

/// The member a request draws: `draw` picks by weight among the eligible members `(index,
/// weight)`, so the same draw over the same eligible set always picks the same member. `None`
/// when nothing is eligible (or every weight is 0, which validation refuses).
pub fn draw_by_weight(eligible: &[(usize, u32)], draw: u64) -> Option<usize> {
    let total: u64 = eligible.iter().map(|&(_, w)| u64::from(w)).sum();
    if total == 0 {
        return None;
    }
    // Multiply-shift maps the 64 bits onto 0..total from the high bits, without a modulo's bias
    // toward small values beyond 2^-50 for any total a spread can have.
    let mut pick = ((u128::from(draw) * u128::from(total)) >> 64) as u64;
    for &(index, w) in eligible {
        if pick < u64::from(w) {
            return Some(index);
        }
        pick -= u64::from(w);
    }
    eligible.last().map(|&(i, _)| i)
}

/// The draw of the spread at chain position `position`: the request's bits, mixed with the
/// position (splitmix64), so two spreads of one chain do not draw in lockstep.
pub fn position_draw(draw: u64, position: usize) -> u64 {
    mix64(draw.wrapping_add((position as u64 + 1).wrapping_mul(GOLDEN)))
}

/// What a spread position draws by besides the weights: the remembered model (`preferred`,
/// prompt-cache affinity) and the rule's `prefer_platforms`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Preference<'a> {
    pub preferred: Option<&'a ModelId>,
    pub platforms: Option<&'a PlatformOrder>,
}

/// The one candidate a spread position contributes. Members that resolve to a candidate and
/// whose breaker is not known to be open can serve. Without `prefer_platforms`: the remembered
/// model if it can serve, else one drawn by weight among those that can. With it, a member is
/// eligible when it can serve and its provider's keys are not all parked: the remembered model
/// is kept while eligible, else the draw is among the eligible members on the first listed
/// platform that has one (unlisted platforms last); with none eligible, among all that can
/// serve, as without the field (a parked pool is still tried). `Err` says why none can serve.
pub fn pick<'c>(
    members: &[SpreadMember],
    resolve: impl Fn(&str) -> Result<Candidate<'c>, String>,
    observed: &dyn Observed,
    draw: u64,
    by: Preference<'_>,
) -> Result<Candidate<'c>, String> {
    let mut usable: Vec<(Candidate<'c>, u32)> = Vec::with_capacity(members.len());
    let mut reasons = Vec::new();
    for m in members {
        match resolve(m.model.as_str()) {
            Ok(c) if breaker_open(observed, &c) => {
                reasons.push(format!("'{}' has its breaker open", m.model));
            }
            Ok(c) => usable.push((c, m.weight)),
            Err(why) => reasons.push(why),
        }
    }
    let eligible = |c: &Candidate<'_>| by.platforms.is_none() || !all_keys_parked(observed, c);
    let remembered = by
        .preferred
        .and_then(|p| usable.iter().find(|(c, _)| c.model.id == *p));
    if let Some(c) = remembered.filter(|(c, _)| eligible(c)) {
        return Ok(c.0);
    }
    // Every member ranks alike without `prefer_platforms`: no platform is read.
    let rank = |c: &Candidate<'_>| match by.platforms {
        Some(order) => order.rank(c.provider.platform()),
        None => 0,
    };
    let first = usable
        .iter()
        .filter(|(c, _)| eligible(c))
        .map(|(c, _)| rank(c))
        .min();
    let drawn: Vec<(usize, u32)> = usable
        .iter()
        .enumerate()
        .filter(|(_, (c, _))| first.is_none_or(|f| eligible(c) && rank(c) == f))
        .map(|(i, u)| (i, u.1))
        .collect();
    draw_by_weight(&drawn, draw)
        .and_then(|i| usable.get(i))
        .map(|u| u.0)
        .ok_or_else(|| {
            format!(
                "spread has no member that can serve ({})",
                reasons.join("; ")
            )
        })
}

/// Every key of the candidate's provider is parked now, as this isolate last saw it.
fn all_keys_parked(observed: &dyn Observed, c: &Candidate<'_>) -> bool {
    observed
        .health(&c.model.provider, &c.model.id)
        .is_some_and(|h| h.parked_share >= 1.0)
}

pub fn breaker_open(observed: &dyn Observed, c: &Candidate<'_>) -> bool {
    observed
        .health(&c.model.provider, &c.model.id)
        .is_some_and(|h| h.breaker_open)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(eligible: &[(usize, u32)], n: u64) -> Vec<u64> {
        let mut out = vec![0; eligible.iter().map(|e| e.0 + 1).max().unwrap_or(0)];
        for i in 0..n {
            let draw = position_draw(i, 0);
            out[draw_by_weight(eligible, draw).unwrap()] += 1;
        }
        out
    }

    #[test]
    fn a_member_is_drawn_in_proportion_to_its_weight() {
        let c = counts(&[(0, 3), (1, 1)], 40_000);
        assert!((29_000..31_000).contains(&c[0]), "{c:?}");
        let c = counts(&[(0, 1), (1, 1), (2, 2)], 40_000);
        assert!(
            (9_000..11_000).contains(&c[1]) && (19_000..21_000).contains(&c[2]),
            "{c:?}"
        );
    }

    #[test]
    fn the_same_draw_over_the_same_members_draws_the_same_member() {
        let members = [(0, 5), (1, 2), (2, 9)];
        for d in [0, 1, u64::MAX / 3, u64::MAX] {
            assert_eq!(draw_by_weight(&members, d), draw_by_weight(&members, d));
        }
        assert_eq!(draw_by_weight(&members, 0), Some(0));
        assert_eq!(draw_by_weight(&members, u64::MAX), Some(2));
    }

    #[test]
    fn an_ineligible_member_is_never_drawn_and_no_eligible_member_draws_nothing() {
        let c = counts(&[(1, 1)], 1_000);
        assert_eq!(c, vec![0, 1_000]);
        assert_eq!(draw_by_weight(&[], 7), None);
    }

    #[test]
    fn two_positions_of_one_request_draw_independently() {
        let same = (0..1_000u64)
            .filter(|&d| {
                let a = draw_by_weight(&[(0, 1), (1, 1)], position_draw(d, 0));
                let b = draw_by_weight(&[(0, 1), (1, 1)], position_draw(d, 1));
                a == b
            })
            .count();
        assert!((400..600).contains(&same), "{same}");
    }
}
