//! The caller's answer as data: a status, every header it carries, and a body the runtime
//! makes. The edge turns it into a response with one write of its headers; host tests read it.

use super::admit::Governed;
use super::finish::StreamMetric;
use super::lookup::CacheWrite;
use crate::api::ApiError;
use crate::cascade::{OwedReport, PolicyFallback};
use crate::config::{CatalogModel, TenantId};
use crate::surfaces::Surface;
use crate::usage::PendingUsage;

pub type Headers = Vec<(&'static str, String)>;

pub struct Reply<S> {
    pub status: u16,
    /// Besides the body's `content-type` (and a stream's `cache-control`).
    pub headers: Headers,
    pub body: Body<S>,
}

pub enum Body<S> {
    Bytes {
        content_type: String,
        bytes: Vec<u8>,
    },
    /// A whole event stream made here (a cache hit replayed to a streaming caller).
    Events(Vec<u8>),
    /// The upstream's stream, relayed by the runtime from its first event on.
    Relay(Box<Relay<S>>),
}

/// A served stream, handed to the runtime with what it owes when the stream ends.
pub struct Relay<S> {
    pub start: S,
    pub tenant: TenantId,
    pub request_id: String,
    pub owed_report: OwedReport,
    /// A probe's timeout: while its stream runs, the probe is renewed for this long at a time.
    pub probe_hold_ms: u64,
    /// `None`: the serving model left the catalog, and the stream was counted as it started.
    pub bill: Option<StreamBill>,
    /// A copy assembled for the response cache (`None`: nothing is stored).
    pub store: Option<StreamStore>,
}

/// A stream's usage record, waiting for its tokens.
pub struct StreamBill {
    pub pending: PendingUsage,
    /// The model that serves the stream, whose prices it is charged at.
    pub model: CatalogModel,
    /// Charged when the stream reports no usage.
    pub prompt_estimate: u64,
    pub governed: Governed,
    /// The request's metric, finished with the stream's end and usage.
    pub metric: StreamMetric,
}

/// Where a completed stream's answer is stored, and who served it.
pub struct StreamStore {
    pub write: CacheWrite,
    pub surface: Surface,
    pub model: Option<CatalogModel>,
    /// Model, provider and fallback depth.
    pub served_by: (String, String, usize),
    /// The serving provider's platform.
    pub platform: Option<&'static str>,
}

impl<S> Reply<S> {
    /// The error in the shape the caller's surface reads.
    pub fn error(surface: Surface, err: &ApiError) -> Self {
        Self {
            status: err.status(),
            headers: Vec::new(),
            body: Body::Bytes {
                content_type: "application/json".to_owned(),
                bytes: surface.error_json(err).into_bytes(),
            },
        }
    }

    /// An error with `Retry-After` when its end is known.
    pub fn retry_after(surface: Surface, err: &ApiError, secs: Option<u64>) -> Self {
        let mut reply = Self::error(surface, err);
        if let Some(secs) = secs {
            reply.headers.push(("retry-after", secs.to_string()));
        }
        reply
    }

    pub fn bytes(status: u16, content_type: String, bytes: Vec<u8>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Bytes {
                content_type,
                bytes,
            },
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// Who served an answer, as its headers say.
pub struct ServedBy<'a> {
    pub depth: usize,
    pub model: &'a str,
    pub provider: &'a str,
    /// `X-CogniGate-Platform`: the serving provider's platform, while it is configured.
    pub platform: Option<&'static str>,
    pub truncated: Option<usize>,
    /// `X-CogniGate-Cost-Usd`: non-streamed answers, at the reported usage or else the estimate.
    pub cost_usd: Option<String>,
    /// `X-CogniGate-Cache-Affinity`: `hit` or `miss` when the requested name has affinity.
    pub cache_affinity: Option<&'static str>,
    /// `X-CogniGate-Policy-Fallback`: only when a safety refusal was seen.
    pub policy_fallback: Option<PolicyFallback>,
}

impl ServedBy<'_> {
    pub fn headers(&self, into: &mut Headers) {
        into.push(("x-cognigate-fallback-depth", self.depth.to_string()));
        into.push(("x-cognigate-model", self.model.to_owned()));
        into.push(("x-cognigate-provider", self.provider.to_owned()));
        if let Some(platform) = self.platform {
            into.push(("x-cognigate-platform", platform.to_owned()));
        }
        if let Some(dropped) = self.truncated {
            into.push(("x-cognigate-truncated", dropped.to_string()));
        }
        if let Some(cost) = &self.cost_usd {
            into.push(("x-cognigate-cost-usd", cost.clone()));
        }
        if let Some(v) = self.cache_affinity {
            into.push(("x-cognigate-cache-affinity", v.to_owned()));
        }
        if let Some(f) = self.policy_fallback {
            into.push(("x-cognigate-policy-fallback", f.as_str().to_owned()));
        }
    }
}
