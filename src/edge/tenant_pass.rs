//! The scheduled pass's routing port: a tenant's routing objects, over their fetch interface.
//! The pass (`crate::scheduled`) decides what to read and when to probe.

use super::alerts::publish;
use super::routing_client::{call_object, send_report, transition_event};
use crate::config::{ProviderName, TenantId};
use crate::health::{AcquireRequest, Lease, ReportRequest};
use crate::scheduled::{PassView, ProviderStates};
use worker::{Env, Method};

pub struct RoutingObjects<'a> {
    pub env: &'a Env,
}

impl ProviderStates for RoutingObjects<'_> {
    type Error = worker::Error;

    async fn pass_view(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
    ) -> worker::Result<PassView> {
        super::routing_client::pass_view(self.env, tenant, provider).await
    }

    async fn acquire_probe(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
        req: AcquireRequest,
    ) -> Option<Lease> {
        let body = serde_json::to_string(&req).ok();
        let lease: worker::Result<Lease> = call_object(
            self.env,
            tenant,
            provider.as_str(),
            Method::Post,
            "/probe",
            body,
        )
        .await;
        lease.ok()
    }

    /// Sent as a user request's report; each transition it causes is published like theirs.
    async fn report(&self, tenant: &TenantId, provider: &ProviderName, req: ReportRequest) {
        for t in send_report(self.env, tenant, provider, &req).await {
            let (kind, at, body) = transition_event(tenant, provider.as_str(), &t);
            publish(self.env, tenant.as_str(), &kind, at, &body).await;
        }
    }
}
