use super::*;
use crate::config::SortedSet;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u16),
    Remove(u8),
    Entry(u8, u16),
    Retain(u8),
    Extend(Vec<(u8, u16)>),
    PopFirst,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Insert(k % 32, v)),
        any::<u8>().prop_map(|k| Op::Remove(k % 32)),
        (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Entry(k % 32, v)),
        any::<u8>().prop_map(|m| Op::Retain(m % 5 + 1)),
        proptest::collection::vec((any::<u8>(), any::<u16>()), 0..12)
            .prop_map(|v| Op::Extend(v.into_iter().map(|(k, x)| (k % 32, x)).collect())),
        Just(Op::PopFirst),
    ]
}

proptest! {
    #[test]
    fn every_operation_gives_what_a_btreemap_gives(ops in proptest::collection::vec(op(), 0..60)) {
        let mut ours: SortedMap<u8, u16> = SortedMap::new();
        let mut theirs: BTreeMap<u8, u16> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => prop_assert_eq!(ours.insert(k, v), theirs.insert(k, v)),
                Op::Remove(k) => prop_assert_eq!(ours.remove(&k), theirs.remove(&k)),
                Op::Entry(k, v) => {
                    *ours.entry(k).and_modify(|x| *x = x.wrapping_add(1)).or_insert(v) ^= 1;
                    *theirs.entry(k).and_modify(|x| *x = x.wrapping_add(1)).or_insert(v) ^= 1;
                }
                Op::Retain(m) => {
                    ours.retain(|k, v| (*k as u16).wrapping_add(*v) % m as u16 != 0);
                    theirs.retain(|k, v| (*k as u16).wrapping_add(*v) % m as u16 != 0);
                }
                Op::Extend(items) => {
                    ours.extend(items.clone());
                    theirs.extend(items);
                }
                Op::PopFirst => prop_assert_eq!(ours.pop_first(), theirs.pop_first()),
            }
            prop_assert!(ours.iter().eq(theirs.iter()));
            prop_assert_eq!(ours.len(), theirs.len());
            prop_assert_eq!(ours.first_key_value(), theirs.first_key_value());
            prop_assert_eq!(ours.last_key_value(), theirs.last_key_value());
        }
    }

    #[test]
    fn collected_in_any_order_it_holds_what_a_btreemap_holds(items in proptest::collection::vec((0u8..16, any::<u16>()), 0..40)) {
        let ours: SortedMap<u8, u16> = items.iter().copied().collect();
        let theirs: BTreeMap<u8, u16> = items.iter().copied().collect();
        prop_assert!(ours.iter().eq(theirs.iter()));
        let set: SortedSet<u8> = items.iter().map(|p| p.0).collect();
        let std_set: BTreeSet<u8> = items.iter().map(|p| p.0).collect();
        prop_assert!(set.iter().eq(std_set.iter()));
    }

    #[test]
    fn it_reads_and_writes_json_exactly_as_a_btreemap_does(items in proptest::collection::vec(("[a-d]{0,3}", any::<u32>()), 0..20)) {
        let theirs: BTreeMap<String, u32> = items.iter().cloned().collect();
        let ours: SortedMap<String, u32> = items.iter().cloned().collect();
        let text = serde_json::to_string(&theirs).unwrap();
        prop_assert_eq!(serde_json::to_string(&ours).unwrap(), text.clone());
        let back: SortedMap<String, u32> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, ours);
        let set: SortedSet<String> = items.iter().map(|p| p.0.clone()).collect();
        let std_set: BTreeSet<String> = items.iter().map(|p| p.0.clone()).collect();
        prop_assert_eq!(serde_json::to_string(&set).unwrap(), serde_json::to_string(&std_set).unwrap());
    }
}

#[test]
fn a_repeated_key_in_json_keeps_its_last_value_as_a_btreemap_does() {
    let text = r#"{"b":1,"a":2,"b":3}"#;
    let ours: SortedMap<String, u32> = serde_json::from_str(text).unwrap();
    let theirs: BTreeMap<String, u32> = serde_json::from_str(text).unwrap();
    assert!(ours.iter().eq(theirs.iter()));
    assert_eq!(ours.get("b"), Some(&3));
}
