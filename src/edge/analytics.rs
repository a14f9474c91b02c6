//! One Workers Analytics Engine data point per request, when the `ANALYTICS` binding
//! is configured. Whether it is is read once per isolate; without it a request pays one
//! thread-local read. The schema (docs/operate.md, "Analytics Engine"):
//! index1 tenant; blob1 tenant, blob2 model (served, else requested), blob3 provider (empty when
//! nothing served), blob4 outcome; double1 fallback depth, double2 latency ms, double3 TTFB ms,
//! double4 prompt tokens, double5 completion tokens, double6 cost USD, double7 upstream calls.

use super::events::{fault, Fault};
use super::isolate::isolate;
use super::metrics_sink::Extra;
use crate::config::TenantId;
use crate::metrics::counts::{RequestMetric, MAX_LABEL_BYTES};
use worker::js_sys::Reflect;
use worker::wasm_bindgen::JsValue;
use worker::{AnalyticsEngineDataPointBuilder, Env};

const BINDING: &str = "ANALYTICS";

fn present(env: &Env) -> bool {
    isolate(|i| {
        *i.analytics_present.get().get_or_insert_with(|| {
            let env: &JsValue = env.as_ref();
            let found = Reflect::get(env, &JsValue::from_str(BINDING))
                .is_ok_and(|v| !v.is_undefined() && !v.is_null());
            i.analytics_present.set(Some(found));
            found
        })
    })
}

pub fn write(env: &Env, tenant: &TenantId, m: &RequestMetric, extra: &Extra<'_>) {
    if !present(env) {
        return;
    }
    let tokens = extra.tokens.unwrap_or_default();
    let point = AnalyticsEngineDataPointBuilder::new()
        .indexes([tenant.as_str()])
        .add_blob(tenant.as_str())
        .add_blob(crate::config::text::truncated(&m.model, MAX_LABEL_BYTES))
        .add_blob(extra.provider)
        .add_blob(m.outcome.as_str())
        .doubles([
            f64::from(m.depth),
            m.latency_ms as f64,
            m.ttfb_ms as f64,
            tokens.prompt as f64,
            tokens.completion as f64,
            m.cost_usd.unwrap_or(0.0),
            m.attempts.len() as f64,
        ])
        .build();
    let written = env
        .analytics_engine(BINDING)
        .and_then(|ds| ds.write_data_point(&point));
    if let Err(e) = written {
        fault(Fault::AnalyticsNotWritten { error: &e });
    }
}
