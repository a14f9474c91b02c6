//! The console as the gateway's event sink: every line the worker logs leaves here, through its
//! one `console_log!` / `console_error!` pair (the event's level picks which).

use crate::events::Level;
pub use crate::events::{Alert, Debug, Event, EventSink, Fault};
use worker::{console_error, console_log};

pub struct ConsoleEvents;

impl EventSink for ConsoleEvents {
    fn emit(&self, event: &Event<'_>) {
        let line = event.to_line();
        match event.level() {
            Level::Log => console_log!("{line}"),
            Level::Error => console_error!("{line}"),
        }
    }
}

/// Logs an operational failure.
pub fn fault(f: Fault<'_>) {
    ConsoleEvents.emit(&Event::Fault(f));
}
