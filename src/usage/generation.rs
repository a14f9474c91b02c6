//! Which tenant generation a ledger serves. A tenant id can be deleted and created again; each
//! creation takes the next generation of that id (D1 `tenant_generations`, never reused), and
//! every usage record carries the generation of the config it was served under. The ledger keeps
//! only records of the generation it serves, so usage that settles after its tenant was deleted
//! is dropped, and never lands in a re-created tenant of the same id.

use serde::{Deserialize, Serialize};

/// What the ledger does with a record of some generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GenerationVerdict {
    /// The generation the ledger serves (or the first it hears of): settle it.
    Accept,
    /// A generation that was wiped, or older than the one served: its tenant is gone.
    Drop,
    /// A newer generation: the tenant was deleted and created again while this ledger still
    /// held the old one's counters (its wipe never arrived). Forget everything, then settle.
    ResetThenAccept,
}

/// Stored with the ledger's roll-up bookkeeping (`usage::rollup_store::LedgerMeta`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationGate {
    /// The generation whose counters this ledger holds; `None` before its first record.
    #[serde(default)]
    pub current: Option<u64>,
    /// The tombstone of a wipe: every generation up to this one is deleted.
    #[serde(default)]
    pub dead_through: Option<u64>,
}

impl GenerationGate {
    fn verdict(&self, generation: u64) -> GenerationVerdict {
        if self.dead_through.is_some_and(|d| generation <= d) {
            return GenerationVerdict::Drop;
        }
        match self.current {
            None => GenerationVerdict::Accept,
            Some(c) if generation == c => GenerationVerdict::Accept,
            Some(c) if generation < c => GenerationVerdict::Drop,
            Some(_) => GenerationVerdict::ResetThenAccept,
        }
    }

    /// Records that `generation` is now served (after `Accept` or `ResetThenAccept`).
    fn serve(&mut self, generation: u64) {
        self.current = Some(generation);
    }

    /// One hand-off of records, by their generations: which to keep, and whether the ledger
    /// must forget everything first. A newer generation in the middle makes the records of the
    /// older one before it stale too.
    pub fn sort(&mut self, generations: &[u64]) -> (Vec<bool>, bool) {
        let mut keep = Vec::with_capacity(generations.len());
        let mut reset = false;
        for &g in generations {
            match self.verdict(g) {
                GenerationVerdict::Drop => {
                    keep.push(false);
                    continue;
                }
                GenerationVerdict::ResetThenAccept => {
                    keep.iter_mut().for_each(|k| *k = false);
                    reset = true;
                }
                GenerationVerdict::Accept => {}
            }
            self.serve(g);
            keep.push(true);
        }
        (keep, reset)
    }

    /// The tenant was deleted: `dead_through` is the last generation D1 gave the id before the
    /// deletion, when the wipe could read it. Whatever this ledger served is dead too.
    pub fn wipe(&mut self, dead_through: Option<u64>) {
        let dead = [self.dead_through, self.current, dead_through]
            .into_iter()
            .flatten()
            .max();
        *self = Self {
            current: None,
            dead_through: dead,
        };
    }
}

/// A generation as the tenants table returns it (a number, or null for a row from before
/// generations were kept): a row without one is generation 0.
pub fn stored_generation(column: Option<f64>) -> u64 {
    column.unwrap_or(0.0).max(0.0) as u64
}

/// The generations of a tenant id that are gone, from the last one it was given (`last`) and
/// its live row's (`live`, `None` when no tenant holds the id): through the one before the live
/// row's if it was created again meanwhile, else through the last.
pub fn dead_through(last: f64, live: Option<f64>) -> Option<u64> {
    match live {
        Some(live) => (live as u64).checked_sub(1),
        None => Some(last as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::GenerationVerdict::*;
    use super::*;

    #[test]
    fn a_ledger_serves_the_first_generation_it_hears_of_and_drops_older_ones() {
        let mut g = GenerationGate::default();
        assert_eq!(g.verdict(3), Accept);
        g.serve(3);
        assert_eq!(g.verdict(3), Accept);
        assert_eq!(g.verdict(2), Drop);
    }

    #[test]
    fn usage_settling_after_its_tenant_was_wiped_is_dropped() {
        let mut g = GenerationGate::default();
        g.serve(1);
        g.wipe(None);
        assert_eq!(g.verdict(1), Drop);
        assert_eq!(g.verdict(0), Drop);
    }

    #[test]
    fn a_wipe_told_the_deleted_generation_drops_it_even_if_it_never_settled_here() {
        let mut g = GenerationGate::default();
        g.wipe(Some(4));
        assert_eq!(g.verdict(4), Drop);
        assert_eq!(g.verdict(5), Accept);
    }

    #[test]
    fn a_re_created_tenant_is_served_after_the_wipe_and_the_old_generation_stays_dead() {
        let mut g = GenerationGate::default();
        g.serve(1);
        g.wipe(Some(1));
        assert_eq!(g.verdict(2), Accept);
        g.serve(2);
        assert_eq!(g.verdict(1), Drop);
        assert_eq!(g.verdict(2), Accept);
    }

    #[test]
    fn a_hand_off_mixing_generations_keeps_only_the_newest_and_resets_once() {
        let mut g = GenerationGate::default();
        g.serve(1);
        let (keep, reset) = g.sort(&[1, 2, 1, 2]);
        assert_eq!((keep, reset), (vec![false, true, false, true], true));
        assert_eq!(g.sort(&[2, 2]), (vec![true, true], false));
    }

    #[test]
    fn a_newer_generation_without_a_wipe_resets_the_ledger_before_it_settles() {
        let mut g = GenerationGate::default();
        g.serve(1);
        assert_eq!(g.verdict(2), ResetThenAccept);
    }

    #[test]
    fn a_row_without_a_stored_generation_is_generation_zero() {
        assert_eq!(super::stored_generation(None), 0);
        assert_eq!(super::stored_generation(Some(-3.0)), 0);
        assert_eq!(super::stored_generation(Some(4.0)), 4);
    }

    #[test]
    fn a_deleted_id_is_dead_through_its_last_generation_and_a_recreated_one_through_the_one_before_its_live_row(
    ) {
        assert_eq!(super::dead_through(3.0, None), Some(3));
        assert_eq!(super::dead_through(4.0, Some(4.0)), Some(3));
        // The first generation alive: none is dead yet.
        assert_eq!(super::dead_through(1.0, Some(1.0)), Some(0));
        assert_eq!(super::dead_through(1.0, Some(0.0)), None);
    }
}
