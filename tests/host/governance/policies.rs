//! The governance admin rules over the in-memory store: caller-key policies, their spend, tenant
//! limits in settings, and the usage API.

use crate::support::admin_world::{AdminWorld as World, NOW};
use cognigate::admin::Verb;
use cognigate::config::TenantId;
use cognigate::usage::spend::Spend;
use cognigate::usage::{RollupKey, UsageSums};
use serde_json::{json, Value};

impl World {
    fn acme() -> TenantId {
        TenantId::parse("acme").unwrap()
    }
}

const KEYS: &str = "/admin/v1/tenants/acme/api-keys";

#[test]
fn a_key_is_created_with_a_policy_and_listed_with_its_spend_never_the_key() {
    let w = World::with_acme();
    let created = w.ok(
        Verb::Post,
        KEYS,
        r#"{"name":"ci-bot","models":["gpt-4o","fast"],"rpm":60,"tpm":200000,"budget":{"usd":25.0,"period":"day"}}"#,
    );
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(created["key"].as_str().unwrap().starts_with("cg_"));
    assert_eq!(created["models"], json!(["fast", "gpt-4o"]));
    let mut spend = Spend::default();
    spend.add(NOW, 1.5);
    spend.add(NOW - 86_400_000, 4.0); // yesterday: not today's spend
    w.routing
        .spends
        .borrow_mut()
        .insert((World::acme(), id.clone()), spend);
    let listed = w.ok(Verb::Get, KEYS, "");
    let row = &listed["data"][0];
    assert_eq!(row["id"], id.as_str());
    assert_eq!(row["name"], "ci-bot");
    assert_eq!(row["rpm"], 60);
    assert_eq!(row["budget"], json!({"usd": 25.0, "period": "day"}));
    assert_eq!(row["spend"]["period"], "day");
    assert_eq!(row["spend"]["since"], 1_699_920_000_000u64);
    assert_eq!(row["spend"]["usd"], 1.5);
    assert!(row.get("key").is_none() && !listed.to_string().contains("cg_"));
}

#[test]
fn a_key_created_without_a_body_is_unrestricted_and_its_spend_is_all_time() {
    let w = World::with_acme();
    let created = w.ok(Verb::Post, KEYS, "");
    assert!(created.get("models").is_none() && created.get("rpm").is_none());
    let listed = w.ok(Verb::Get, KEYS, "");
    assert_eq!(
        listed["data"][0]["spend"],
        json!({"period": "total", "since": 0, "usd": 0.0})
    );
}

