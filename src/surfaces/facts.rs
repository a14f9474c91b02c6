//! A request's facts for the conditions of routing rules and restrictions, built at the
//! boundary from the parsed request (its chat view, which every surface has), the client's
//! headers and the `X-CogniGate-Metadata` header. Only what the tenant's conditions read is
//! computed: a tenant with no `when` builds nothing, the header costs its presence check unless
//! a caller sends it, and the client and task are detected only when a condition reads them.

use super::count_tokens::CountRequest;
use super::{Inbound, Surface};
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::config::condition::Reads;
use crate::config::SortedMap;
use crate::routing::facts::{Endpoint, RequestFacts};

/// A request's headers by lower-case name, as the request path reads them.
pub type Headers<'a, 'h> = &'a dyn Fn(&str) -> Option<&'h str>;

/// The header's name, as errors name it.
pub const METADATA_HEADER: &str = "X-CogniGate-Metadata";
/// The header as the request path looks it up.
pub const METADATA_NAME: &str = "x-cognigate-metadata";
/// The largest header value accepted, in bytes.
pub const MAX_METADATA_BYTES: usize = 2048;

fn bad_metadata(why: &str) -> ApiError {
    ApiError::new(
        ErrorKind::InvalidRequest,
        format!("{METADATA_HEADER} must be {why}."),
    )
    .with_param(METADATA_HEADER)
}

/// The header's labels: a JSON object of string values, at most `MAX_METADATA_BYTES`. Anything
/// else is a 400 naming the header (the labels are untrusted; they only choose among the
/// tenant's own rules).
pub fn parse_metadata(raw: &str) -> Result<SortedMap<String, String>, ApiError> {
    if raw.len() > MAX_METADATA_BYTES {
        return Err(bad_metadata("at most 2048 bytes"));
    }
    serde_json::from_str::<SortedMap<String, String>>(raw)
        .map_err(|_| bad_metadata("a JSON object of string values"))
}

/// The facts the tenant's conditions read (`reads`), or `None` when none has a `when`.
pub fn facts(
    inbound: &Inbound,
    reads: Reads,
    headers: Headers<'_, '_>,
) -> Result<Option<RequestFacts>, ApiError> {
    let Some(metadata) = labels(reads, headers(METADATA_NAME))? else {
        return Ok(None);
    };
    let chat = inbound.chat();
    let agent = reads.agent.then(|| super::agent::detect(headers));
    let task = agent
        .filter(|_| reads.task)
        .map(|a| super::task::task(chat, a));
    let tools = declares_tools(chat);
    let max_tokens = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|f| chat.raw(f).and_then(|raw| raw.parse::<u64>().ok()));
    Ok(Some(RequestFacts {
        model: inbound.model().to_owned(),
        stream: inbound.stream(),
        tools,
        max_tokens,
        // Every surface's chat view carries images as `image_url` parts; a caller's text that
        // spells the word has its quotes escaped, so only a part (or key) matches.
        has_images: reads.has_images
            && chat
                .raw("messages")
                .is_some_and(|m| m.contains("\"image_url\"")),
        endpoint: endpoint(inbound.surface()),
        metadata,
        task,
        agent,
    }))
}

/// The labels the rules read; `None` when no rule has a `when` (no facts at all). A present
/// header is checked whatever the rules, so a bad one is refused the same way for every tenant.
fn labels(
    reads: Reads,
    metadata_header: Option<&str>,
) -> Result<Option<SortedMap<String, String>>, ApiError> {
    let metadata = metadata_header.map(parse_metadata).transpose()?;
    if !reads.any {
        return Ok(None);
    }
    Ok(Some(
        metadata.filter(|_| reads.metadata).unwrap_or_default(),
    ))
}

/// `tools` is a non-empty array.
pub fn declares_tools(req: &ChatRequest) -> bool {
    req.raw("tools")
        .and_then(|t| serde_json::from_str::<Vec<serde::de::IgnoredAny>>(t).ok())
        .is_some_and(|t| !t.is_empty())
}

/// The facts of a `/v1/messages/count_tokens` request: what the Messages request it counts
/// would have, but `stream` (false), `max_tokens` (absent: a count needs none) and the task,
/// judged by its tools and client alone (`code` when they say so, else `chat`).
pub fn count_facts(
    count: &CountRequest,
    reads: Reads,
    headers: Headers<'_, '_>,
) -> Result<Option<RequestFacts>, ApiError> {
    let Some(metadata) = labels(reads, headers(METADATA_NAME))? else {
        return Ok(None);
    };
    let agent = reads.agent.then(|| super::agent::detect(headers));
    let task = agent.filter(|_| reads.task).map(|a| {
        let tools = count.tools_json.as_deref();
        if a.codes() || tools.is_some_and(super::task::declares_coding_tool) {
            crate::routing::facts::Task::Code
        } else {
            crate::routing::facts::Task::Chat
        }
    });
    Ok(Some(RequestFacts {
        model: count.model.clone(),
        stream: false,
        tools: count.tools,
        max_tokens: None,
        has_images: count.has_images,
        endpoint: Endpoint::Messages,
        metadata,
        task,
        agent,
    }))
}

