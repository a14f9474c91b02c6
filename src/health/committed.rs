//! In-memory state that only ever holds what storage holds. A decision is made on memory at once
//! (so concurrent requests see each other's effects without an await in between); when it must be
//! stored, its write either succeeds or the decision is undone. The routing object keeps its
//! `ProviderState` in one of these.

/// `T` as memory holds it; `None` until loaded (and after an undo that could not be exact).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed<T> {
    value: Option<T>,
    /// Moves on with every decision that must be stored, so an undo can tell whether another
    /// decision was made on top of the one it undoes.
    version: u64,
}

/// A decision whose write is in flight: what to store, and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending<T> {
    pub store: T,
    before: T,
    version: u64,
}

impl<T: Clone + Default> Committed<T> {
    pub fn is_loaded(&self) -> bool {
        self.value.is_some()
    }

    /// Installs what storage held, unless a concurrent first request already did.
    pub fn load(&mut self, stored: Option<T>) {
        if self.value.is_none() {
            self.value = Some(stored.unwrap_or_default());
        }
    }

    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// Decides on memory. `decide` says whether its change must be stored; if so, the caller
    /// writes `Pending::store` and calls `undo` if that write fails.
    pub fn decide<R>(
        &mut self,
        decide: impl FnOnce(&mut T) -> (R, bool),
    ) -> (R, Option<Pending<T>>) {
        let value = self.value.get_or_insert_with(T::default);
        let before = value.clone();
        let (result, store) = decide(value);
        if !store {
            return (result, None);
        }
        self.version = self.version.wrapping_add(1);
        let pending = Pending {
            store: value.clone(),
            before,
            version: self.version,
        };
        (result, Some(pending))
    }

    /// The write of `pending` failed. If nothing was decided since, memory goes back exactly to
    /// before the decision (true). If something was, restoring the old snapshot would silently
    /// drop that later decision, so memory is emptied instead and reloaded from storage by the
    /// next request (false). The runtime's input gate holds other requests while a write is in
    /// flight, so the second case should not occur; it is handled rather than assumed away.
    pub fn undo(&mut self, pending: Pending<T>) -> bool {
        let exact = self.version == pending.version;
        self.value = exact.then_some(pending.before);
        self.version = self.version.wrapping_add(1);
        exact
    }

    /// Replaces memory outright (after storage was wiped).
    pub fn reset(&mut self) {
        self.value = Some(T::default());
        self.version = self.version.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(n: u32) -> Committed<u32> {
        let mut c = Committed::default();
        c.load(Some(n));
        c
    }

    #[test]
    fn a_decision_whose_write_fails_leaves_memory_as_it_was() {
        let mut c = loaded(1);
        let (seen, pending) = c.decide(|v| {
            *v += 1;
            (*v, true)
        });
        let pending = pending.unwrap();
        assert_eq!(
            (seen, pending.store),
            (2, 2),
            "the write carries the decision"
        );
        assert!(c.undo(pending));
        assert_eq!(c.get(), Some(&1));
    }

    #[test]
    fn a_decision_whose_write_succeeds_stays() {
        let mut c = loaded(1);
        let (_, pending) = c.decide(|v| {
            *v += 1;
            ((), true)
        });
        assert!(pending.is_some());
        assert_eq!(c.get(), Some(&2));
    }

    #[test]
    fn a_decision_that_needs_no_write_changes_memory_at_once() {
        let mut c = loaded(1);
        let (_, pending) = c.decide(|v| {
            *v += 1;
            ((), false)
        });
        assert!(pending.is_none());
        assert_eq!(c.get(), Some(&2));
    }

    #[test]
    fn an_undo_after_a_later_decision_empties_memory_for_a_reload_instead() {
        let mut c = loaded(1);
        let (_, first) = c.decide(|v| {
            *v += 1;
            ((), true)
        });
        let (_, _second) = c.decide(|v| {
            *v += 10;
            ((), true)
        });
        assert!(!c.undo(first.unwrap()));
        assert!(
            !c.is_loaded(),
            "the next request reloads what storage holds"
        );
        c.load(Some(12));
        assert_eq!(c.get(), Some(&12));
    }

    #[test]
    fn loading_keeps_what_a_concurrent_first_request_loaded() {
        let mut c = loaded(5);
        c.load(Some(9));
        assert_eq!(c.get(), Some(&5));
    }
}
