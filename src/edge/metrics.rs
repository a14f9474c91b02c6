//! Per-request counters of the hot path's remote calls, reported in the log line (and, when the
//! `DEBUG_COUNTERS` var is set, as response headers for the tests and benchmarks).

use std::cell::Cell;

#[derive(Debug, Default)]
pub struct Metrics {
    d1: Cell<u32>,
    durable_object: Cell<u32>,
}

impl Metrics {
    pub fn d1_query(&self) {
        self.d1.set(self.d1.get() + 1);
    }

    pub fn durable_object_call(&self) {
        self.durable_object.set(self.durable_object.get() + 1);
    }

    pub fn d1_queries(&self) -> u32 {
        self.d1.get()
    }

    pub fn durable_object_calls(&self) -> u32 {
        self.durable_object.get()
    }
}
