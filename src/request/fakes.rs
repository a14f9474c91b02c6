//! Fakes of the request's ports for host tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::Incoming;
use crate::api::ApiError;
use std::cell::Cell;

/// A caller's request: its headers, its body, and how often the body was read.
pub struct Request {
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub body_reads: Cell<usize>,
}

impl Request {
    pub fn new(headers: &[(&'static str, &str)], body: &str) -> Self {
        Self {
            headers: headers.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
            body: body.as_bytes().to_vec(),
            body_reads: Cell::new(0),
        }
    }

    pub fn bearer(key: &str, body: &str) -> Self {
        Self::new(&[("authorization", &format!("Bearer {key}"))], body)
    }
}

impl Incoming for Request {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name));
        found.map(|(_, v)| v.as_str())
    }

    async fn body(&self, limit: usize) -> Result<Vec<u8>, ApiError> {
        self.body_reads.set(self.body_reads.get() + 1);
        if self.body.len() > limit {
            return Err(ApiError::body_too_large(limit));
        }
        Ok(self.body.clone())
    }
}
