//! Routing over the in-memory store and fakes: conditional rules, explain, and grants across
//! isolates.

mod conditions;
mod explain;
mod explain_agrees;
mod grants_across_isolates;
