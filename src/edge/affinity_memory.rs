//! This isolate's prompt-cache affinity memory: which model served each conversation last, per
//! tenant, requested name and prefix hash (`routing::affinity::AffinityMemory`, at most
//! `CAPACITY` conversations in all; when full, the least recently served of the tenant holding
//! the most is evicted, so no tenant pushes out another's). `request::conversation` reads and
//! writes it.

use super::isolate::isolate;
use crate::routing::affinity::AffinityMemory;

/// Runs `f` over the memory (never across an `.await`).
pub fn with<T>(f: impl FnOnce(&mut AffinityMemory) -> T) -> T {
    isolate(|i| f(&mut i.affinity.borrow_mut()))
}
