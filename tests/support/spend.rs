//! What the admin API says a caller key has spent (`GET .../api-keys`, each row's `spend.usd`).

use super::gateway::{Gateway, Tenant};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};

impl Tenant<'_> {
    /// The spend of key `id` in the admin list (0 when it has none yet).
    pub fn key_spend(&self, id: &str) -> f64 {
        let keys = self.gw.admin("GET", &self.path("/api-keys"), None).json();
        let row = keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["id"] == id)
            .cloned()
            .unwrap();
        row["spend"]["usd"].as_f64().unwrap_or(0.0)
    }
}

/// A tenant with provider `p` (of `kind`) on a fresh mock and model `m` at these prices.
pub fn priced<'g>(
    gw: &'g Gateway,
    hint: &str,
    kind: &str,
    prices: Value,
) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/p",
        json!({"kind": kind, "base_url": mock.url(), "keys": ["sk-1"], "timeout_ms": 5000}),
    );
    let mut model = json!({"provider": "p", "context_window": 100000});
    model
        .as_object_mut()
        .unwrap()
        .extend(prices.as_object().unwrap().clone());
    t.put_ok("/models/m", model);
    (t, mock)
}