#[test]
fn a_patch_changes_only_what_it_names_and_null_clears_a_field() {
    let w = World::with_acme();
    let id = w.ok(
        Verb::Post,
        KEYS,
        r#"{"name":"bot","models":["fast"],"rpm":5}"#,
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("{KEYS}/{id}");
    let after = w.ok(
        Verb::Patch,
        &path,
        r#"{"models":null,"budget":{"usd":0.001,"period":"total"}}"#,
    );
    assert_eq!(after["name"], "bot");
    assert_eq!(after["rpm"], 5);
    assert!(after.get("models").is_none());
    assert_eq!(after["budget"]["usd"], 0.001);
    let listed = w.ok(Verb::Get, KEYS, "");
    assert!(listed["data"][0].get("models").is_none());
}

#[test]
fn a_bad_policy_is_refused_with_the_field_named_and_changes_nothing() {
    let w = World::with_acme();
    let id = w.ok(Verb::Post, KEYS, r#"{"rpm":5}"#)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = format!("{:?}", w.store.data(&World::acme()));
    let path = format!("{KEYS}/{id}");
    for (body, param) in [
        (r#"{"rpm":0}"#, "rpm"),
        (r#"{"models":[]}"#, "models"),
        (r#"{"budget":{"usd":-1,"period":"day"}}"#, "budget.usd"),
        (r#"{"budget":{"usd":1,"period":"week"}}"#, "budget.period"),
        (r#"{"owner":"x"}"#, "owner"),
    ] {
        let (status, v) = w.refused(Verb::Patch, &path, body);
        assert_eq!(status, 400, "{body}");
        assert_eq!(v["error"]["param"], param, "{body}: {v}");
        let (status, _) = w.refused(Verb::Post, KEYS, body);
        assert_eq!(status, 400, "{body}");
    }
    assert_eq!(format!("{:?}", w.store.data(&World::acme())), before);
    let (status, _) = w.refused(Verb::Patch, &format!("{KEYS}/ck_nope"), r#"{"rpm":1}"#);
    assert_eq!(status, 404);
}

#[test]
fn tenant_budget_end_user_limits_and_default_model_are_settings() {
    let w = World::with_acme();
    let body = r#"{"budget":{"usd":100,"period":"month"},"end_user":{"budget":{"usd":1,"period":"day"},"rpm":10},"default_model":"fast"}"#;
    let put = w.ok(Verb::Put, "/admin/v1/tenants/acme/settings", body);
    assert_eq!(put["default_model"], "fast");
    let got = w.ok(Verb::Get, "/admin/v1/tenants/acme/settings", "");
    assert_eq!(got["budget"], json!({"usd": 100.0, "period": "month"}));
    assert_eq!(got["end_user"]["rpm"], 10);
    let (status, v) = w.refused(
        Verb::Put,
        "/admin/v1/tenants/acme/settings",
        r#"{"end_user":{}}"#,
    );
    assert_eq!(
        (status, v["error"]["param"].as_str()),
        (400, Some("end_user"))
    );
}

fn rollup(
    minute: u64,
    model: &str,
    key: &str,
    user: &str,
    requests: u64,
    cost: f64,
) -> (RollupKey, UsageSums) {
    (
        RollupKey {
            minute,
            model: model.into(),
            provider: if model.is_empty() {
                String::new()
            } else {
                "p".into()
            },
            key_id: key.into(),
            end_user: user.into(),
        },
        UsageSums {
            requests,
            prompt_tokens: 5 * requests,
            completion_tokens: 7 * requests,
            cached_tokens: 0,
            cost_usd: cost,
            ..Default::default()
        },
    )
}

#[test]
fn usage_is_grouped_over_the_minutes_overlapping_from_to() {
    let w = World::with_acme();
    let m0 = NOW - NOW % 60_000;
    w.store.add_rollups(
        &World::acme(),
        &[
            rollup(m0, "a", "ck_1", "alice", 2, 0.5),
            rollup(m0 + 60_000, "b", "ck_1", "", 1, 0.25),
            // An exhausted request: counted, nothing served, no cost.
            rollup(m0 + 60_000, "", "ck_2", "bob", 1, 0.0),
            rollup(m0 + 120_000, "a", "ck_2", "", 4, 1.0),
        ],
    );
    let path = |q: &str| format!("/admin/v1/tenants/acme/usage?{q}");
    // `from` inside the first minute still counts that minute; `to` excludes the last one.
    let v = w.ok(
        Verb::Get,
        &path(&format!(
            "from={}&to={}&group_by=model",
            m0 + 30_000,
            m0 + 120_000
        )),
        "",
    );
    assert_eq!(v["data"][0]["group"], Value::Null);
    assert_eq!(v["data"][1]["group"], "a");
    assert_eq!(v["data"][1]["requests"], 2);
    assert_eq!(v["data"][2]["group"], "b");
    assert_eq!(v["total"]["requests"], 4);
    assert_eq!(v["total"]["cost_usd"], 0.75);
    assert_eq!(v["total"]["prompt_tokens"], 20);
    let by_user = w.ok(
        Verb::Get,
        &path(&format!("from={m0}&to={}&group_by=user", m0 + 180_000)),
        "",
    );
    let groups: Vec<&Value> = by_user["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["group"])
        .collect();
    assert_eq!(groups, [&Value::Null, &json!("alice"), &json!("bob")]);
    let by_day = w.ok(
        Verb::Get,
        &path(&format!("from={m0}&to={}&group_by=day", m0 + 180_000)),
        "",
    );
    assert_eq!(by_day["data"][0]["group"], "2023-11-14");
    assert_eq!(by_day["data"][0]["requests"], 8);
}

#[test]
fn a_bad_usage_query_is_a_400_naming_the_parameter() {
    let w = World::with_acme();
    for (q, param) in [
        ("to=5&group_by=model", "from"),
        ("from=x&to=5&group_by=model", "from"),
        ("from=9&to=5&group_by=model", "to"),
        ("from=1&to=5", "group_by"),
        ("from=1&to=5&group_by=tenant", "group_by"),
    ] {
        let (status, v) = w.refused(Verb::Get, &format!("/admin/v1/tenants/acme/usage?{q}"), "");
        assert_eq!(
            (status, v["error"]["param"].as_str()),
            (400, Some(param)),
            "{q}"
        );
    }
}

#[test]
fn deleting_a_tenant_wipes_its_ledger() {
    let w = World::with_acme();
    w.ok(Verb::Delete, "/admin/v1/tenants/acme", "");
    assert_eq!(*w.routing.ledgers_wiped.borrow(), vec![World::acme()]);
}
