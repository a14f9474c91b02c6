//! Tenants, their caller keys (policies and spend) and their usage, as admins see them.

use crate::config::Settings;
use crate::config::{KeyPolicy, Period};
use serde::{Deserialize, Serialize};

/// `{"data": [...]}`: every admin list.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct List<T> {
    pub data: Vec<T>,
}

/// `{"deleted": "<id or name>"}`: every admin delete.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct Deleted<'a> {
    pub deleted: &'a str,
}

/// A tenant as created and as read: its effective settings included.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct TenantView<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub created_at: u64,
    pub settings: Settings,
}

/// A tenant in the list of tenants.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize, Deserialize)]
pub struct TenantSummary {
    pub id: String,
    pub name: String,
    pub created_at: u64,
}

/// A caller key as listed: its policy and the spend in its budget's period; never the key.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct KeyView<'a> {
    pub id: &'a str,
    pub created_at: u64,
    #[serde(flatten)]
    pub policy: &'a KeyPolicy,
    /// `null` when the ledger could not be asked.
    pub spend: Option<SpendView>,
}

/// A key's spend in the current window of its budget's period (all time without a budget).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct SpendView {
    pub period: Period,
    /// The window's first millisecond.
    pub since: u64,
    pub usd: f64,
}

/// A caller key as a policy change left it.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct PolicyView<'a> {
    pub id: &'a str,
    pub created_at: u64,
    #[serde(flatten)]
    pub policy: &'a KeyPolicy,
}

/// A caller key just minted: the only answer that ever carries the key itself.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct NewKeyView<'a> {
    pub id: &'a str,
    pub key: &'a str,
    pub created_at: u64,
    #[serde(flatten)]
    pub policy: &'a KeyPolicy,
}
