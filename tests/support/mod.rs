#![allow(dead_code)]
pub mod fakes;
