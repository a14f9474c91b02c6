//! The admin core over the in-memory store, driven by method and path as the worker drives it:
//! the harness of the admin host tests.

use cognigate::admin::memory::{MemoryRouting, MemoryStore};
use cognigate::admin::{Admin, CommandError, Context, Reply, Verb};
use cognigate::api::Endpoint;
use cognigate::config::sealed::Kek;
use cognigate::config::Defaults;
use futures::executor::block_on;
use serde_json::{json, Value};

/// 2023-11-14T22:13:20Z: every command runs at this time.
pub const NOW: u64 = 1_700_000_000_000;

pub struct AdminWorld {
    pub store: MemoryStore,
    pub routing: MemoryRouting,
    pub kek: Kek,
    pub defaults: Defaults,
    pub allow_http: bool,
}

impl AdminWorld {
    pub fn new() -> Self {
        Self {
            store: MemoryStore::new(),
            routing: MemoryRouting::default(),
            kek: Kek::from_hex(&"11".repeat(32)).unwrap(),
            defaults: Defaults::default(),
            allow_http: false,
        }
    }

    /// A world holding tenant `acme`, the tenant most admin host tests work in.
    pub fn with_acme() -> Self {
        let w = Self::new();
        w.ok(
            Verb::Post,
            "/admin/v1/tenants",
            r#"{"id":"acme","name":"Acme"}"#,
        );
        w
    }

    /// The status and JSON body of an answer, or of a refusal in the error shape.
    pub fn call(&self, verb: Verb, path: &str, body: &str) -> Result<(u16, Value), (u16, Value)> {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        let route = Endpoint::parse(path).map_err(|e| (e.status(), json!(e.code())))?;
        let random = |buf: &mut [u8]| {
            buf.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
            true
        };
        let cx = Context {
            now: NOW,
            defaults: &self.defaults,
            allow_http_upstreams: self.allow_http,
            kek: Some(&self.kek),
            random: &random,
        };
        let admin = Admin::new(&self.store, &self.routing, cx);
        match block_on(admin.handle(verb, route, body.as_bytes(), query)) {
            Ok(Reply::Json(status, body)) => Ok((status, serde_json::from_slice(&body).unwrap())),
            Ok(Reply::OpenApi(doc)) => Ok((200, serde_json::from_str(doc).unwrap())),
            Err(CommandError::Api(e)) => {
                Err((e.status(), serde_json::from_str(&e.to_json()).unwrap()))
            }
            Err(CommandError::Store(e)) => panic!("store fault: {e:?}"),
        }
    }

    pub fn ok(&self, verb: Verb, path: &str, body: &str) -> Value {
        match self.call(verb, path, body) {
            Ok((_, v)) => v,
            Err((s, v)) => panic!("{path}: {s} {v}"),
        }
    }

    pub fn refused(&self, verb: Verb, path: &str, body: &str) -> (u16, Value) {
        match self.call(verb, path, body) {
            Ok((s, v)) => panic!("{path}: expected a refusal, got {s} {v}"),
            Err(e) => e,
        }
    }
}
