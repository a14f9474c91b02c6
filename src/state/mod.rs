//! Mutable routing state as pure state machines with time passed in. The Durable Object holds one
//! `ProviderState` per tenant/provider and only moves these values in and out of storage.

pub mod breaker;
pub mod grant;
pub mod key_pool;
pub mod provider_state;

pub use breaker::{Admission, Breaker, Transition};
pub use grant::{Grant, LocalGrant};
pub use key_pool::KeyPool;
pub use provider_state::{
    AcquireRequest, BreakerView, Lease, Park, ProviderState, ReportRequest, Verdict,
};
