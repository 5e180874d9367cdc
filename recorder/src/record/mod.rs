//! `record`: the whole recorded run. Each step prints a `== ` line; a
//! problem ends the run with its text and stage in the manifest, and the closing steps
//! (after snapshot, series, result, stop, manifest, analysis) still run where they apply.
//! One file per step; this one holds the run's state and the order of the steps: 1
//! prepare, 2 engine and address, 3 platform, 4 GPU gate, 5 free port, 6 start, 7 ready
//! (attach mode replaces 3–7 with one health check), 8 metrics, 9 boot log, 10 version,
//! 11 probe, 12 before snapshot, 13 series and GPU samples, 14 load, 15 after snapshot,
//! 16 the load's result brought in, 17 stop, 18 close. The files it writes:
//! docs/run-folder.md.

pub mod address;
mod attach;
mod boot_log;
mod close;
mod collect;
mod engine;
mod fleet;
pub mod gate;
mod gpu_samples;
mod load;
mod metrics;
mod prepare;
mod probe;
pub mod serve;
mod snapshot;
mod stop;
mod version;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use analyzer::docs::manifest::{EngineFrom, Manifest, Stage};
use analyzer::docs::processes::TreeSnapshot;
use analyzer::docs::{self, Document};
use analyzer::Engine;

use crate::docs::write_doc;
use crate::procs::ProcFs;
use crate::scrape::Scraper;
use crate::series::Recorder;
use crate::{progress, signals};

pub use close::quote;

/// Everything `record` is given.
#[derive(Debug, Clone)]
pub struct Options {
    pub dir: PathBuf,
    pub serve: Option<String>,
    pub url: Option<String>,
    pub boot_log: Option<PathBuf>,
    pub requested: Option<i64>,
    pub bench_result: Option<PathBuf>,
    pub interval: f64,
    pub ready_timeout: f64,
    /// The clear-card rule's limit after the stop (120 s; shorter only in tests).
    pub stop_card_timeout: f64,
    /// Refuse to start when the GPU cannot be checked (no `nvidia-smi`).
    pub require_gpu_check: bool,
    pub no_probe: bool,
    pub title: Option<String>,
    pub no_analyze: bool,
    pub json: bool,
    pub strict: bool,
    /// The engine named, and by what (`--engine` or `INFERLINT_ENGINE`).
    pub engine: Option<(Engine, EngineFrom)>,
    pub load: Vec<String>,
    pub argv: Vec<String>,
    /// Attach mode's replicas read through Prometheus (`--prometheus`, `--match`).
    pub fleet: Option<FleetOptions>,
}

/// `--prometheus URL --match SELECTOR [--router-metrics URL]`: the probe and the load go
/// to `--url` (a router), each replica's metrics come from Prometheus.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    pub prometheus: String,
    pub selector: crate::prometheus::Selector,
    /// The router's own exporter, scraped directly for its snapshots.
    pub router_metrics: Option<String>,
}

/// Why the run stopped early.
enum Stop {
    Problem(Stage, String),
    Interrupted(Stage),
}

type Step<T> = Result<T, Stop>;

fn problem<T>(stage: Stage, text: impl Into<String>) -> Step<T> {
    Err(Stop::Problem(stage, text.into()))
}

/// A run in progress: its options, what it has learnt, and what it holds open.
struct Run {
    opts: Options,
    fs: ProcFs,
    manifest: Manifest,
    engine: Option<Engine>,
    server: Option<serve::Server>,
    /// The server's process tree at readiness and at the stop (`processes.json`).
    trees: Vec<TreeSnapshot>,
    load_started: bool,
    load_failed: bool,
    /// Where each load command's result will be, in order (one per command run).
    result_plans: Vec<ResultPlan>,
    load_since: SystemTime,
    scraper: Option<Scraper>,
    series: Option<Recorder>,
    /// The GPU sampler, during the load (T16).
    gpu: Option<crate::gpu_sampler::Sampler>,
    progress: progress::Progress,
    /// The replicas read through Prometheus, in a fleet run.
    fleet: Option<fleet::FleetRun>,
}

/// Where one load command's result will be, since when, and its names in the folder.
struct ResultPlan {
    file: crate::load::ResultFile,
    since: SystemTime,
    names: crate::load::ResultNames,
}

/// Runs `record`; returns the exit status.
pub fn record(opts: Options) -> i32 {
    let prepared = match prepare::prepare(&opts) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let fleet = opts.fleet.as_ref().map(fleet::FleetRun::new);
    let mut run = Run {
        progress: progress::Progress::new(opts.json),
        manifest: prepared.manifest,
        opts,
        fs: ProcFs::default(),
        engine: None,
        server: None,
        trees: vec![],
        load_started: false,
        load_failed: false,
        result_plans: Vec::new(),
        load_since: SystemTime::now(),
        scraper: None,
        series: None,
        gpu: None,
        fleet,
    };
    run.save_manifest();
    crate::reaper::start();
    let flow = run.sequence(prepared.serve_argv);
    run.close(flow)
}

/// Writes a document into the run folder; a failure is reported, not fatal.
fn write_in<T: Document>(dir: &Path, name: &str, doc: &T) {
    if let Err(e) = write_doc(dir, name, doc) {
        eprintln!("inferlint-recorder: cannot write {name}: {e}");
    }
}

impl Run {
    fn save_manifest(&self) {
        self.write(docs::MANIFEST, &self.manifest);
    }

    fn write<T: Document>(&self, name: &str, doc: &T) {
        write_in(&self.opts.dir, name, doc);
    }

    fn check_signal(&self, stage: Stage) -> Step<()> {
        if signals::interrupted() {
            Err(Stop::Interrupted(stage))
        } else {
            Ok(())
        }
    }

    /// Steps 2–14.
    fn sequence(&mut self, serve_argv: Option<Vec<String>>) -> Step<()> {
        self.engine_step(serve_argv.as_deref())?;
        match serve_argv {
            Some(argv) => self.serve_steps(argv)?,
            None => self.attach_step()?,
        }
        self.check_signal(if self.server.is_some() {
            Stage::Ready
        } else {
            Stage::Attach
        })?;
        if self.fleet.is_some() {
            self.fleet_metrics_step()?;
        } else {
            self.metrics_step()?;
        }
        self.boot_log_step()?;
        self.version_step();
        self.check_signal(Stage::Metrics)?;
        if !self.opts.no_probe {
            self.probe_step()?;
        }
        self.check_signal(Stage::Before)?;
        if self.fleet.is_some() {
            self.fleet_before_step()?;
        } else {
            self.before_step()?;
        }
        self.load_step()
    }
}
