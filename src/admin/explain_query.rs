//! `explain`'s query: the requested name and the request facts a conditional rule reads.
//! Each value is checked the way the request path checks it; a bad one is a 400
//! naming the parameter, and nothing is read from the routing objects.

use crate::api::endpoint::decode;
use crate::api::{ApiError, ErrorKind};
use crate::config::SortedMap;
use crate::routing::facts::{Agent, Endpoint, Task};
use crate::surfaces::facts::parse_metadata;

/// What `GET /admin/v1/tenants/{t}/explain` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainQuery {
    pub model: String,
    pub stream: bool,
    pub tools: bool,
    pub endpoint: Endpoint,
    /// The labels a request would send in `X-CogniGate-Metadata`.
    pub metadata: Option<SortedMap<String, String>>,
    /// `params.task` and `params.agent` as a request would be detected; absent, the agent is
    /// `unknown` and the task follows it (`code` for a coding agent, else `chat`).
    pub task: Option<Task>,
    pub agent: Option<Agent>,
}

fn bad(param: &str, why: &str) -> ApiError {
    ApiError::new(ErrorKind::InvalidRequest, format!("'{param}' {why}.")).with_param(param)
}

/// The one value of `name`, percent-decoded (`+` is a space, as forms send it); a name given
/// twice is refused rather than guessed at.
fn value(query: Option<&str>, name: &str) -> Result<Option<String>, ApiError> {
    let mut found = query
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| match kv.split_once('=') {
            Some((k, v)) => Some((k, v)),
            None if !kv.is_empty() => Some((kv, "")),
            None => None,
        })
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v);
    let first = found.next();
    if found.next().is_some() {
        return Err(bad(name, "may be given once"));
    }
    first
        .map(|v| {
            decode(&v.replace('+', " ")).map_err(|_| bad(name, "is not valid percent-encoding"))
        })
        .transpose()
}

fn flag(query: Option<&str>, name: &str) -> Result<bool, ApiError> {
    match value(query, name)?.as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(bad(name, "must be true or false")),
    }
}

impl ExplainQuery {
    pub fn parse(query: Option<&str>) -> Result<Self, ApiError> {
        let model = value(query, "model")?
            .filter(|m| !m.is_empty())
            .ok_or_else(|| bad("model", "is required"))?;
        let endpoint = match value(query, "endpoint")?.as_deref() {
            None | Some("chat") => Endpoint::Chat,
            Some("messages") => Endpoint::Messages,
            Some("responses") => Endpoint::Responses,
            Some("embeddings") => Endpoint::Embeddings,
            Some(_) => {
                return Err(bad(
                    "endpoint",
                    "must be chat, messages, responses or embeddings",
                ))
            }
        };
        let metadata = value(query, "metadata")?
            .map(|raw| {
                parse_metadata(&raw).map_err(|_| {
                    bad(
                        "metadata",
                        "must be a JSON object of string values, at most 2048 bytes",
                    )
                })
            })
            .transpose()?;
        let task = value(query, "task")?
            .map(|t| Task::parse(&t).ok_or_else(|| bad("task", "must be code or chat")))
            .transpose()?;
        let agent = value(query, "agent")?
            .map(|a| {
                Agent::parse(&a).ok_or_else(|| {
                    let all: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
                    bad("agent", &format!("must be one of {}", all.join(", ")))
                })
            })
            .transpose()?;
        Ok(Self {
            task,
            agent,
            model,
            stream: flag(query, "stream")?,
            tools: flag(query, "tools")?,
            endpoint,
            metadata,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(q: &str) -> Option<String> {
        ExplainQuery::parse(Some(q))
            .err()
            .and_then(|e| e.param().map(str::to_owned))
    }

    #[test]
    fn the_facts_a_conditional_rule_reads_come_from_the_query() {
        let q = ExplainQuery::parse(Some(
            "model=my%2Fapp&stream=true&tools=true&metadata=%7B%22team%22%3A%22search%22%7D",
        ))
        .unwrap();
        assert_eq!(
            (q.model.as_str(), q.stream, q.tools),
            ("my/app", true, true)
        );
        assert_eq!(q.endpoint, Endpoint::Chat);
        assert_eq!(
            q.metadata.unwrap().get("team").map(String::as_str),
            Some("search")
        );
    }

    #[test]
    fn explain_takes_the_task_and_agent_a_request_would_be_detected_with() {
        let q = ExplainQuery::parse(Some("model=a&task=code&agent=claude-code")).unwrap();
        assert_eq!(
            (q.task, q.agent),
            (Some(Task::Code), Some(Agent::ClaudeCode))
        );
        let q = ExplainQuery::parse(Some("model=a")).unwrap();
        assert_eq!((q.task, q.agent), (None, None));
    }

    #[test]
    fn a_bad_query_value_is_a_400_naming_its_parameter() {
        assert_eq!(param("model=a&stream=maybe").as_deref(), Some("stream"));
        assert_eq!(param("model=a&tools=1").as_deref(), Some("tools"));
        assert_eq!(
            param("model=a&metadata=%5B1%5D").as_deref(),
            Some("metadata")
        );
        assert_eq!(
            param("model=a&metadata=%7B%22n%22%3A1%7D").as_deref(),
            Some("metadata")
        );
        assert_eq!(param("model=a&endpoint=fax").as_deref(), Some("endpoint"));
        assert_eq!(param("model=a&task=poetry").as_deref(), Some("task"));
        assert_eq!(param("model=a&agent=cursor").as_deref(), Some("agent"));
        assert_eq!(param("stream=true").as_deref(), Some("model"));
        assert_eq!(param("model=a&model=b").as_deref(), Some("model"));
        let e = ExplainQuery::parse(Some("model=a&stream=maybe")).unwrap_err();
        assert_eq!(e.status(), 400);
    }
}
