//! What a Gemini error answer means for the cascade. Google's envelope:
//! `{"error": {"code", "message", "status", "details": [{"@type": "…RetryInfo", "retryDelay":
//! "12s"}, {"@type": "…ErrorInfo", "reason": "API_KEY_INVALID"}]}}` (Vertex may wrap it in a
//! one-element array).
//!
//! `None` where the status alone decides, as for any provider.

use serde_json::Value;

use crate::providers::ErrorClass;

/// The class of an error answer (`None`: by its status), and how long to park the key (ms) when Google said when to
/// come back (`RetryInfo.retryDelay` on a 429).
///
/// - 429 → next key (rate limit), parked for the retry delay;
/// - 400 → the request's own, except an invalid API key (next key, auth) and a failed
///   precondition (the project or region cannot use the API: next candidate);
/// - 401, 403 → next key (auth); 404 → next candidate (not found);
/// - 500, 503 → next candidate (server); 504 → next candidate (timeout);
/// - anything else by its status.
pub fn classify(status: u16, body: &str) -> (Option<ErrorClass>, Option<u64>) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let envelope = match &parsed {
        Some(Value::Array(list)) => list.first(),
        other => other.as_ref(),
    };
    let error = envelope.and_then(|e| e.get("error"));
    let details = error
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let class = match status {
        429 => {
            let park = details.iter().find_map(|d| {
                d.get("retryDelay")
                    .and_then(Value::as_str)
                    .and_then(duration_ms)
            });
            return (Some(ErrorClass::RateLimit), park);
        }
        400 if details.iter().any(|d| reason(d) == Some("API_KEY_INVALID")) => {
            Some(ErrorClass::Auth)
        }
        400 if error.and_then(|e| e.get("status")).and_then(Value::as_str)
            == Some("FAILED_PRECONDITION") =>
        {
            Some(ErrorClass::UpstreamClientError)
        }
        400 => Some(ErrorClass::RequestCaused),
        401 | 403 => Some(ErrorClass::Auth),
        404 => Some(ErrorClass::NotFound),
        500 | 503 => Some(ErrorClass::Server),
        504 => Some(ErrorClass::Timeout),
        _ => None,
    };
    (class, None)
}

fn reason(detail: &Value) -> Option<&str> {
    detail.get("reason").and_then(Value::as_str)
}

/// A protobuf Duration in JSON (`"12s"`, `"0.5s"`, `"1.000340012s"`) in ms, rounded up so a
/// sub-millisecond delay still parks; `None` for zero or anything else.
fn duration_ms(d: &str) -> Option<u64> {
    let secs = d.trim().strip_suffix('s')?;
    let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) || frac.len() > 9 {
        return None;
    }
    // Saturating: a "come back in a century" is capped by the caller, not refused here.
    let whole: u64 = whole.parse().unwrap_or(u64::MAX);
    let nanos: u64 = format!("{frac:0<9}").parse().unwrap_or(0);
    let ms = whole
        .saturating_mul(1000)
        .saturating_add(nanos.div_ceil(1_000_000));
    (ms > 0).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn google(code: u16, status: &str, details: Value) -> String {
        json!({"error": {"code": code, "message": "m", "status": status, "details": details}})
            .to_string()
    }

    fn retry(delay: &str) -> Value {
        json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}])
    }

    #[test]
    fn resource_exhausted_rotates_the_key_parked_for_the_retry_delay() {
        let body = google(429, "RESOURCE_EXHAUSTED", retry("12s"));
        assert_eq!(
            classify(429, &body),
            (Some(ErrorClass::RateLimit), Some(12_000))
        );
        let body = google(429, "RESOURCE_EXHAUSTED", retry("0.5s"));
        assert_eq!(classify(429, &body).1, Some(500));
        assert_eq!(classify(429, "quota"), (Some(ErrorClass::RateLimit), None));
    }

    #[test]
    fn a_retry_delay_is_a_protobuf_duration_rounded_up_to_the_millisecond() {
        assert_eq!(duration_ms("1.000340012s"), Some(1_001));
        assert_eq!(duration_ms("0.0000001s"), Some(1));
        assert_eq!(duration_ms("30s"), Some(30_000));
        for bad in [
            "0s",
            "0.000s",
            "12",
            "s",
            ".5s",
            "-1s",
            "1.5ms",
            "1.0000000001s",
            "x",
        ] {
            assert_eq!(duration_ms(bad), None, "{bad}");
        }
        assert_eq!(
            duration_ms("99999999999999999999999s"),
            Some(u64::MAX),
            "saturates"
        );
    }

    #[test]
    fn invalid_argument_is_the_requests_own_but_an_invalid_api_key_rotates_the_key() {
        let body = google(400, "INVALID_ARGUMENT", json!([]));
        assert_eq!(
            classify(400, &body),
            (Some(ErrorClass::RequestCaused), None)
        );
        let info = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]);
        let body = google(400, "INVALID_ARGUMENT", info.clone());
        assert_eq!(classify(400, &body), (Some(ErrorClass::Auth), None));
        // Vertex wraps the envelope in an array.
        let wrapped = format!("[{}]", google(400, "INVALID_ARGUMENT", info));
        assert_eq!(classify(400, &wrapped).0, Some(ErrorClass::Auth));
        assert_eq!(classify(400, "<html>").0, Some(ErrorClass::RequestCaused));
    }

    #[test]
    fn a_failed_precondition_moves_to_the_next_candidate() {
        let body = google(400, "FAILED_PRECONDITION", json!([]));
        assert_eq!(
            classify(400, &body).0,
            Some(ErrorClass::UpstreamClientError)
        );
    }

    #[test]
    fn auth_not_found_server_and_timeout_statuses_map_as_the_table_says() {
        for (status, class) in [
            (401, Some(ErrorClass::Auth)),
            (403, Some(ErrorClass::Auth)),
            (404, Some(ErrorClass::NotFound)),
            (500, Some(ErrorClass::Server)),
            (503, Some(ErrorClass::Server)),
            (504, Some(ErrorClass::Timeout)),
        ] {
            let body = google(status, "X", json!([]));
            assert_eq!(classify(status, &body), (class, None), "{status}");
        }
    }

    #[test]
    fn other_statuses_are_classified_by_their_status_as_any_providers_are() {
        for status in [200, 409, 413, 422, 502, 302] {
            assert_eq!(classify(status, "{}"), (None, None), "{status}");
        }
    }
}
