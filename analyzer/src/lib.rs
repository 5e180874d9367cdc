//! inferlint's analyzer: turns the files of a benchmark run folder into verdicts and the
//! figures of the report. Pure: no file system, network, clock or threads; it takes bytes
//! and returns data, so it builds for native and `wasm32-unknown-unknown` alike.

pub mod analysis;
pub mod bench;
pub mod blocks;
pub mod bootlog;
pub mod chunks;
pub mod compare;
pub mod counters;
pub mod docs;
pub mod engine;
pub mod fleet;
pub mod folder;
pub mod glossary;
pub mod gpu_samples;
pub mod histogram;
pub mod input;
pub mod inputs;
pub mod insights;
pub mod json;
pub mod load_cpu;
pub mod load_tool;
pub mod manifest;
pub mod num;
pub mod pack;
pub mod page;
pub mod phases;
pub mod plausible;
pub mod prom;
pub mod report;
pub mod rules;
pub mod samples;
pub mod series;
pub mod sizes;
pub mod snapshot;
pub mod term;
pub mod text;

pub use analysis::{analyze, Analysis, AnalyzeError};
pub use engine::Engine;
pub use inputs::{
    BenchInput, InputFile, NamedEngine, Options, ReplicaInput, RouterInput, RunInput, Skipped,
};
pub use report::Report;
pub use rules::{CheckResult, Status, Tripwire};

/// Internal parsers reached by the fuzz targets (`analyzer/fuzz`) and their regression
/// test: not an API.
#[doc(hidden)]
pub mod fuzzing {
    /// The Python-literal reader of the boot logs' argument dicts (`bootlog::pylit`).
    pub fn python_literal(text: &str) -> Option<crate::json::Json> {
        crate::bootlog::pylit::parse(text)
    }
}
