//! The admin API on D1 through the real worker: its doors, the catalog, integrity under races,
//! the console page and the metrics scrape.

mod access;
mod catalog;
mod console;
mod integrity;
mod metrics;

use crate::support::gateway::Gateway;
use serde_json::{json, Value};

/// Every row D1 holds for `tenant`, table by table: a refused write must leave it unchanged.
fn tables_snapshot(gw: &Gateway, tenant: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for table in [
        "providers",
        "models",
        "aliases",
        "routing_rules",
        "caller_keys",
    ] {
        all.extend(gw.sql(
            &format!("SELECT * FROM {table} WHERE tenant_id = ?1 ORDER BY 1, 2"),
            &[json!(tenant)],
        ));
    }
    all.extend(gw.sql("SELECT * FROM tenants WHERE id = ?1", &[json!(tenant)]));
    all
}
