//! Spend and access policies over the in-memory store: caller-key policies, tenant limits, usage.

mod policies;
