//! What the worker wrote: its console lines (one JSON line per request, usage records, debug
//! lines) as they reach the state directory's `worker.log` through Miniflare's pipe. Every read
//! waits, because a line can trail the response it belongs to by a moment.

use super::gateway::{poll, Gateway};
use serde_json::Value;
use std::time::Duration;

impl Gateway {
    /// Every line the worker and Miniflare have written so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state_dir.join("worker.log")).unwrap_or_default()
    }

    /// The log once `needle` has reached it.
    pub fn log_containing(&self, needle: &str) -> String {
        poll(Duration::from_secs(10), || {
            let log = self.log();
            let found = log.contains(needle);
            (log, found)
        })
    }

    /// The `{"msg":"request",...}` log line of one request, once it has reached the log (null
    /// after 10 s). It waits for that line itself: another line naming the request (its usage
    /// record, a cache write) may land first.
    pub fn request_line(&self, request_id: &str) -> Value {
        poll(Duration::from_secs(10), || {
            let line = self
                .log()
                .lines()
                .filter(|l| l.contains(request_id))
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|l| l["request_id"] == request_id && l["msg"] == "request")
                .unwrap_or(Value::Null);
            let found = !line.is_null();
            (line, found)
        })
    }

    /// The `{"msg":"usage",...}` records of `tenant` once there are `n` of them (each test has its
    /// own tenant), waiting at most `within`; asserts the count.
    pub fn usage_records(&self, tenant: &str, n: usize, within: Duration) -> Vec<Value> {
        let found = poll(within, || {
            let found: Vec<Value> = self
                .log()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|l| l["msg"] == "usage" && l["tenant"] == tenant)
                .collect();
            let enough = found.len() >= n;
            (found, enough)
        });
        assert_eq!(found.len(), n, "usage records of {tenant}: {found:?}");
        found
    }
}
