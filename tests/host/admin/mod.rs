//! Every admin rule over the in-memory store: the same commands the worker runs on D1.

mod integrity;
mod presets;
mod rules;
