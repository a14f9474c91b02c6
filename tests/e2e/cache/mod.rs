//! The response cache on workerd: hits, and what never hits.

mod hardening;
mod hits;
