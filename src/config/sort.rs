//! Stable sorting through one sorting routine for the whole crate.
//!
//! Why not `slice::sort_by`: the standard library's stable sort is generic over the element and
//! the comparison, so every `(T, closure)` pair compiles its own copy of the sort (about 3 KB of
//! wasm each); the crate had some 45 of them. Here the sort itself runs on `u32` positions with
//! the comparison behind `dyn`, compiled once; per element type there remains only the small
//! step that moves the elements into the order found. Same result as `sort_by`: stable, and the
//! comparison sees each pair the way `sort_by` would.

use std::cmp::Ordering;

/// The positions `0..len` in the order `cmp` puts them, ties kept in position order.
fn order(len: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..len as u32).collect();
    idx.sort_by(|&a, &b| cmp(a as usize, b as usize));
    idx
}

/// Puts `v[order[i]]` at `i` for every `i`, following each cycle of the permutation once.
fn permute<T>(v: &mut [T], order: &[u32]) {
    let mut placed = vec![false; v.len()];
    for start in 0..v.len() {
        if placed[start] {
            continue;
        }
        // Walk the cycle through `start`: position `at` takes the element at `order[at]`.
        let mut at = start;
        loop {
            placed[at] = true;
            let from = order[at] as usize;
            if from == start {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

/// `v.sort_by(cmp)`, stable.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = {
        let items: &[T] = v;
        order(items.len(), &mut |a, b| cmp(&items[a], &items[b]))
    };
    permute(v, &order);
}

/// `v.sort_by_key(key)`, stable.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// `v.sort()`, stable.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, |a, b| a.cmp(b));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorting_here_gives_what_the_standard_stable_sort_gives(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..200)) {
            let mut ours = v.clone();
            let mut std = v;
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            std.sort_by_key(|a| a.0);
            prop_assert_eq!(ours, std);
        }
    }

    #[test]
    fn ties_keep_their_order_and_keys_sort_ascending() {
        let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (0, 'e')];
        sort_by_key(&mut v, |p| p.0);
        assert_eq!(v, [(0, 'e'), (1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
        let mut words = vec!["b", "a", "c"];
        sort(&mut words);
        assert_eq!(words, ["a", "b", "c"]);
    }
}
