//! Who is calling: the caller key a request presented, as the request path knows it.

use super::names::TenantId;
use crate::config::KeyPolicy;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// A caller key found by its hash: the tenant it belongs to, its public id (`ck_...`), which
/// usage records and limits are kept under, and its policy (read with it, so a warm request
/// needs no query for it). The key itself is never held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallerKey {
    pub tenant: TenantId,
    pub id: String,
    /// Shared: every request of the key clones the cached entry.
    #[serde(default)]
    pub policy: Rc<KeyPolicy>,
    /// The generation of its tenant (`usage::generation`), read with the key: a key belongs to
    /// the creation of the tenant it was minted in, so usage of a key that outlived its tenant
    /// in a cache carries a deleted generation and is dropped.
    #[serde(default)]
    pub generation: u64,
}
