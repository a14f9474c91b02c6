//! A refusal that comes as an error status: Azure OpenAI's content filter refuses a prompt with
//! a 400 whose `error.code` is `content_filter`.
//!
//! Watched for (`on_refusal: fallback`) on a non-streamed request, it is a served refusal the
//! fallback may answer; when the fallback is unavailable the caller gets it as the request's own
//! 400, in the caller's shape. It bills nothing: the provider generated nothing. Not watched for,
//! it stays the request-caused 400 it was.

use crate::api::passthrough_error;
use crate::cascade::{UpstreamBody, UpstreamReply};
use crate::config::Provider;
use crate::providers::refusal::is_status_refusal;
use crate::surfaces::Inbound;
use crate::usage::TokenCounts;

pub fn refused_status<S>(
    inbound: &Inbound,
    provider: &Provider,
    watching: bool,
    reply: UpstreamReply<UpstreamBody<S>>,
) -> UpstreamReply<UpstreamBody<S>> {
    match reply {
        UpstreamReply::Status { status, text, .. }
            if watching && !inbound.stream() && is_status_refusal(provider.kind, status, &text) =>
        {
            let error = passthrough_error(status, &text);
            UpstreamReply::Success {
                status,
                body: UpstreamBody::Full {
                    content_type: "application/json".to_owned(),
                    bytes: inbound.surface().error_json(&error).into_bytes(),
                    usage: Some(TokenCounts::default()),
                    headers_ms: 0,
                    refusal: true,
                },
            }
        }
        other => other,
    }
}
