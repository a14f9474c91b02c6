//! Load and memory: 64 callers against upstreams that fail 30% of calls, and the wasm memory a
//! private isolate grows by per chat body shape.

mod memory;
mod under_faults;
