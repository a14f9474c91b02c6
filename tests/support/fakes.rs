//! Host fakes for the cascade's ports. The routing state fake runs the real `ProviderState`, so
//! these tests exercise the same state machines the Durable Object does.
#![allow(dead_code)]

use cognigate::cascade::{Call, Clock, RoutingState, Upstream, UpstreamReply};
use cognigate::config::admin_body::{parse_body, ModelBody, ProviderBody};
use cognigate::config::{Defaults, ModelId, ProviderName, RouteName, TenantConfig, TenantId};
use cognigate::health::{AcquireRequest, Lease, ProviderState, ReportRequest};
use cognigate::routing::stats::isolate_stats::ProviderStats;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};

#[derive(Default)]
pub struct FakeClock(pub Cell<u64>);

impl FakeClock {
    pub fn advance(&self, ms: u64) {
        self.0.set(self.0.get() + ms);
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> u64 {
        self.0.get()
    }

    /// Backoff waits move the injected time on instead of waiting.
    async fn sleep(&self, ms: u64) {
        self.advance(ms);
    }

    /// Always the top of the jitter range, so delays are exact in tests.
    fn random(&self) -> u64 {
        u64::MAX
    }
}

pub struct FakeState<'c> {
    pub clock: &'c FakeClock,
    pub providers: RefCell<BTreeMap<String, ProviderState>>,
    pub acquires: Cell<usize>,
    pub reports: RefCell<Vec<ReportRequest>>,
    /// The isolate's live stats, by provider (where answers' headroom figures go).
    pub stats: RefCell<BTreeMap<String, ProviderStats>>,
}

impl<'c> FakeState<'c> {
    pub fn new(clock: &'c FakeClock) -> Self {
        Self {
            clock,
            providers: RefCell::default(),
            acquires: Cell::new(0),
            reports: RefCell::default(),
            stats: RefCell::default(),
        }
    }

    pub fn round_trips(&self) -> usize {
        self.acquires.get() + self.reports.borrow().len()
    }
}

impl RoutingState for FakeState<'_> {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        self.acquires.set(self.acquires.get() + 1);
        let mut map = self.providers.borrow_mut();
        map.entry(provider.to_string())
            .or_default()
            .acquire(&req, self.clock.now_ms())
    }

    async fn report(&self, provider: &ProviderName, req: ReportRequest) {
        let mut map = self.providers.borrow_mut();
        map.entry(provider.to_string())
            .or_default()
            .report(&req, self.clock.now_ms());
        self.reports.borrow_mut().push(req);
    }

    fn with_stats(&self, provider: &ProviderName, f: &mut dyn FnMut(&mut ProviderStats)) {
        f(self
            .stats
            .borrow_mut()
            .entry(provider.to_string())
            .or_default());
    }
}

/// What a scripted upstream answers, and how long it takes.
#[derive(Debug, Clone)]
pub enum Script {
    Ok,
    Status(u16, Option<&'static str>, &'static str),
    Timeout,
    Network,
    Broken,
    /// A 2xx past the success-body cap.
    Oversized,
    Cancelled,
    /// A 200 that is a safety refusal: OpenAI's `finish_reason: "content_filter"`, no content.
    Refusal,
    /// A 200 whose answer carries these rate-limit headers.
    OkWith(&'static [(&'static str, &'static str)]),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenCall {
    pub model: String,
    pub key: String,
    pub timeout_ms: u64,
}

/// Answers by upstream model name from a queue; an empty queue answers 200.
pub struct FakeUpstream<'c> {
    pub clock: &'c FakeClock,
    pub scripts: RefCell<BTreeMap<String, VecDeque<Script>>>,
    pub calls: RefCell<Vec<SeenCall>>,
    pub latency_ms: u64,
    /// The last answer's rate-limit headers, until the cascade takes them.
    pub quota: RefCell<Vec<(String, String)>>,
}

impl<'c> FakeUpstream<'c> {
    pub fn new(clock: &'c FakeClock) -> Self {
        Self {
            clock,
            scripts: RefCell::default(),
            calls: RefCell::default(),
            latency_ms: 10,
            quota: RefCell::default(),
        }
    }

    pub fn script(&self, model: &str, replies: &[Script]) {
        self.scripts
            .borrow_mut()
            .entry(model.to_owned())
            .or_default()
            .extend(replies.iter().cloned());
    }

    pub fn keys_used(&self) -> Vec<String> {
        self.calls.borrow().iter().map(|c| c.key.clone()).collect()
    }

