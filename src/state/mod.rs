//! The alert outbox, on its way to `events`.

pub mod outbox;
