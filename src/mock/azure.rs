//! The mock speaking Azure OpenAI (`POST /openai/deployments/{deployment}/...`), strict where the
//! real one is: the key in `api-key` (a bearer token is not it), and `api-version` on every call.
//! The deployment in the path names the model; the body's `model` is ignored, as Azure ignores it.

use serde_json::json;

/// The deployment a path names, when it is an Azure OpenAI path.
pub fn deployment(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/openai/deployments/")?;
    rest.split('/').next().filter(|d| !d.is_empty())
}

fn error(status: u16, code: &str, message: &str) -> Option<(u16, String)> {
    Some((
        status,
        json!({"error": {"code": code, "message": message}}).to_string(),
    ))
}

/// The refusal the real service would give this call, if any.
pub fn refusal(path: &str, headers: &[(String, String)]) -> Option<(u16, String)> {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    let version = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .any(|(k, v)| k == "api-version" && !v.is_empty());
    if !version {
        return error(
            404,
            "404",
            "Resource not found: the api-version query parameter is required.",
        );
    }
    let key = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("api-key") && !v.is_empty());
    if !key {
        return error(
            401,
            "401",
            "Access denied due to invalid subscription key or wrong API endpoint.",
        );
    }
    None
}
