//! A traced request's spans handed to the trace sink as it ends: once, on whichever path it
//! ends by (a stream's when it settles, through its metric).

use super::ports::{Ports, TraceSink};
use crate::traces::request_trace::Ending;
use crate::traces::traced::Traced;

/// Exports `traced`'s spans for `end` (nothing when the request is not traced).
pub fn export<P: Ports>(p: &P, traced: Option<&Traced>, end: &Ending<'_>) {
    let Some(t) = traced else {
        return;
    };
    if let Some(export) = t.export() {
        p.traces().export(t.tenant(), export, t.spans(end));
    }
}

/// `cognigate.cache` for a request the response cache was used for.
pub fn cache_attr(mark: Option<&'static str>) -> Option<&'static str> {
    mark.filter(|m| *m == "hit" || *m == "miss")
}
