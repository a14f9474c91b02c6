//! The scheduled pass over fakes of every port: the order of a run, a tenant's visit, its probes
//! and its degraded decision, each stated as the rule it keeps.

mod pass;
mod visit;
mod world;