pub fn endpoint(surface: Surface) -> Endpoint {
    match surface {
        Surface::Chat => Endpoint::Chat,
        Surface::Messages => Endpoint::Messages,
        Surface::Responses => Endpoint::Responses,
        Surface::Embeddings => Endpoint::Embeddings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::facts::{Agent, Task};

    fn inbound(surface: Surface, body: &str) -> Inbound {
        Inbound::parse(surface, body.as_bytes().to_vec(), 1_000, None, None).unwrap()
    }

    const ALL: Reads = Reads {
        any: true,
        metadata: true,
        has_images: true,
        stream: true,
        task: true,
        agent: true,
    };

    /// Headers holding only `X-CogniGate-Metadata: <m>`, when given.
    fn meta<'h>(m: Option<&'h str>) -> impl Fn(&str) -> Option<&'h str> {
        move |name: &str| m.filter(|_| name == METADATA_NAME)
    }

    #[test]
    fn the_metadata_header_is_a_json_object_of_strings_of_at_most_2_kib() {
        let m = parse_metadata(r#"{"team":"search","tier":"gold"}"#).unwrap();
        assert_eq!(m.get("team").map(String::as_str), Some("search"));
        for bad in [
            r#"{"team":1}"#,
            "[]",
            "\"x\"",
            "{",
            r#"{"a":{"b":"c"}}"#,
            "null",
        ] {
            let e = parse_metadata(bad).unwrap_err();
            assert_eq!(
                (e.status(), e.code(), e.param()),
                (400, Some("invalid_request"), Some(METADATA_HEADER)),
                "{bad}"
            );
        }
        let long = format!(r#"{{"k":"{}"}}"#, "x".repeat(MAX_METADATA_BYTES));
        assert_eq!(
            parse_metadata(&long).unwrap_err().param(),
            Some(METADATA_HEADER)
        );
    }

    #[test]
    fn a_tenant_with_no_when_builds_no_facts_but_a_bad_header_is_still_refused() {
        let i = inbound(Surface::Chat, r#"{"model":"best","messages":[]}"#);
        assert_eq!(facts(&i, Reads::default(), &meta(None)).unwrap(), None);
        assert_eq!(
            facts(&i, Reads::default(), &meta(Some(r#"{"team":"x"}"#))).unwrap(),
            None
        );
        assert!(facts(&i, Reads::default(), &meta(Some("nope"))).is_err());
    }

    #[test]
    fn a_count_tokens_request_has_the_facts_of_the_messages_request_it_counts() {
        let body = r#"{"model":"best","tools":[{"name":"f","input_schema":{}}],
            "messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}]}"#;
        let count = CountRequest::parse(body.as_bytes().to_vec(), 1_000, None).unwrap();
        let f = count_facts(&count, ALL, &meta(Some(r#"{"team":"x"}"#)))
            .unwrap()
            .unwrap();
        assert_eq!(
            (f.endpoint, f.tools, f.has_images, f.stream, f.max_tokens),
            (Endpoint::Messages, true, true, false, None)
        );
        assert_eq!(f.metadata.get("team").map(String::as_str), Some("x"));
        assert_eq!((f.task, f.agent), (Some(Task::Chat), Some(Agent::Unknown)));
        assert!(count_facts(&count, ALL, &meta(Some("[]"))).is_err());
        let bash = r#"{"model":"best","tools":[{"name":"Bash","input_schema":{}}],"messages":[]}"#;
        let count = CountRequest::parse(bash.as_bytes().to_vec(), 1_000, None).unwrap();
        let f = count_facts(&count, ALL, &meta(None)).unwrap().unwrap();
        assert_eq!(f.task, Some(Task::Code), "a count is judged by its tools");
    }

    #[test]
    fn facts_read_the_parsed_request_on_every_surface() {
        let chat = inbound(
            Surface::Chat,
            r#"{"model":"best","stream":true,"max_tokens":300,"tools":[{"type":"function","function":{"name":"f"}}],
               "messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:x"}}]}]}"#,
        );
        let f = facts(&chat, ALL, &meta(Some(r#"{"team":"search"}"#)))
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                f.model.as_str(),
                f.stream,
                f.tools,
                f.max_tokens,
                f.has_images
            ),
            ("best", true, true, Some(300), true)
        );
        assert_eq!(f.endpoint, Endpoint::Chat);
        assert_eq!(f.metadata.get("team").map(String::as_str), Some("search"));
        let plain = inbound(
            Surface::Chat,
            r#"{"model":"best","tools":[],"messages":[{"role":"user","content":"say \"image_url\""}]}"#,
        );
        let f = facts(&plain, ALL, &meta(None)).unwrap().unwrap();
        assert_eq!((f.tools, f.has_images, f.max_tokens), (false, false, None));
        let messages = inbound(
            Surface::Messages,
            r#"{"model":"best","max_tokens":50,"tools":[{"name":"f","input_schema":{}}],"messages":[{"role":"user","content":"x"}]}"#,
        );
        let f = facts(&messages, ALL, &meta(None)).unwrap().unwrap();
        assert_eq!(
            (f.endpoint, f.tools, f.max_tokens),
            (Endpoint::Messages, true, Some(50))
        );
        let responses = inbound(
            Surface::Responses,
            r#"{"model":"best","input":"x","max_output_tokens":70}"#,
        );
        let f = facts(&responses, ALL, &meta(None)).unwrap().unwrap();
        assert_eq!(
            (f.endpoint, f.tools, f.max_tokens),
            (Endpoint::Responses, false, Some(70))
        );
    }
}
