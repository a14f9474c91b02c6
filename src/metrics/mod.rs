//! What the gateway counts: a request's ending as the metrics name it (`request_metric`), the
//! Prometheus counters of one tenant (`counts`) and their text exposition (`prometheus`). Pure;
//! the edge gathers the counts into the ledger objects and answers the scrape.

pub mod counts;
pub mod prometheus;
pub mod request_metric;
