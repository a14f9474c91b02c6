//! Chain presets: the order `smartest`, `fastest` or `budget` rewrites a rule's chain positions
//! in. Only the order changes: no position is added or removed, and each keeps what it says.
//!
//! Each position sorts by its current resolution: a model is itself, an alias the model it
//! resolves to now, a spread its highest-weight member (the first listed among equals).
//! - `smartest`: `quality_rank` ascending where set; unranked positions follow, by list price
//!   (input + output) descending.
//! - `fastest`: measured `latency_ms` ascending; positions without stats follow.
//! - `budget`: list price ascending.
//!
//! Ties keep their current order, and a position that resolves to no model today sorts after
//! every one that does, in its current place among them.

use super::chain::RouteInput;
use super::resolve::{alias_model, lookup, Target};
use crate::config::chain_preset::ChainPreset;
use crate::config::sort::sort_by;
use crate::config::{CatalogModel, Chain, ChainEntry, RouteName, TenantConfig};

/// What a position sorts by: the model it resolves to now, and that model's measured latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position<'c> {
    pub model: Option<&'c CatalogModel>,
    pub latency_ms: Option<f64>,
}

/// The name a position sorts by: itself, or a spread's highest-weight member.
pub fn leading_name(entry: &ChainEntry) -> Option<&RouteName> {
    match entry {
        ChainEntry::Name(n) => Some(n),
        ChainEntry::Spread { spread } => spread
            .iter()
            .rev()
            .max_by_key(|m| m.weight)
            .map(|m| &m.model),
    }
}

/// The model `entry` routes to now, and what was measured of it in `input`.
pub fn position<'c>(
    cfg: &'c TenantConfig,
    entry: &ChainEntry,
    input: &RouteInput<'_>,
) -> Position<'c> {
    let model = leading_name(entry).and_then(|name| match lookup(cfg, name.as_str())? {
        Target::Model(m) => Some(m),
        Target::Alias(n, a) => alias_model(cfg, n, a, input),
    });
    let latency_ms = model
        .and_then(|m| input.observed.health(&m.provider, &m.id))
        .and_then(|h| h.latency_ms);
    Position { model, latency_ms }
}

/// A position's key under `preset`: its group (lower first), then its value (lower first).
fn key(p: &Position<'_>, preset: ChainPreset) -> (u8, f64) {
    let Some(m) = p.model else {
        return (3, 0.0);
    };
    match preset {
        ChainPreset::Smartest => match m.quality_rank {
            Some(rank) => (0, f64::from(rank)),
            None => (1, -m.price()),
        },
        ChainPreset::Fastest => match p.latency_ms {
            Some(ms) => (0, ms),
            None => (1, 0.0),
        },
        ChainPreset::Budget => (0, m.price()),
    }
}

/// The positions' indices in `preset`'s order, ties in their current order.
pub fn preset_order(positions: &[Position<'_>], preset: ChainPreset) -> Vec<usize> {
    let keys: Vec<(u8, f64)> = positions.iter().map(|p| key(p, preset)).collect();
    let mut order: Vec<usize> = (0..positions.len()).collect();
    sort_by(&mut order, |&a, &b| {
        let (ga, va) = keys.get(a).copied().unwrap_or((u8::MAX, 0.0));
        let (gb, vb) = keys.get(b).copied().unwrap_or((u8::MAX, 0.0));
        ga.cmp(&gb).then(va.total_cmp(&vb))
    });
    order
}

/// `chain` with its positions in `preset`'s order, every other field kept.
pub fn sorted_chain(
    cfg: &TenantConfig,
    chain: &Chain,
    preset: ChainPreset,
    input: &RouteInput<'_>,
) -> Chain {
    let positions: Vec<Position<'_>> = chain
        .entries()
        .iter()
        .map(|e| position(cfg, e, input))
        .collect();
    let order = preset_order(&positions, preset);
    chain.permuted(&order).unwrap_or_else(|| chain.clone())
}

#[cfg(test)]
#[path = "presets_tests.rs"]
mod tests;