    pub fn count(&self) -> usize {
        self.calls.borrow().len()
    }
}

impl Upstream for FakeUpstream<'_> {
    type Body = String;

    async fn send(&self, call: Call<'_>) -> UpstreamReply<String> {
        self.calls.borrow_mut().push(SeenCall {
            model: call.model.upstream_model.clone(),
            key: call.key.secret.expose().to_owned(),
            timeout_ms: call.timeout_ms,
        });
        let script = self
            .scripts
            .borrow_mut()
            .get_mut(&call.model.upstream_model)
            .and_then(VecDeque::pop_front)
            .unwrap_or(Script::Ok);
        match script {
            Script::Timeout => self.clock.advance(call.timeout_ms),
            _ => self.clock.advance(self.latency_ms),
        }
        match script {
            Script::Ok => UpstreamReply::Success {
                status: 200,
                body: format!("answer from {}", call.model.upstream_model),
            },
            Script::OkWith(headers) => {
                let kept = headers
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
                *self.quota.borrow_mut() = kept.collect();
                UpstreamReply::Success {
                    status: 200,
                    body: format!("answer from {}", call.model.upstream_model),
                }
            }
            Script::Status(status, retry_after, text) => UpstreamReply::Status {
                status,
                retry_after: retry_after.map(str::to_owned),
                headers: Vec::new(),
                text: text.to_owned(),
            },
            Script::Timeout => UpstreamReply::Timeout,
            Script::Network => UpstreamReply::Network("connection refused".into()),
            Script::Broken => UpstreamReply::Broken {
                status: 200,
                detail: "body is not JSON".into(),
            },
            Script::Oversized => UpstreamReply::Oversized { status: 200 },
            Script::Cancelled => UpstreamReply::Cancelled,
            Script::Refusal => UpstreamReply::Success {
                status: 200,
                body: refusal_body(&call.model.upstream_model),
            },
        }
    }

    fn take_quota_headers(&self) -> Vec<(String, String)> {
        self.quota.take()
    }

    /// The edge's reading: the family's pure detector over the answer as the upstream wrote it.
    fn is_refusal(&self, body: &String) -> bool {
        cognigate::providers::refusal::is_refusal(
            cognigate::providers::Dialect::Openai,
            body.as_bytes(),
        )
    }
}

/// A refusal from `model` as an OpenAI-compatible upstream writes it.
pub fn refusal_body(model: &str) -> String {
    format!(
        r#"{{"model":"{model}","choices":[{{"index":0,"message":{{"role":"assistant","content":null}},"finish_reason":"content_filter"}}]}}"#
    )
}

/// A tenant with providers `p1`..`p3` (keys `<provider>-k1`..) and models `m1`..`m3`, one per
/// provider, plus a rule `chain` → [m1, m2, m3].
pub fn tenant(keys_per_provider: usize, strategy: &str) -> TenantConfig {
    let mut cfg = TenantConfig::empty(
        TenantId::parse("acme").unwrap(),
        Defaults::default().settings,
    );
    for i in 1..=3 {
        let keys: Vec<String> = (1..=keys_per_provider)
            .map(|k| format!("\"p{i}-k{k}\""))
            .collect();
        let body = format!(
            r#"{{"kind":"openai","base_url":"http://up{i}/v1","keys":[{}],"key_strategy":"{strategy}","timeout_ms":1000}}"#,
            keys.join(",")
        );
        let name = ProviderName::parse(&format!("p{i}")).unwrap();
        let provider = parse_body::<ProviderBody>(body.as_bytes())
            .unwrap()
            .validate(name.clone())
            .unwrap()
            .resolve(|_| None)
            .unwrap();
        cfg.providers.insert(name, provider);
        let model = format!(r#"{{"provider":"p{i}","context_window":8000}}"#);
        let id = ModelId::parse(&format!("m{i}")).unwrap();
        let m = parse_body::<ModelBody>(model.as_bytes())
            .unwrap()
            .validate(id.clone())
            .unwrap();
        cfg.models.insert(id, m);
    }
    let chain = ["m1", "m2", "m3"]
        .iter()
        .map(|n| cognigate::config::ChainEntry::Name(RouteName::parse(n).unwrap()))
        .collect();
    cfg.rules.insert(
        RouteName::parse("chain").unwrap(),
        cognigate::config::Chain::new(chain, 5).unwrap(),
    );
    cfg
}
