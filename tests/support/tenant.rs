//! A tenant of the test gateway: created fresh per test (each test works in its own tenant, which
//! is exactly the isolation the gateway promises), with its caller key and the admin calls that
//! set up its catalog.

use super::gateway::{agent, header_list, Gateway, Resp};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;

impl Gateway {
    /// A fresh tenant with one provider `p` (these keys, this strategy) on a fresh mock, and a
    /// model `m` on it.
    pub fn tenant_with_mock(
        &self,
        hint: &str,
        keys: &[&str],
        strategy: &str,
    ) -> (Tenant<'_>, cognigate::mock::MockProvider) {
        let mock = cognigate::mock::MockProvider::start(hint).expect("mock");
        let t = self.tenant(hint);
        t.provider("p", &mock.url(), keys, strategy);
        t.model("m", "p", 1.0, 8000);
        (t, mock)
    }

    /// Sends 12 requests through a fresh round-robin pool of three keys and asserts each key
    /// served exactly four.
    pub fn assert_round_robin_even(&self, hint: &str) {
        let (t, mock) = self.tenant_with_mock(hint, &["sk-1", "sk-2", "sk-3"], "round_robin");
        for _ in 0..12 {
            assert_eq!(t.chat("m").status, 200);
        }
        let keys = mock.keys();
        for k in ["sk-1", "sk-2", "sk-3"] {
            assert_eq!(keys.iter().filter(|x| *x == k).count(), 4, "{keys:?}");
        }
    }

    /// A fresh tenant with one caller key.
    pub fn tenant(&self, hint: &str) -> Tenant<'_> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let id = format!("{hint}-{}", N.fetch_add(1, Ordering::SeqCst));
        let r = self.admin(
            "POST",
            "/admin/v1/tenants",
            Some(json!({"id": id, "name": hint})),
        );
        assert_eq!(r.status, 201, "create tenant: {}", r.text);
        let r = self.admin("POST", &format!("/admin/v1/tenants/{id}/api-keys"), None);
        assert_eq!(r.status, 201, "create key: {}", r.text);
        let key = r.json()["key"].as_str().expect("key").to_owned();
        Tenant { gw: self, id, key }
    }
}

pub struct Tenant<'g> {
    pub gw: &'g Gateway,
    pub id: String,
    pub key: String,
}

