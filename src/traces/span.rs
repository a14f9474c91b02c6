//! A span as OTLP carries it, in the few types CogniGate writes: one request span (SERVER) and
//! one span per upstream call (CLIENT), with string, integer, float, boolean and string-list
//! attributes.

/// OTLP's `SpanKind`, by its wire number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Server = 2,
    Client = 3,
}

/// OTLP's `Status`: unset (the default: the span did its work) or an error with its class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    Error(String),
}

impl SpanStatus {
    /// The wire number of the status code (`STATUS_CODE_ERROR` is 2).
    pub fn code(&self) -> u64 {
        match self {
            Self::Unset => 0,
            Self::Error(_) => 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    Strs(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub trace_state: Option<String>,
    pub name: String,
    pub kind: SpanKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<(&'static str, AttrValue)>,
    pub status: SpanStatus,
}

impl Span {
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// Attributes built in order, each only when it has a value.
#[derive(Default)]
pub struct Attrs(pub Vec<(&'static str, AttrValue)>);

impl Attrs {
    pub fn str(mut self, key: &'static str, v: impl Into<String>) -> Self {
        self.0.push((key, AttrValue::Str(v.into())));
        self
    }

    pub fn opt_str(self, key: &'static str, v: Option<impl Into<String>>) -> Self {
        match v {
            Some(v) => self.str(key, v),
            None => self,
        }
    }

    pub fn int(mut self, key: &'static str, v: u64) -> Self {
        self.0
            .push((key, AttrValue::Int(i64::try_from(v).unwrap_or(i64::MAX))));
        self
    }

    pub fn opt_int(self, key: &'static str, v: Option<u64>) -> Self {
        match v {
            Some(v) => self.int(key, v),
            None => self,
        }
    }

    pub fn opt_double(mut self, key: &'static str, v: Option<f64>) -> Self {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.0.push((key, AttrValue::Double(v)));
        }
        self
    }

    pub fn bool(mut self, key: &'static str, v: bool) -> Self {
        self.0.push((key, AttrValue::Bool(v)));
        self
    }

    pub fn strs(mut self, key: &'static str, v: Vec<String>) -> Self {
        if !v.is_empty() {
            self.0.push((key, AttrValue::Strs(v)));
        }
        self
    }
}
