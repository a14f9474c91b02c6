//! What the gateway tells: the one structured log line per request (`log_line`) and a tenant's
//! alert webhook outbox, its retries and signatures (`outbox`). Pure, time passed in; the edge
//! writes the lines and the tenant's health object stores the outbox.

pub mod log_line;
pub mod outbox;
