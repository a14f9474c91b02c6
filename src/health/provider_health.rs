//! `/v1/providers/health`: one entry per provider a caller key can reach, read from the state its
//! routing object already keeps (the scheduled probes' record, the breakers, the parks). Parked
//! keys are a count: a caller never learns a key id.

use super::provider_state::{BreakerStatus, PassView};
use crate::config::{Platform, Provider, ProviderName};
use serde::Serialize;
use serde_json::{json, Value};

/// One provider's entry. `reachable`, `last_probe_at` and `last_probe_ms` are `null` until a
/// scheduled probe of one of its models has reported.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderHealth {
    pub provider: ProviderName,
    pub platform: Platform,
    pub reachable: Option<bool>,
    pub last_probe_at: Option<u64>,
    pub last_probe_ms: Option<u64>,
    pub consecutive_failures: u32,
    /// Breakers open now: a half-open one, waiting for its probe, is not open any more.
    pub open_breakers: usize,
    /// A count: a caller never learns a key id.
    pub parked_keys: usize,
}

pub fn provider_entry(provider: &Provider, view: &PassView) -> ProviderHealth {
    let probes = view.probes;
    let open = view.breakers.iter();
    let open = open.filter(|b| b.view.state == BreakerStatus::Open).count();
    ProviderHealth {
        provider: provider.name.clone(),
        platform: provider.platform(),
        reachable: probes.map(|p| p.reachable),
        last_probe_at: probes.map(|p| p.last_probe_at),
        last_probe_ms: probes.map(|p| p.last_probe_ms),
        consecutive_failures: probes.map_or(0, |p| p.consecutive_failures),
        open_breakers: open,
        parked_keys: view.parked,
    }
}

/// The answer: `{"data": [...]}`, in provider name order.
pub fn providers_answer(entries: Vec<ProviderHealth>) -> Value {
    json!({ "data": entries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, ProviderBody};
    use crate::config::ModelId;
    use crate::config::ProviderName;
    use crate::health::probe_record::{ProbeRecord, ScheduledProbe};
    use crate::health::{BreakerHealth, BreakerView};

    fn provider() -> Provider {
        let body: ProviderBody =
            parse_body(br#"{"kind":"openai","base_url":"http://x/v1","keys":["k"]}"#).unwrap();
        let name = ProviderName::parse("openai").unwrap();
        body.validate(name).unwrap().resolve(|_| None).unwrap()
    }

    fn breaker(model: &str, state: BreakerStatus) -> BreakerHealth {
        BreakerHealth {
            view: BreakerView {
                model: ModelId::parse(model).unwrap(),
                state,
                breaker_until: None,
            },
            open_ms: None,
        }
    }

    #[test]
    fn before_any_scheduled_probe_reachable_and_the_probe_times_are_null() {
        let entry = json!(provider_entry(&provider(), &PassView::default()));
        assert_eq!(
            entry,
            json!({"provider": "openai", "platform": "custom", "reachable": null,
                   "last_probe_at": null, "last_probe_ms": null, "consecutive_failures": 0,
                   "open_breakers": 0, "parked_keys": 0})
        );
    }

    #[test]
    fn an_entry_shows_the_last_probe_open_breakers_and_a_count_of_parked_keys() {
        let failed = ProbeRecord::after(None, ScheduledProbe { at: 10, ms: 3 }, false);
        let view = PassView {
            breakers: vec![
                breaker("m1", BreakerStatus::Open),
                breaker("m2", BreakerStatus::HalfOpen),
                breaker("m3", BreakerStatus::Open),
            ],
            parked: 2,
            probes: Some(ProbeRecord::after(
                Some(failed),
                ScheduledProbe { at: 20, ms: 7 },
                false,
            )),
        };
        let entry = json!(provider_entry(&provider(), &view));
        assert_eq!(entry["reachable"], false);
        assert_eq!(entry["last_probe_at"], 20);
        assert_eq!(entry["last_probe_ms"], 7);
        assert_eq!(entry["consecutive_failures"], 2);
        assert_eq!(entry["open_breakers"], 2, "half-open is not open");
        assert_eq!(entry["parked_keys"], 2);
        let answer = providers_answer(vec![provider_entry(&provider(), &view)]);
        assert_eq!(answer, json!({ "data": [entry] }));
    }
}
