//! Live stats and the alert outbox, on their way to `routing::stats` and `events`.

pub mod isolate_stats;
pub mod model_stats;
pub mod outbox;
pub mod routing_snapshot;
pub mod stats_book;
