//! Whether a provider can take a request now, as pure state machines with time passed in: one
//! breaker per tenant/provider/model (`breaker`, whose `Gate` says pass, probe, skip or limited),
//! the key pool's parks (`key_pool`), the `rpm` window (`request_rate`), the admission grants an
//! isolate holds (`grant`, `grant_book`), the routing object's whole state and its two messages
//! (`provider_state`, `wire`, kept as storage holds it by `committed`) and a tenant's degraded
//! mode (`degraded`). The Durable Object holds one `ProviderState` per tenant/provider and only
//! moves these values in and out of storage.

pub mod breaker;
pub mod committed;
pub mod degraded;
pub mod grant;
pub mod grant_book;
pub mod headroom;
pub mod health_answer;
pub mod key_pool;
pub mod probe_record;
pub mod provider_health;
pub mod provider_state;
pub mod request_rate;
pub mod wire;

pub use breaker::{Breaker, Gate, Transition};
pub use grant::{Grant, LocalGrant};
pub use grant_book::{jittered, LocalAdmission, ProviderGrants};
pub use key_pool::KeyPool;
/// The largest integer a JavaScript number holds exactly (2^53 - 1). Every stored time is kept at
/// or below it: the routing object's storage and its callers' JSON pass through JS numbers, and a
/// larger value would either be refused or silently rounded.
pub const MAX_SAFE_MS: u64 = (1 << 53) - 1;

/// `now + ms`, saturating at `MAX_SAFE_MS` instead of overflowing or leaving the safe range.
pub fn safe_after(now: u64, ms: u64) -> u64 {
    now.saturating_add(ms).min(MAX_SAFE_MS)
}

pub use provider_state::{
    AcquireRequest, BreakerHealth, BreakerView, Lease, Park, PassView, ProviderState,
    ReportRequest, Verdict,
};
