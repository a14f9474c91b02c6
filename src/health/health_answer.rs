//! `/v1/health` with a caller key: the tenant's breakers that are not closed, one entry per
//! provider and model, and since when the tenant is degraded (from its stored degraded-mode
//! state, so it is exact the moment a scheduled pass stored it).

use super::degraded::DegradedMode;
use super::provider_state::BreakerHealth;
use serde_json::{json, Value};

/// One provider's breakers as entries: `breaker_until` and `open_ms` only when known.
pub fn breaker_entries(provider: &str, views: Vec<BreakerHealth>) -> impl Iterator<Item = Value> {
    let provider = provider.to_owned();
    views.into_iter().map(move |v| {
        let mut b = json!({"provider": provider, "model": v.view.model, "state": v.view.state});
        if let Some(until) = v.view.breaker_until {
            b["breaker_until"] = json!(until);
        }
        if let Some(open_ms) = v.open_ms {
            b["open_ms"] = json!(open_ms);
        }
        b
    })
}

/// Since when the tenant is degraded, from its stored state; `None` while it is not, or when
/// the stored state cannot be read.
pub fn degraded_since(stored: Option<&str>) -> Option<u64> {
    serde_json::from_str::<DegradedMode>(stored?).ok()?.since()
}

/// The answer to a caller key: its breakers, and `degraded: {since}` or `null`.
pub fn keyed_answer(breakers: Vec<Value>, degraded_since: Option<u64>) -> Value {
    let degraded = degraded_since.map(|since| json!({"since": since}));
    json!({"status": "ok", "breakers": breakers, "degraded": degraded})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelId;
    use crate::health::provider_state::{BreakerStatus, BreakerView};

    fn view(state: BreakerStatus, until: Option<u64>, open_ms: Option<u64>) -> BreakerHealth {
        BreakerHealth {
            view: BreakerView {
                model: ModelId::parse("m1").unwrap(),
                state,
                breaker_until: until,
            },
            open_ms,
        }
    }

    #[test]
    fn an_open_breaker_names_its_provider_until_and_open_duration() {
        let open = view(BreakerStatus::Open, Some(9_000), Some(60_000));
        let entries: Vec<Value> = breaker_entries("openai", vec![open]).collect();
        assert_eq!(
            entries,
            [json!({"provider": "openai", "model": "m1", "state": "open",
                    "breaker_until": 9_000, "open_ms": 60_000})]
        );
    }

    #[test]
    fn a_half_open_breaker_without_times_shows_none_of_them() {
        let half = view(BreakerStatus::HalfOpen, None, None);
        let entries: Vec<Value> = breaker_entries("p", vec![half]).collect();
        assert_eq!(
            entries,
            [json!({"provider": "p", "model": "m1", "state": "half_open"})]
        );
    }

    #[test]
    fn degraded_since_is_shown_only_while_degraded_or_leaving() {
        let stored = |m: DegradedMode| serde_json::to_string(&m).unwrap();
        let degraded = stored(DegradedMode::Degraded { since: 5 });
        assert_eq!(degraded_since(Some(&degraded)), Some(5));
        let leaving = stored(DegradedMode::Leaving {
            since: 9,
            degraded_since: 5,
        });
        assert_eq!(degraded_since(Some(&leaving)), Some(5));
        let entering = stored(DegradedMode::Entering { since: 5 });
        assert_eq!(degraded_since(Some(&entering)), None);
        assert_eq!(degraded_since(None), None);
        assert_eq!(degraded_since(Some("not json")), None);
    }

    #[test]
    fn a_tenant_not_degraded_answers_degraded_null() {
        let answer = keyed_answer(Vec::new(), None);
        assert_eq!(
            answer,
            json!({"status": "ok", "breakers": [], "degraded": null})
        );
        assert_eq!(keyed_answer(Vec::new(), Some(7))["degraded"]["since"], 7);
    }
}
