//! `prefer_platforms`: an order over the platforms a provider's models are served from (direct,
//! bedrock, vertex, azure, custom), for an alias's ties and a rule's spreads. Each platform at
//! most once and at least one; a platform not listed comes after every listed one.

use super::cloud::Platform;
use super::ConfigError;
use serde::{Deserialize, Serialize};

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlatformOrder(Vec<Platform>);

/// `prefer_platforms` as an admin body writes it: platform names read as words, so an unknown
/// one is refused by `PlatformOrder::from_words` naming the field, as a duplicate or an empty
/// list is (serde would name the element instead).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct PlatformWords(
    #[cfg_attr(not(target_arch = "wasm32"), schemars(with = "Vec<Platform>"))] Vec<String>,
);

impl PlatformOrder {
    /// The order as written, or a 400 naming the field: empty, or a platform listed twice.
    pub fn new(field: &str, platforms: Vec<Platform>) -> Result<Self, ConfigError> {
        if platforms.is_empty() {
            return Err(ConfigError::invalid(
                field,
                "must list at least one platform",
            ));
        }
        for (i, p) in platforms.iter().enumerate() {
            if platforms[..i].contains(p) {
                let why = format!("'{}' is listed twice", p.as_str());
                return Err(ConfigError::invalid(field, why));
            }
        }
        Ok(Self(platforms))
    }

    /// The order as an admin body writes it, platform names as words: an unknown name is a 400
    /// naming the field, as a duplicate or an empty list is.
    pub fn from_words(
        field: &str,
        words: Option<PlatformWords>,
    ) -> Result<Option<Self>, ConfigError> {
        let Some(PlatformWords(words)) = words else {
            return Ok(None);
        };
        let known = |w: &String| Platform::ALL.into_iter().find(|p| p.as_str() == w);
        let platforms = words.iter().map(|w| {
            known(w).ok_or_else(|| {
                let why =
                    format!("unknown platform '{w}' (direct, bedrock, vertex, azure or custom)");
                ConfigError::invalid(field, why)
            })
        });
        Self::new(field, platforms.collect::<Result<_, _>>()?).map(Some)
    }

    /// `new` over an optional field.
    pub fn checked(
        field: &str,
        platforms: Option<Vec<Platform>>,
    ) -> Result<Option<Self>, ConfigError> {
        platforms.map(|p| Self::new(field, p)).transpose()
    }

    /// Where `platform` sorts (lower first): its place in the list, after every listed one when
    /// it is not listed.
    pub fn rank(&self, platform: Platform) -> usize {
        self.0
            .iter()
            .position(|p| *p == platform)
            .unwrap_or(self.0.len())
    }

    pub fn platforms(&self) -> &[Platform] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_platform_sorts_by_its_place_and_an_unlisted_one_comes_last() {
        let order = PlatformOrder::new("p", vec![Platform::Bedrock, Platform::Direct]).unwrap();
        assert_eq!(order.rank(Platform::Bedrock), 0);
        assert_eq!(order.rank(Platform::Direct), 1);
        assert_eq!(order.rank(Platform::Vertex), 2);
        assert_eq!(order.rank(Platform::Custom), 2);
    }

    #[test]
    fn an_empty_list_or_a_duplicate_is_refused_naming_the_field() {
        let empty = PlatformOrder::new("prefer_platforms", vec![]).unwrap_err();
        assert!(empty.to_string().contains("prefer_platforms"), "{empty}");
        let twice = vec![Platform::Azure, Platform::Vertex, Platform::Azure];
        let dup = PlatformOrder::new("prefer_platforms", twice).unwrap_err();
        assert!(dup.to_string().contains("prefer_platforms"), "{dup}");
        assert!(dup.to_string().contains("azure"), "{dup}");
    }
}
