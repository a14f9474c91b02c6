//! A list that holds at least one item, by construction: a provider's key pool is one.

use serde::{Deserialize, Deserializer, Serialize};
use std::ops::Deref;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct NonEmpty<T>(Vec<T>);

impl<T> NonEmpty<T> {
    /// `None` for an empty list.
    pub fn new(items: Vec<T>) -> Option<Self> {
        (!items.is_empty()).then_some(Self(items))
    }

    /// Maps every item; the result is as long as this list, so it is non-empty too.
    pub fn try_map<U, E>(&self, f: impl FnMut(&T) -> Result<U, E>) -> Result<NonEmpty<U>, E> {
        self.0
            .iter()
            .map(f)
            .collect::<Result<Vec<U>, E>>()
            .map(NonEmpty)
    }
}

impl<T> Deref for NonEmpty<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

/// Stored rows pass through the same rule as admin input: an empty list does not load.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for NonEmpty<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(d)?;
        Self::new(items).ok_or_else(|| serde::de::Error::custom("must not be empty"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_is_not_a_non_empty_list_in_code_or_in_json() {
        assert!(NonEmpty::<u8>::new(Vec::new()).is_none());
        assert!(serde_json::from_str::<NonEmpty<u8>>("[]").is_err());
        let one: NonEmpty<u8> = serde_json::from_str("[1]").unwrap();
        assert_eq!(&*one, &[1]);
        assert_eq!(serde_json::to_string(&one).unwrap(), "[1]");
    }

    #[test]
    fn mapping_keeps_every_item() {
        let list = NonEmpty::new(vec![1, 2]).unwrap();
        let doubled: Result<NonEmpty<i32>, ()> = list.try_map(|n| Ok(n * 2));
        assert_eq!(&*doubled.unwrap(), &[2, 4]);
    }
}
