//! Trace export on workerd: a tenant's spans at a real OTLP receiver that decodes every export
//! with opentelemetry-proto (`tests/harness/otlp_receiver.py`), joined to the caller's trace.

mod export;
mod receiver;
