//! Routing on workerd: the cascade, routing state, ranking, spreads, versions, conditions, explain,
//! retries, refusals, grants and live stats.

mod cascade;
mod client_conditions;
mod conditions;
mod cost_order;
mod explain;
mod fallback_links;
mod headroom;
mod lease;
mod live_stats;
mod park_lengths;
mod park_state;
mod prefer_platforms;
mod presets;
mod ranking;
mod refusals;
mod retries;
mod spreads;
mod versions;
