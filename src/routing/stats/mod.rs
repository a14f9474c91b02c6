//! The live stats routing ranks by: one model's counts and EWMAs (`model_stats`), the routing
//! object's book of every isolate's batches (`stats_book`), one isolate's view and the rules of
//! sending (`isolate_stats`), a read of the object for `explain` (`routing_snapshot`) and the
//! stats answer admins and `/v1/models/metrics` read (`view`). Plain Rust with time passed in.

pub mod isolate_stats;
pub mod model_stats;
pub mod routing_snapshot;
pub mod stats_book;
pub mod view;
