//! What the admin API says a caller key has spent (`GET .../api-keys`, each row's `spend.usd`).

use super::gateway::Tenant;

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
