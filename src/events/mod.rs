//! The gateway's events: what it logs and alerts. Every log line and every alert body is an
//! `Event`, written as one JSON line by `Event::to_line`; an `EventSink` is where they go (the
//! console in the wasm build). The request's log line is `log_line`'s, and a tenant's alert
//! webhook outbox, its retries and signatures, `outbox`'s (pure, time passed in).

mod alert;
mod event;
mod fault;
mod fields;
pub mod log_line;
pub mod outbox;

pub use alert::Alert;
pub use event::{Debug, Event, Level};
pub use fault::Fault;

/// The port events leave through. Emitting never fails what produced the event.
pub trait EventSink {
    fn emit(&self, event: &Event<'_>);
}

#[cfg(test)]
mod bytes_tests;
#[cfg(test)]
mod fault_fixtures;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod json_tests;
