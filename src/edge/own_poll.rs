//! A future polled through a function of its own.
//!
//! rustc inlines an awaited `async fn`'s state machine into its caller's, so without a break the
//! fetch handler's future was one 322 KB wasm function (every route's handler in it, admin and
//! console included). V8 compiles a wasm function whole the first time it is called, so an
//! isolate's first request of any kind paid for compiling all of it (`make bench`'s cold cell:
//! 87 → 58 ms at p50 with the breaks). Behind `dyn Future` the callee's `poll` is reached through
//! a vtable, which rustc cannot inline: it stays a function of its own, compiled when first
//! polled. The cost is one allocation per call and one indirect call per poll.

use std::future::Future;
use std::pin::Pin;

/// `fut`, boxed so that its state machine is not inlined into the caller's.
pub fn own_poll<'a, T>(fut: impl Future<Output = T> + 'a) -> Pin<Box<dyn Future<Output = T> + 'a>> {
    Box::pin(fut)
}
