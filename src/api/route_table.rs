//! The operation tables (method, path template) every route answers to: the OpenAPI document must
//! list exactly these, and a 405's `Allow` header is read from them, so neither can drift from
//! the router.

/// Every admin operation as (method, path template): the OpenAPI document must list exactly
/// these, and the end-to-end suite checks the worker answers each of them.
pub const ADMIN_OPERATIONS: &[(&str, &str)] = &[
    ("get", "/admin/v1/openapi.json"),
    ("get", "/admin/v1/tenants"),
    ("post", "/admin/v1/tenants"),
    ("get", "/admin/v1/tenants/{tenant}"),
    ("delete", "/admin/v1/tenants/{tenant}"),
    ("get", "/admin/v1/tenants/{tenant}/api-keys"),
    ("post", "/admin/v1/tenants/{tenant}/api-keys"),
    ("patch", "/admin/v1/tenants/{tenant}/api-keys/{key_id}"),
    ("delete", "/admin/v1/tenants/{tenant}/api-keys/{key_id}"),
    ("get", "/admin/v1/tenants/{tenant}/providers"),
    ("get", "/admin/v1/tenants/{tenant}/providers/{provider}"),
    ("put", "/admin/v1/tenants/{tenant}/providers/{provider}"),
    ("delete", "/admin/v1/tenants/{tenant}/providers/{provider}"),
    ("get", "/admin/v1/tenants/{tenant}/models"),
    ("get", "/admin/v1/tenants/{tenant}/models/{model}"),
    ("put", "/admin/v1/tenants/{tenant}/models/{model}"),
    ("delete", "/admin/v1/tenants/{tenant}/models/{model}"),
    ("get", "/admin/v1/tenants/{tenant}/aliases"),
    ("get", "/admin/v1/tenants/{tenant}/aliases/{alias}"),
    ("put", "/admin/v1/tenants/{tenant}/aliases/{alias}"),
    ("delete", "/admin/v1/tenants/{tenant}/aliases/{alias}"),
    ("get", "/admin/v1/tenants/{tenant}/routing-rules"),
    ("put", "/admin/v1/tenants/{tenant}/routing-rules"),
    ("delete", "/admin/v1/tenants/{tenant}/routing-rules/{rule}"),
    (
        "post",
        "/admin/v1/tenants/{tenant}/routing-rules/{rule}/sort",
    ),
    ("get", "/admin/v1/tenants/{tenant}/settings"),
    ("put", "/admin/v1/tenants/{tenant}/settings"),
    ("get", "/admin/v1/tenants/{tenant}/events"),
    ("post", "/admin/v1/tenants/{tenant}/breakers/reset"),
    ("get", "/admin/v1/tenants/{tenant}/usage"),
    ("get", "/admin/v1/tenants/{tenant}/stats"),
    ("get", "/admin/v1/tenants/{tenant}/explain"),
    ("get", "/admin/v1/metrics"),
];

/// Every caller operation: documented in the same OpenAPI document, and none of them admin.
pub const CALLER_OPERATIONS: &[(&str, &str)] = &[
    ("post", "/v1/chat/completions"),
    ("post", "/v1/messages"),
    ("post", "/v1/messages/count_tokens"),
    ("post", "/v1/responses"),
    ("post", "/v1/embeddings"),
    ("get", "/v1/models"),
    ("get", "/v1/models/metrics"),
    ("get", "/v1/models/{model}"),
    ("get", "/v1/health"),
    ("get", "/v1/providers/health"),
];

/// The console's files: public, no credential, documented with the rest.
pub const CONSOLE_OPERATIONS: &[(&str, &str)] = &[
    ("get", "/console"),
    ("get", "/console/app.js"),
    ("get", "/console/app.css"),
];

/// The methods a path answers to, for the `Allow` header of a 405 (from the operation tables, so
/// it cannot disagree with the OpenAPI document). A `{model}` at the end of a template takes the
/// rest of the path, since model ids may carry a raw `/`.
pub fn allowed_methods(path: &str) -> Vec<&'static str> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let mut methods: Vec<&'static str> = ADMIN_OPERATIONS
        .iter()
        .chain(CALLER_OPERATIONS)
        .chain(CONSOLE_OPERATIONS)
        .filter(|(_, template)| matches_template(template, &segments))
        .map(|(method, _)| match *method {
            "get" => "GET",
            "put" => "PUT",
            "post" => "POST",
            "delete" => "DELETE",
            _ => "PATCH",
        })
        .collect();
    crate::config::sort::sort(&mut methods);
    methods.dedup();
    methods
}

/// Whether the runtime binding cannot name this method. `worker::Method` reads every method it
/// does not know (QUERY, PROPFIND, anything) as GET, so without this check such a request would
/// get a GET's answer instead of 405.
pub fn is_unknown_method(raw: &str) -> bool {
    const KNOWN: [&str; 10] = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "REPORT",
    ];
    !KNOWN.iter().any(|m| m.eq_ignore_ascii_case(raw))
}

fn matches_template(template: &str, segments: &[&str]) -> bool {
    let parts: Vec<&str> = template.split('/').collect();
    let rest_is_model = parts.last() == Some(&"{model}") && template.starts_with("/v1/");
    if parts.len() != segments.len() && !(rest_is_model && segments.len() > parts.len()) {
        return false;
    }
    parts
        .iter()
        .zip(segments)
        .all(|(p, s)| (p.starts_with('{') && !s.is_empty()) || p == s)
}

/// A concrete path for a template, with example names.
pub fn example_path(template: &str) -> String {
    template
        .replace("{tenant}", "acme")
        .replace("{key_id}", "ck_0000")
        .replace("{provider}", "openai")
        .replace("{model}", "gpt-4o")
        .replace("{alias}", "fast")
        .replace("{rule}", "best")
}
