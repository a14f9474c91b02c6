//! Who is calling: a caller key's shape, MAC and hash, checked before any store is read
//! (`auth`), and the per-isolate memo of what the request path reads from D1 for a caller, its
//! key and its tenant's config (`memo`). Plain Rust with time passed in; the wasm edge holds
//! the memos and reads D1.

pub mod auth;
pub mod memo;

pub use memo::{Lookup, Memo, MemoPolicy, Ticket};
