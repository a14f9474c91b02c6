//! A provider's `base_url`: parsed by the `url` crate (the WHATWG rules `fetch` itself applies),
//! so what is validated here is exactly what the gateway will call.

use super::ConfigError;
use serde::{Deserialize, Serialize};

/// An `http(s)://host[:port][/path]` prefix without a trailing slash, userinfo, query or fragment.
///
/// Plain `http://` parses, so a row stored before the https rule still loads; whether it may be
/// called is [`BaseUrl::check_transport`]'s decision, at write time and again at load time.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BaseUrl(String);

/// The deployment var that lets providers be called over plain http (local vLLM or Ollama).
pub const ALLOW_HTTP_VAR: &str = "ALLOW_HTTP_UPSTREAMS";

impl BaseUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn join(&self, path: &str) -> String {
        format!("{}/{}", self.0, path.trim_start_matches('/'))
    }

    pub fn is_https(&self) -> bool {
        self.0.starts_with("https://")
    }

    /// Provider keys travel in headers, so they may only go over TLS unless the deployment opted
    /// into plain http (`ALLOW_HTTP_UPSTREAMS = "true"`).
    pub fn check_transport(&self, allow_http: bool) -> Result<(), ConfigError> {
        transport("base_url", self.is_https(), allow_http)
    }
}

impl TryFrom<String> for BaseUrl {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<Self, ConfigError> {
        let bad = |why: &str| ConfigError::invalid("base_url", why);
        let url = http_url(&s, "base_url")?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("may not carry a query or a fragment"));
        }
        // The parser's own serialisation: lower-cased host, default port dropped, dot segments
        // resolved. `as_str` of an http(s) URL always has a path, at least "/".
        Ok(Self(url.as_str().trim_end_matches('/').to_owned()))
    }
}

/// Plain http only where the deployment opted in: the rule for every URL the gateway calls
/// (providers, webhooks).
pub(crate) fn transport(field: &str, https: bool, allow_http: bool) -> Result<(), ConfigError> {
    if https || allow_http {
        return Ok(());
    }
    Err(ConfigError::invalid(
        field,
        format!("must use https:// (plain http:// needs the deployment var {ALLOW_HTTP_VAR} = \"true\")"),
    ))
}

/// The checks every URL the gateway calls passes (a provider's `base_url`, a webhook): an
/// `http(s)://` URL naming a host, without whitespace, backslashes or credentials, parsed by
/// the WHATWG rules `fetch` applies. What may follow the host is the caller's rule.
pub(crate) fn http_url(s: &str, field: &str) -> Result<url::Url, ConfigError> {
    let bad = |why: &str| ConfigError::invalid(field, why);
    if s.len() > 2048 {
        return Err(bad("must be at most 2048 characters"));
    }
    // The URL parser would quietly strip these (and accept `https:host`); refuse them instead.
    if !(s.starts_with("https://") || s.starts_with("http://")) {
        return Err(bad("must start with http:// or https://"));
    }
    if s.split_once("://")
        .is_some_and(|(_, rest)| rest.starts_with('/'))
    {
        return Err(bad("must name a host"));
    }
    if s.chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err(bad("may not contain whitespace or backslashes"));
    }
    let url = parse_url(s).map_err(|e| bad(&format!("is not a valid URL ({e})")))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("must name a host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("may not carry credentials"));
    }
    Ok(url)
}

/// The `url` crate without international domain names: Cargo.lock pins `idna_adapter` to its
/// no-Unicode stream (1.0), which drops ICU4X's tables from the module (about 110 KB raw, 47 KB
/// gzipped). On wasm, a URL whose host needs them (non-ASCII, or an `xn--` label to check) is
/// first put in its ASCII form by the runtime's own WHATWG `URL`, the parser `fetch` uses; what
/// that refuses is refused as the ICU4X-backed parser refused it.
#[cfg(target_arch = "wasm32")]
fn parse_url(s: &str) -> Result<url::Url, url::ParseError> {
    if s.is_ascii() && !s.to_ascii_lowercase().contains("xn--") {
        return url::Url::parse(s);
    }
    match runtime::href(s) {
        Some(ascii) => url::Url::parse(&ascii),
        None => url::Url::parse(s).and(Err(url::ParseError::IdnaError)),
    }
}

/// Host builds (tests, the mock provider) read ASCII hosts only.
#[cfg(not(target_arch = "wasm32"))]
fn parse_url(s: &str) -> Result<url::Url, url::ParseError> {
    url::Url::parse(s)
}

#[cfg(target_arch = "wasm32")]
mod runtime {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_name = URL)]
        type Url;
        #[wasm_bindgen(constructor, js_class = "URL", catch)]
        fn new(s: &str) -> Result<Url, JsValue>;
        #[wasm_bindgen(method, getter)]
        fn href(this: &Url) -> String;
    }

    /// `new URL(s).href`: hosts in their ASCII (punycode) form; `None` where `URL` throws.
    pub fn href(s: &str) -> Option<String> {
        Url::new(s).ok().map(|u| u.href())
    }
}

impl From<BaseUrl> for String {
    fn from(u: BaseUrl) -> String {
        u.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<String, ConfigError> {
        BaseUrl::try_from(s.to_owned()).map(String::from)
    }

    #[test]
    fn base_url_keeps_its_stored_form_without_the_trailing_slash() {
        assert_eq!(
            parse("https://api.openai.com/v1/"),
            Ok("https://api.openai.com/v1".to_owned())
        );
        assert_eq!(
            parse("http://127.0.0.1:9000/v1"),
            Ok("http://127.0.0.1:9000/v1".to_owned())
        );
        assert_eq!(parse("https://h"), Ok("https://h".to_owned()));
        assert_eq!(
            BaseUrl::try_from("https://x/v1".to_owned()).map(|u| u.join("/chat/completions")),
            Ok("https://x/v1/chat/completions".to_owned())
        );
    }

    #[test]
    fn base_url_refuses_what_the_url_parser_refuses() {
        for bad in [
            "https://h:99999",
            "https://[::1",
            "https://",
            "https:///v1",
            "ftp://x",
            "https:x",
            "https://a b/v1",
        ] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
        assert_eq!(
            parse("https://[::1]:8443/v1"),
            Ok("https://[::1]:8443/v1".to_owned())
        );
    }

    #[test]
    fn base_url_refuses_userinfo_query_and_fragment() {
        for bad in [
            "https://user:pw@host/v1",
            "https://user@host",
            "https://host/v1?x=1",
            "https://host/v1?",
            "https://host/v1#frag",
        ] {
            let err = parse(bad).err();
            assert_eq!(
                err.as_ref().and_then(|e| e.field()),
                Some("base_url"),
                "{bad}"
            );
        }
    }

    #[test]
    fn plain_http_needs_allow_http_upstreams_and_https_never_does() {
        let http = BaseUrl::try_from("http://127.0.0.1:11434/v1".to_owned()).unwrap();
        let https = BaseUrl::try_from("https://api.openai.com/v1".to_owned()).unwrap();
        assert_eq!(
            http.check_transport(false)
                .err()
                .as_ref()
                .and_then(|e| e.field()),
            Some("base_url")
        );
        assert!(http.check_transport(true).is_ok());
        assert!(https.check_transport(false).is_ok());
        assert!(https.check_transport(true).is_ok());
    }
}
