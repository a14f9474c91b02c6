//! Who is calling: the caller key a request presented, as the request path knows it.

use super::names::TenantId;
use serde::{Deserialize, Serialize};

/// A caller key found by its hash: the tenant it belongs to and its public id (`key_...`),
/// which usage records and limits are kept under. The key itself is never held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallerKey {
    pub tenant: TenantId,
    pub id: String,
}
