//! Tenants (their caller keys are in `keys`).

use super::store::{Created, TenantRow};
use super::{conflict, json, not_found, Admin, AdminStore, Answer, ObjectControl};
use crate::admin::views::{Deleted, List, TenantSummary, TenantView};
use crate::config::admin_body::{parse_body, TenantBody};
use crate::config::alias::default_aliases;
use crate::config::Settings;
use crate::config::{SettingsOverrides, TenantId};

fn tenant_view(row: &TenantRow, settings: Settings) -> TenantView<'_> {
    TenantView {
        id: row.id.as_str(),
        name: &row.name,
        created_at: row.created_at,
        settings,
    }
}

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn create_tenant(&self, body: &[u8]) -> Answer {
        let (id, name) = parse_body::<TenantBody>(body).and_then(TenantBody::validate)?;
        let row = TenantRow {
            id,
            name,
            created_at: self.cx.now,
        };
        let aliases: Vec<_> = default_aliases().into_iter().collect();
        if self.store.create_tenant(&row, &aliases).await? == Created::AlreadyExists {
            return Err(conflict(format!("Tenant '{}' already exists.", row.id)));
        }
        let settings = self.cx.defaults.effective(&SettingsOverrides::default());
        json(201, &tenant_view(&row, settings))
    }

    pub(super) async fn list_tenants(&self) -> Answer {
        let rows = self.store.list_tenants().await?;
        let data = rows
            .into_iter()
            .map(|r| TenantSummary {
                id: r.id.to_string(),
                name: r.name,
                created_at: r.created_at,
            })
            .collect();
        json(200, &List { data })
    }

    pub(super) async fn get_tenant(&self, t: &TenantId) -> Answer {
        let found = self.store.tenant(t).await?;
        let record = found.ok_or_else(|| not_found(&format!("Tenant '{t}'")))?;
        let settings = self.cx.defaults.effective(&record.settings);
        json(200, &tenant_view(&record.row, settings))
    }

    /// Everything the tenant owns goes, then its providers' routing state, so a tenant created
    /// again under the same id starts with closed breakers and no parks.
    pub(super) async fn delete_tenant(&self, t: &TenantId) -> Answer {
        let providers = self.store.provider_names(t).await?;
        self.store.delete_tenant(t).await?;
        for p in &providers {
            self.routing.wipe(t, p).await;
        }
        self.routing.wipe_ledger(t).await;
        json(
            200,
            &Deleted {
                deleted: t.as_str(),
            },
        )
    }
}
