//! `POST /admin/v1/tenants/{t}/routing-rules/{name}/sort`'s body: the preset whose order a
//! rule's chain positions are rewritten in (`routing::presets` sorts them).

use serde::{Deserialize, Serialize};

/// Which order the positions take. Ties keep their current order.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainPreset {
    /// By the models' `quality_rank` ascending; unranked ones after, by list price descending.
    Smartest,
    /// By measured `latency_ms` ascending; positions without stats after.
    Fastest,
    /// By list price (input + output) ascending.
    Budget,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SortBody {
    pub preset: ChainPreset,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::parse_body;

    #[test]
    fn each_preset_reads_by_its_name() {
        for (word, preset) in [
            ("smartest", ChainPreset::Smartest),
            ("fastest", ChainPreset::Fastest),
            ("budget", ChainPreset::Budget),
        ] {
            let body = format!(r#"{{"preset":"{word}"}}"#);
            assert_eq!(
                parse_body::<SortBody>(body.as_bytes()).unwrap().preset,
                preset
            );
        }
    }

    #[test]
    fn an_unknown_or_missing_preset_is_refused_naming_the_field() {
        let field = |body: &str| {
            let e = parse_body::<SortBody>(body.as_bytes()).unwrap_err();
            e.field().map(str::to_owned)
        };
        assert_eq!(field(r#"{"preset":"cheapest"}"#).as_deref(), Some("preset"));
        assert_eq!(field(r#"{"preset":3}"#).as_deref(), Some("preset"));
        assert!(field(r#"{}"#).is_some());
        assert!(field(r#"{"preset":"budget","x":1}"#).is_some());
        assert!(parse_body::<SortBody>(b"{").is_err(), "malformed");
    }
}
