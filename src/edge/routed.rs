//! A caller request's route from this isolate's view: live stats, the breakers it knows open and
//! its affinity memory, at one instant and one random draw (`request::resolve` decides).

use super::http::{now_ms, random_bytes, CallerRequest};
use super::live_stats::IsolateView;
use super::open_breakers::WithOpenBreakers;
use crate::api::ApiError;
use crate::config::{CallerKey, TenantConfig};
use crate::request::resolve::{resolve, Resolved, View};
use crate::surfaces::Inbound;

pub(super) fn route<'c>(
    req: &CallerRequest,
    cfg: &'c TenantConfig,
    key: &CallerKey,
    inbound: &Inbound,
) -> Result<Resolved<'c>, ApiError> {
    let now_ms = now_ms();
    let isolate = IsolateView {
        tenant: &cfg.tenant,
        now_ms,
    };
    let observed = WithOpenBreakers(&isolate);
    let draw = random_bytes::<8>().map_or(0, u64::from_le_bytes);
    super::affinity_memory::with(|memory| {
        let view = View {
            observed: &observed,
            memory,
            now_ms,
            draw,
        };
        resolve(req, cfg, key, inbound, &view)
    })
}
