//! What `analyze` is given: the run's files by role and the options the user chose.
//!
//! A leaf of the analyzer's flow: the front ends fill these in, `analysis` reads them and
//! the report names the files it was made from. It imports nothing of that flow, so the
//! flow's modules depend on it and never on each other in a circle.

use crate::engine::Engine;
use crate::input::InputError;

/// One input file: the name to show (a path as typed, or folder + name) and its bytes,
/// or why it could not be read.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub name: String,
    pub bytes: Result<Vec<u8>, String>,
}

impl InputFile {
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        InputFile {
            name: name.into(),
            bytes: Ok(bytes),
        }
    }

    /// The bytes, or an input error naming the file that could not be read.
    pub(crate) fn bytes(&self) -> Result<&[u8], InputError> {
        self.bytes
            .as_deref()
            .map_err(|e| InputError::new(&self.name, None, e.clone()))
    }
}

/// The load tool's result file and how it was found.
#[derive(Debug, Clone)]
pub struct BenchInput {
    pub file: InputFile,
    /// The path recorded as T15's `result_file`.
    pub evidence_path: String,
}

/// Everything `analyze` reads. Every part is optional.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    pub boot_logs: Vec<InputFile>,
    pub before: Option<InputFile>,
    pub after: Option<InputFile>,
    pub series: Option<InputFile>,
    pub bench: Option<BenchInput>,
    /// When the folder holds several load runs' results (`bench-1.json`, `bench-2.json`,
    /// … or several `vllm bench serve` results), the ones after `bench`, in order: each
    /// run is a phase (`bench::runs`).
    pub bench_more: Vec<BenchInput>,
    /// Per-request exports beside those results (`bench-N.requests.jsonl`, a copy of
    /// AIPerf's `profile_export.jsonl` for step N), by file name: a step's window and T18.
    pub bench_requests: Vec<InputFile>,
    pub load_log: Option<InputFile>,
    pub manifest: Option<InputFile>,
    pub gate: Option<InputFile>,
    pub probe: Option<InputFile>,
    pub teardown: Option<InputFile>,
    /// The recorder's GPU samples (T16).
    pub gpu: Option<InputFile>,
    /// The recorder's samples of the load command's CPU time (T20).
    pub load_cpu: Option<InputFile>,
    /// A deployment of several replicas (`fleet.json`): the top-level files then describe
    /// the load sent through the router, and each replica's readings are in `replicas`.
    pub fleet: Option<InputFile>,
    /// One set of readings per replica folder (`replicas/<id>/`), in id order.
    pub replicas: Vec<ReplicaInput>,
    /// The router's own exporter read before and after the load (`router/`).
    pub router: Option<RouterInput>,
    /// AIPerf's scrape of the server's metrics (`server_metrics_export.json`): the
    /// server's side of T1, T8 and T15 when there is no recording.
    pub aiperf_server: Option<InputFile>,
    /// Entries of the run folder not read, and why (a link, a folder, a device, a file
    /// over its role's size limit): the front end lists them; those with a role also
    /// reach their checks as an unreadable file.
    pub skipped: Vec<Skipped>,
}

/// One replica's readings, laid out like a single server's (`replicas/<id>/`).
#[derive(Debug, Clone, Default)]
pub struct ReplicaInput {
    /// The folder name (`fleet::replica_id_is_valid`).
    pub id: String,
    pub before: Option<InputFile>,
    pub after: Option<InputFile>,
    pub series: Option<InputFile>,
}

/// The router's snapshots (`router/`).
#[derive(Debug, Clone, Default)]
pub struct RouterInput {
    pub before: Option<InputFile>,
    pub after: Option<InputFile>,
}

/// An entry of a run folder left unread.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// The engine the user named, and how (for the refusal message).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NamedEngine {
    pub engine: Engine,
    /// `--engine` or `INFERLINT_ENGINE`.
    pub by: &'static str,
}

/// The user's choices for one analysis.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub engine: Option<NamedEngine>,
    pub requested: Option<i64>,
    pub title: Option<String>,
    /// Minutes east of UTC for the report's clock times (0: UTC).
    pub utc_offset_min: i32,
}
