//! The whole run of one server: every input of the run folder, parsed once, and the facts
//! derived from them that several rules read (the engine, the concurrency asked for, a
//! server down before the load, how the recording ended).

use super::scrape::ScrapeScope;
use crate::bench::{AiperfServer, BenchResult};
use crate::blocks::GaugeSteps;
use crate::bootlog::{BootFacts, BootLog};
use crate::counters::Pair;
use crate::docs::{Gate, Probe, Teardown};
use crate::engine::Engine;
use crate::gpu_samples::GpuSamples;
use crate::input::InputError;
use crate::inputs::RunInput;
use crate::manifest::Manifest;
use crate::rules::absent::{Absent, Input};
use crate::rules::outcome::RunOutcome;
use crate::rules::server_down::ServerDown;
use crate::series::Series;
use crate::snapshot::Snapshot;

/// The whole run's context.
pub struct RunScope<'a> {
    pub input: &'a RunInput,
    pub logs: &'a [BootLog],
    /// Boot logs that could not be read.
    pub log_errors: &'a [InputError],
    /// The first boot log's facts.
    pub facts: Option<&'a BootFacts>,
    pub manifest: Option<&'a Manifest>,
    /// How the recording itself ended.
    pub outcome: &'a RunOutcome,
    /// The engine the snapshots' metric names say (vLLM when none does).
    pub snapshot_engine: Engine,
    /// The engine of the report (the log's markers are this engine's).
    pub engine: Engine,
    /// Both snapshots, as a pair; missing when the run broke before the second.
    pub pair: Input<'a, Pair<'a>>,
    /// The snapshot after the load, alone.
    pub after: Input<'a, Snapshot>,
    pub series: Input<'a, Series>,
    /// The load tool's result (several joined, for several load runs).
    pub bench: Input<'a, BenchResult>,
    pub gate: Input<'a, Gate>,
    pub probe: Input<'a, Probe>,
    pub teardown: Input<'a, Teardown>,
    pub gpu: Input<'a, GpuSamples>,
    /// A load tool's own scrape of the server's metrics (AIPerf's).
    pub scrape: Input<'a, AiperfServer>,
    /// The engine the scrape is read as.
    pub scrape_engine: Engine,
    /// The server was down before the load started.
    pub down: Option<&'a ServerDown>,
    /// The concurrency the load asked for.
    pub requested: Option<i64>,
    /// The KV gauge's steps against the block count the engine exported (vLLM).
    pub gauge_steps: Option<&'a GaugeSteps>,
    /// Requests the load tool sent outside its measurement.
    pub expected_extra: i64,
    /// A load ran, unless the recorder says none was given.
    pub load_ran: bool,
}

impl<'a> RunScope<'a> {
    /// The cache's usable blocks, when the gauge's steps show them (T9, phases, the
    /// report).
    pub fn usable_blocks(&self) -> Option<u64> {
        self.gauge_steps.and_then(GaugeSteps::usable_blocks)
    }

    /// The file the load tool's result was read from, as T15 names it.
    pub fn bench_file(&self) -> &'a str {
        self.input
            .bench
            .as_ref()
            .map_or("", |b| b.evidence_path.as_str())
    }

    /// The load tool's result when it was read.
    pub fn bench_ok(&self) -> Option<&'a BenchResult> {
        self.bench.present()
    }

    /// Whether the folder holds a measured load (a recording, snapshots, GPU samples or a
    /// load-tool result) of one server: T16–T18 concern it. A fleet's top level holds none.
    pub fn load_measured(&self) -> bool {
        let i = self.input;
        i.fleet.is_none()
            && (i.series.is_some() || i.before.is_some() || i.gpu.is_some() || i.bench.is_some())
    }

    /// Whether `inferlint-recorder record` made the folder (it always writes a
    /// manifest): only it samples the GPU and marks the load in the boot log.
    pub fn recorded_by_inferlint(&self) -> bool {
        self.input.manifest.is_some()
    }

    /// The load tool's own scrape, as a context of its own (for a folder whose recording
    /// has no snapshots or series).
    pub fn scrape_scope(&self) -> Result<ScrapeScope<'a>, Absent> {
        Ok(ScrapeScope {
            engine: self.scrape_engine,
            scrape: self.scrape.need()?,
            file: self
                .input
                .aiperf_server
                .as_ref()
                .map_or("", |f| f.name.as_str()),
            requested: self.requested,
            bench: self.bench.clone(),
            bench_file: self.bench_file(),
            manifest: self.manifest,
            load_ran: self.load_ran,
        })
    }

    /// A run with nothing given, for tests that give it what they need.
    #[cfg(test)]
    pub fn empty(input: &'a RunInput, outcome: &'a RunOutcome) -> RunScope<'a> {
        RunScope {
            input,
            logs: &[],
            log_errors: &[],
            facts: None,
            manifest: None,
            outcome,
            snapshot_engine: Engine::Vllm,
            engine: Engine::Vllm,
            pair: Input::NotGiven,
            after: Input::NotGiven,
            series: Input::NotGiven,
            bench: Input::NotGiven,
            gate: Input::NotGiven,
            probe: Input::NotGiven,
            teardown: Input::NotGiven,
            gpu: Input::NotGiven,
            scrape: Input::NotGiven,
            scrape_engine: Engine::Vllm,
            down: None,
            requested: None,
            gauge_steps: None,
            expected_extra: 0,
            load_ran: true,
        }
    }
}
