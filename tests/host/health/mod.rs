//! Provider health over the in-memory store and fake ports: alert settings and degraded mode.

mod alerts;
mod degraded;
