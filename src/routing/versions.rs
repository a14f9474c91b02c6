//! Model versions: a catalog id may end in a version date, and a
//! requested id with no exact entry reaches the ids that differ from it only by that date.
//!
//! - A date is a trailing `-YYYYMMDD`, `-YYYY-MM-DD` or `@YYYYMMDD` that is a real calendar day
//!   of the years 2000 to 2099 (`-12345678` or `-20251301` is part of the name, not a date). What
//!   precedes it is the id's base; an undated id is its own base.
//! - Only the date may differ: the base must be equal character for character, so a match never
//!   crosses a family or a version number (`claude-haiku-5` never reaches
//!   `claude-haiku-4-5-20251001`, nor `claude-haiku-4` `claude-haiku-4-5`).
//! - Symmetric on the base: an undated request reaches the dated ids, and a dated one reaches the
//!   undated id and ids of other dates. The same date spelled another way is the same version and
//!   goes first (`claude-haiku-4-5@20251001` reaches `claude-haiku-4-5-20251001` even when a newer
//!   one exists); otherwise the newest date wins, then an undated id; equal dates break on id.
//! - Exact ids always win; the callers look them up first, so an exact name costs nothing here.
//!   A miss reads an index of the catalog by base, built once per config.

use crate::config::SortedMap;
use crate::config::{CatalogModel, ModelId, TenantConfig};
use std::cmp::Reverse;

/// A version date as the number `YYYYMMDD`, so a later day is a larger number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionDate(u32);

impl VersionDate {
    /// A real calendar day of 2000 to 2099; `None` otherwise.
    pub fn new(year: u32, month: u32, day: u32) -> Option<Self> {
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        ((2000..=2099).contains(&year) && (1..=days).contains(&day))
            .then_some(Self(year * 10_000 + month * 100 + day))
    }

    /// `YYYYMMDD`.
    pub fn as_u32(self) -> u32 {
        self.0
    }
}

/// The number the ASCII digits `s` spell; `None` if `s` is empty or anything but digits.
fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `YYYYMMDD` or `YYYY-MM-DD` as a date.
fn date_of(compact: Option<&str>, dashed: Option<&str>) -> Option<VersionDate> {
    let (y, m, d) = match (compact, dashed) {
        (Some(s), _) => (s.get(..4)?, s.get(4..6)?, s.get(6..8)?),
        (None, Some(s)) if s.get(4..5) == Some("-") && s.get(7..8) == Some("-") => {
            (s.get(..4)?, s.get(5..7)?, s.get(8..10)?)
        }
        _ => return None,
    };
    VersionDate::new(digits(y)?, digits(m)?, digits(d)?)
}

/// An id's undated base and its version date, if it ends in one; an undated id is its own base.
pub fn split(id: &str) -> (&str, Option<VersionDate>) {
    // `-YYYY-MM-DD`: eleven bytes, a dash first.
    if let Some(cut) = id.len().checked_sub(11).filter(|&c| c > 0) {
        if id.get(cut..=cut) == Some("-") {
            if let Some(date) = date_of(None, id.get(cut + 1..)) {
                return (&id[..cut], Some(date));
            }
        }
    }
    // `-YYYYMMDD` or `@YYYYMMDD`: nine bytes, the separator first.
    if let Some(cut) = id.len().checked_sub(9).filter(|&c| c > 0) {
        if matches!(id.get(cut..=cut), Some("-" | "@")) {
            let date = id.get(cut + 1..).filter(|s| s.len() == 8);
            if let Some(date) = date_of(date, None) {
                return (&id[..cut], Some(date));
            }
        }
    }
    (id, None)
}

/// The version date of an id, if it has one.
pub fn date(id: &str) -> Option<VersionDate> {
    split(id).1
}

/// `prefer_newest_version`'s sort key (lower first): dated ids newest first, undated ones after.
pub fn newest_first(id: &str) -> Reverse<Option<VersionDate>> {
    Reverse(date(id))
}

/// The catalog's ids by base, each list in match order: newest date first, equal dates by id,
/// the undated id last.
pub fn index(models: &SortedMap<ModelId, CatalogModel>) -> SortedMap<String, Vec<ModelId>> {
    let mut by_base: SortedMap<String, Vec<ModelId>> = SortedMap::new();
    for id in models.keys() {
        let (base, _) = split(id.as_str());
        by_base.entry(base.to_owned()).or_default().push(id.clone());
    }
    for ids in by_base.values_mut() {
        crate::config::sort::sort_by(ids, |a, b| {
            newest_first(a.as_str())
                .cmp(&newest_first(b.as_str()))
                .then_with(|| a.cmp(b))
        });
    }
    by_base
}

/// The config's index (built on the first miss, then kept with the config).
fn cached(cfg: &TenantConfig) -> &SortedMap<String, Vec<ModelId>> {
    cfg.versions.get_or_init(|| index(&cfg.models))
}

/// The catalog model `requested` names, exactly or else loosely (see the module's rules), among
/// the models `keep` admits (a provider pin). `None`: no such model.
pub fn closest<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    keep: impl Fn(&CatalogModel) -> bool,
) -> Option<&'c CatalogModel> {
    if let Some(exact) = cfg.models.get(requested).filter(|m| keep(m)) {
        return Some(exact);
    }
    let (base, wanted) = split(requested);
    let mut kept = cached(cfg)
        .get(base)?
        .iter()
        .filter_map(|id| cfg.models.get(id))
        .filter(|m| keep(m));
    match wanted {
        Some(day) => {
            let first = kept.clone().next();
            kept.find(|m| date(m.id.as_str()) == Some(day)).or(first)
        }
        None => kept.next(),
    }
}

#[cfg(test)]
#[path = "versions_tests.rs"]
mod tests;
