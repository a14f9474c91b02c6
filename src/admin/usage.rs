//! `GET /admin/v1/tenants/{t}/usage`: the flushed roll-ups, grouped.

use super::{config_error, json, Admin, AdminStore, Answer, ObjectControl};
use crate::config::TenantId;
use crate::governance::usage_query::{usage_answer, UsageQuery};

impl<S: AdminStore, R: ObjectControl> Admin<'_, S, R> {
    pub(super) async fn usage(&self, t: &TenantId, query: Option<&str>) -> Answer {
        let q = UsageQuery::parse(query).map_err(config_error)?;
        let groups = self.store.usage(t, &q).await?;
        json(200, &usage_answer(&groups))
    }
}