impl Tenant<'_> {
    pub fn path(&self, rest: &str) -> String {
        format!("/admin/v1/tenants/{}{rest}", self.id)
    }

    /// Deletes this tenant and creates it again under the same id, with a fresh caller key: the
    /// next generation of the id, which must inherit nothing of this one.
    pub fn recreated(&self) -> Self {
        let r = self.gw.admin("DELETE", &self.path(""), None);
        assert_eq!(r.status, 200, "{}", r.text);
        let body = serde_json::json!({"id": self.id, "name": "again"});
        let r = self.gw.admin("POST", "/admin/v1/tenants", Some(body));
        assert_eq!(r.status, 201, "{}", r.text);
        let r = self.gw.admin("POST", &self.path("/api-keys"), None);
        assert_eq!(r.status, 201, "{}", r.text);
        let key = r.json()["key"].as_str().unwrap_or_default().to_owned();
        Self {
            gw: self.gw,
            id: self.id.clone(),
            key,
        }
    }

    /// Mints a caller key of this tenant with `policy` (the POST body): its id and its key.
    pub fn key_with(&self, policy: Value) -> (String, String) {
        let r = self.gw.admin("POST", &self.path("/api-keys"), Some(policy));
        assert_eq!(r.status, 201, "{}", r.text);
        let v = r.json();
        let field = |f: &str| v[f].as_str().unwrap_or_default().to_owned();
        (field("id"), field("key"))
    }

    /// The usage API's answer for the last hour (and the next minute), grouped by `group_by`.
    pub fn usage(&self, group_by: &str) -> Value {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let q = format!(
            "/usage?from={}&to={}&group_by={group_by}",
            now - 3_600_000,
            now + 60_000
        );
        let r = self.gw.admin("GET", &self.path(&q), None);
        assert_eq!(r.status, 200, "{}", r.text);
        r.json()
    }

    pub fn put(&self, rest: &str, body: Value) -> Resp {
        self.gw.admin("PUT", &self.path(rest), Some(body))
    }

    /// A PUT that must succeed.
    pub fn put_ok(&self, rest: &str, body: Value) -> Resp {
        let r = self.put(rest, body);
        assert_eq!(r.status, 200, "PUT {rest}: {}", r.text);
        r
    }

    /// Registers an OpenAI-compatible provider and asserts it was stored.
    pub fn provider(&self, name: &str, base_url: &str, keys: &[&str], strategy: &str) {
        let r = self.put(
            &format!("/providers/{name}"),
            json!({"kind": "openai", "base_url": base_url, "keys": keys, "key_strategy": strategy, "timeout_ms": 5000}),
        );
        assert_eq!(r.status, 200, "provider: {}", r.text);
    }

    pub fn model(&self, id: &str, provider: &str, price: f64, context_window: u32) {
        let r = self.put(
            &format!("/models/{}", id.replace('/', "%2F")),
            json!({"provider": provider, "context_window": context_window, "input_price_per_mtok": price, "output_price_per_mtok": price}),
        );
        assert_eq!(r.status, 200, "model: {}", r.text);
    }

    /// Provider `anthropic` (the Anthropic kind, key `sk-ant-1`) at `base_url`, and `claude` on
    /// it (`put_claude`).
    pub fn anthropic_claude(&self, base_url: &str, extra: Value) {
        self.put_ok(
            "/providers/anthropic",
            json!({"kind": "anthropic", "base_url": base_url, "keys": ["sk-ant-1"], "timeout_ms": 5000}),
        );
        self.put_claude(extra);
    }

    /// Model `claude` on provider `anthropic`: upstream `claude-sonnet-4-5`, a 200k context, 1024
    /// output tokens, list prices 3 and 15, and the fields of `extra` on top.
    pub fn put_claude(&self, extra: Value) {
        let mut body = json!({"provider": "anthropic", "upstream_model": "claude-sonnet-4-5",
            "context_window": 200000, "max_output_tokens": 1024,
            "input_price_per_mtok": 3, "output_price_per_mtok": 15});
        if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
            body.extend(extra);
        }
        self.put_ok("/models/claude", body);
    }

    pub fn rule(&self, matches: &str, chain: &[&str]) -> Resp {
        self.put("/routing-rules", json!({"match": matches, "chain": chain}))
    }

    /// Starts a streamed chat request with this body; its status, headers, and a channel of
    /// body chunks as they arrive.
    pub fn open_stream(
        &self,
        body: &str,
    ) -> (
        u16,
        Vec<(String, String)>,
        std::sync::mpsc::Receiver<Vec<u8>>,
    ) {
        use std::io::Read;
        let resp = self
            .gw
            .send("POST", "/v1/chat/completions", Some(&self.key), Some(body));
        let status = resp.status().as_u16();
        let headers = header_list(&resp);
        let mut reader = resp.into_body().into_reader();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        });
        (status, headers, rx)
    }

    /// POST `body` to `path` with this tenant's key and these extra request headers.
    pub fn post_with(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Resp {
        let mut req = ureq::http::Request::builder()
            .method("POST")
            .uri(format!("{}{path}", self.gw.url))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", self.key));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = agent()
            .run(req.body(body.to_string()).unwrap())
            .expect("gateway reachable");
        Resp {
            status: resp.status().as_u16(),
            headers: header_list(&resp),
            text: resp.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    pub fn chat(&self, model: &str) -> Resp {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hello"}]});
        self.gw.request(
            "POST",
            "/v1/chat/completions",
            Some(&self.key),
            Some(&body.to_string()),
        )
    }
}

/// Puts models on provider `p` (8000 tokens, one list price both ways), each with its
/// `quality_rank` when given, through `put` (a path below the tenant and a body, answering the
/// stored view): the chain presets' catalog, in the e2e and the host tests alike. Each view shows
/// the rank as written.
pub fn put_ranked_models(models: &[(&str, u32, Option<u32>)], put: impl Fn(&str, &Value) -> Value) {
    for &(id, price, rank) in models {
        let mut body = json!({"provider": "p", "context_window": 8000,
            "input_price_per_mtok": price, "output_price_per_mtok": price});
        if let Some(r) = rank {
            body["quality_rank"] = r.into();
        }
        let shown = put(&format!("/models/{id}"), &body);
        assert_eq!(
            shown.get("quality_rank"),
            body.get("quality_rank"),
            "{shown}"
        );
    }
}
