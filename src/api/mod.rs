//! Wire types: what callers and admins send and receive (the admin answer bodies are
//! `admin::views`).

pub mod error;

pub use error::{ApiError, AttemptSummary, ErrorKind, ErrorType, UpstreamFields};
pub mod chat;
pub mod header_lines;
pub mod raw_json;

pub use chat::{passthrough_error, ChatRequest};
pub mod endpoint;
pub mod route_table;
pub mod usage_sums;

pub use endpoint::Endpoint;
