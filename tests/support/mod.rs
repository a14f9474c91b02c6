#![allow(dead_code)]
pub mod admin_world;
pub mod fakes;
pub mod gateway;
pub mod prometheus;
pub mod python_mock;
pub mod replies;
pub mod resilience;
pub mod response_cache;
pub mod sdk;
pub mod spend;
pub mod tenant;
pub mod webhook;
pub mod worker_log;
pub mod world;
