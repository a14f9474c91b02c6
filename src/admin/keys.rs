//! Caller keys and their policies: minted with an optional policy, changed by PATCH, listed with
//! the spend of the period their budget names (never the key itself).

use super::store::{KeyRow, NewKey, PolicyPatch};
use super::{json, not_found, Admin, AdminStore, Answer, ObjectControl};
use crate::admin::views::{Deleted, KeyView, List, NewKeyView, PolicyView, SpendView};
use crate::callers::auth::{hash_key, mint_caller_key};
use crate::config::admin_body::parse_optional_body;
use crate::config::sealed::Kek;
use crate::config::TenantId;
use crate::config::{KeyPolicy, KeyPolicyChange, Period};
use crate::usage::spend::Spend;

/// A key's row with its spend in the current window of its budget's period (all time for a key
/// without a budget); `null` when the ledger could not be asked.
fn with_spend(row: &KeyRow, spend: Option<Spend>, now: u64) -> KeyView<'_> {
    let period = row.policy.budget.map_or(Period::Total, |b| b.period);
    KeyView {
        id: &row.id,
        created_at: row.created_at,
        policy: &row.policy,
        spend: spend.map(|s| SpendView {
            period,
            since: period.start_ms(now),
            usd: s.in_period(period, now),
        }),
    }
}

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn create_key(&self, t: &TenantId, body: &[u8]) -> Answer {
        let policy = parse_optional_body::<KeyPolicyChange>(body)?.apply_to(KeyPolicy::default())?;
        let mac = self.cx.kek.map(Kek::caller_key_mac);
        let (id, key) = mint_caller_key(&self.random::<32>()?, mac);
        let stored = NewKey {
            id,
            key_hash: hash_key(&key),
            created_at: self.cx.now,
            policy,
        };
        self.store.insert_key(t, &stored).await?;
        let view = NewKeyView {
            id: &stored.id,
            key: &key,
            created_at: stored.created_at,
            policy: &stored.policy,
        };
        json(201, &view)
    }

    pub(super) async fn list_keys(&self, t: &TenantId) -> Answer {
        let rows = self.store.list_keys(t).await?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let spends = self.routing.spend(t, &ids).await.ok();
        let data = rows
            .iter()
            .map(|r| {
                let spend = spends
                    .as_ref()
                    .map(|s| s.get(&r.id).copied().unwrap_or_default());
                with_spend(r, spend, self.cx.now)
            })
            .collect();
        json(200, &List { data })
    }

    /// Absent fields stay, `null` clears one, a value replaces it. The change is merged into the
    /// policy stored at the moment of the write, field by field, in one step: two PATCHes that
    /// race both land, as they would applied one after the other. Other isolates apply it within
    /// `CONFIG_TTL_MS`.
    pub(super) async fn patch_key(&self, t: &TenantId, id: &str, body: &[u8]) -> Answer {
        let patch = PolicyPatch::new(parse_optional_body::<KeyPolicyChange>(body)?)?;
        let row = self.store.merge_key_policy(t, id, &patch).await?;
        let row = row.ok_or_else(|| not_found(&format!("The API key '{id}'")))?;
        let view = PolicyView {
            id: &row.id,
            created_at: row.created_at,
            policy: &row.policy,
        };
        json(200, &view)
    }

    pub(super) async fn delete_key(&self, t: &TenantId, id: &str) -> Answer {
        if !self.store.delete_key(t, id).await? {
            return Err(not_found(&format!("The API key '{id}'")));
        }
        json(200, &Deleted { deleted: id })
    }
}
