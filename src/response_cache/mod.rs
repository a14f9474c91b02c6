//! The response cache: whether a request uses it and for how long (`opt_in`, with the requested
//! name's TTL from `ttl`), the key an answer is stored under (`key`, over the body's canonical
//! form in `canonical`), what is kept beside the answer and which answers are kept (`stored`), a
//! streamed miss put back together for storing (`assemble`), a stored answer served as a
//! stream (`replay`) and the isolate's copies of recent entries (`recent`). Plain Rust; the wasm
//! edge reads the headers, talks to the store and sets the answer's headers.

pub mod assemble;
pub mod canonical;
pub mod key;
pub mod opt_in;
pub mod recent;
pub mod replay;
pub mod stored;
pub mod ttl;
