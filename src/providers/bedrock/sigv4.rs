//! AWS Signature Version 4 for one Bedrock request, from the credentials and a time passed in.
//! The canonicalisation is botocore's for every service but S3: the path as sent is
//! percent-encoded once more (`%3A` → `%253A`), query pairs are sorted, the payload is hashed.

use super::key::BedrockKey;
use crate::config::period::civil_from_days;
use crate::providers::address::encode;
use sha2::{Digest, Sha256};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The headers to add to one request. For IAM credentials: `x-amz-date`, `x-amz-security-token`
/// when there is a session token, and `authorization`; the signed headers are `content-type`,
/// `host`, `x-amz-date` and the token (so the request must carry exactly this `host` and
/// `content-type`). For a Bedrock API key: the bearer `authorization` alone.
/// `path` is the path as sent (a leading `/` is implied), `query` the query string as sent
/// (empty for Bedrock), `now_ms` the epoch milliseconds to sign at.
#[allow(clippy::too_many_arguments)]
pub fn sign(
    key: BedrockKey<'_>,
    region: &str,
    service: &str,
    host: &str,
    path: &str,
    query: &str,
    body: &[u8],
    content_type: &str,
    now_ms: u64,
) -> Vec<(&'static str, String)> {
    let BedrockKey::Sigv4 {
        access_key_id,
        secret_access_key,
        session_token,
    } = key
    else {
        if let BedrockKey::ApiKey(token) = key {
            return vec![("authorization", format!("Bearer {token}"))];
        }
        return Vec::new();
    };
    let amz_date = amz_date(now_ms);
    let mut signed = vec![
        ("content-type", content_type),
        ("host", host),
        ("x-amz-date", amz_date.as_str()),
    ];
    if let Some(token) = session_token {
        signed.push(("x-amz-security-token", token));
    }
    let request = Request {
        method: "POST",
        path,
        query,
        headers: &signed,
        payload_hash: &hex::encode(Sha256::digest(body)),
    };
    let scope = Scope {
        access_key_id,
        secret_access_key,
        region,
        service,
        amz_date: &amz_date,
    };
    let authorization = authorization(&scope, &request);
    let mut out = vec![("x-amz-date", amz_date.clone())];
    if let Some(token) = session_token {
        out.push(("x-amz-security-token", token.to_owned()));
    }
    out.push(("authorization", authorization));
    out
}

/// The region a Bedrock runtime host names (`bedrock-runtime[-fips].<region>.amazonaws.com`,
/// and `.com.cn` in China), to sign for when the provider sets none.
pub fn region_of(host: &str) -> Option<&str> {
    let mut labels = host.split('.');
    let service = labels.next()?;
    let region = labels.next()?;
    (service.starts_with("bedrock") && !region.is_empty() && labels.next() == Some("amazonaws"))
        .then_some(region)
}

/// `YYYYMMDDTHHMMSSZ` in UTC.
pub fn amz_date(now_ms: u64) -> String {
    let secs = now_ms / 1_000;
    let (y, m, d) = civil_from_days(secs / 86_400);
    let t = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        t / 3_600,
        t / 60 % 60,
        t % 60
    )
}

/// Who signs, where, and when.
struct Scope<'a> {
    access_key_id: &'a str,
    secret_access_key: &'a str,
    region: &'a str,
    service: &'a str,
    amz_date: &'a str,
}

/// What is signed. `headers` are lower-case names; they are sorted here.
struct Request<'a> {
    method: &'a str,
    path: &'a str,
    query: &'a str,
    headers: &'a [(&'a str, &'a str)],
    payload_hash: &'a str,
}

fn authorization(scope: &Scope<'_>, req: &Request<'_>) -> String {
    let mut headers = req.headers.to_vec();
    headers.sort_unstable_by_key(|(name, _)| *name);
    let names: Vec<&str> = headers.iter().map(|(name, _)| *name).collect();
    let signed_headers = names.join(";");
    let canonical = canonical_request(req, &headers, &signed_headers);
    let date = scope.amz_date.get(..8).unwrap_or_default();
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.amz_date,
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let key = signing_key(scope.secret_access_key, date, scope.region, scope.service);
    let signature = hex::encode(hmac(&key, string_to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={signature}",
        scope.access_key_id
    )
}

fn canonical_request(req: &Request<'_>, sorted: &[(&str, &str)], signed_headers: &str) -> String {
    let path = if req.path.starts_with('/') {
        encode(req.path, true)
    } else {
        format!("/{}", encode(req.path, true))
    };
    let mut pairs: Vec<(&str, &str)> = req
        .query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    pairs.sort_unstable();
    let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = format!("{}\n{path}\n{}\n", req.method, query.join("&"));
    for (name, value) in sorted {
        out.push_str(name);
        out.push(':');
        // Values are trimmed and inner runs of spaces collapse to one.
        out.push_str(&value.split_whitespace().collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(signed_headers);
    out.push('\n');
    out.push_str(req.payload_hash);
    out
}

/// kSecret → kDate → kRegion → kService → kSigning.
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use hmac::Mac;
    match HmacSha256::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(msg);
            mac.finalize().into_bytes().into()
        }
        // HMAC takes a key of any length: this arm is never taken.
        Err(_) => [0; 32],
    }
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
