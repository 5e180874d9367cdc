//! inferlint's analyzer: turns the files of a benchmark run folder into verdicts and the
//! figures of the report. Pure: no file system, network, clock or threads; it takes bytes
//! and returns data, so it builds for native and `wasm32-unknown-unknown` alike.

pub mod bootlog;
pub mod engine;
pub mod json;
pub mod num;
pub mod text;
pub mod verdict;
