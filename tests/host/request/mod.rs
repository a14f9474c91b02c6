//! The request's order over fakes of every port: each stage and each early exit, stated as
//! the rule it keeps.

mod order;
mod traces;
mod world;
