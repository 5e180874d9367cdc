//! The run folder's documents, defined once: every file name, every schema tag, and one
//! typed serde struct per document the recorder writes and the analyzer reads
//! (docs/run-folder.md). Fields are declared in the order the files give them, because
//! serde writes them in declaration order.
//!
//! Reading is lenient where the files need it to be: strict UTF-8, Python's `NaN` and
//! `Infinity` accepted, unknown keys ignored, missing optional keys defaulted; a syntax
//! error names its line, a wrong type names its key path, a wrong `schema` is refused.
//! Writing goes through serde_json with Python's separators: one-space indent and a final
//! newline for documents, one line for a series file's lines. A non-finite float is
//! written as `null` (standard JSON).

mod keyword;
mod lenient;

pub mod fleet;
pub mod gate;
pub mod gpu;
pub mod manifest;
pub mod probe;
pub mod processes;
pub mod series;
pub mod snapshot;
pub mod teardown;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::Engine;
use crate::input::{decode_strict, InputError};
use crate::json::{self, Json};

pub use fleet::{Fleet, Replica};
pub use gate::Gate;
pub use gpu::{GpuCard, GpuHeader, GpuRow};
pub use manifest::Manifest;
pub use probe::Probe;
pub use processes::Processes;
pub use series::{Row, SeriesHeader};
pub use snapshot::SnapshotDoc;
pub use teardown::Teardown;

/// The server's output (docs/run-folder.md#boot-log).
pub const BOOT_LOG: &str = "boot.log";
/// Metrics just before the load (docs/run-folder.md#snapshots).
pub const BEFORE_SNAPSHOT: &str = "before.snapshot.json";
/// Metrics just after the load.
pub const AFTER_SNAPSHOT: &str = "after.snapshot.json";
/// The gauges sampled during the load (docs/run-folder.md#series).
pub const SERIES: &str = "run.series.jsonl";
/// The cards' clocks, power, temperature and throttle reasons sampled during the load
/// (`gpu.rs`, T16). Matches no other discovery pattern.
pub const GPU_SAMPLES: &str = "gpu.samples.jsonl";
/// `vllm bench serve`'s or TensorRT-LLM's client result (docs/run-folder.md#load-results).
pub const BENCH_JSON: &str = "bench.json";
/// SGLang's client result, one line per run.
pub const BENCH_JSONL: &str = "bench.jsonl";
/// The result of the Nth (1-based) of several load commands (`--then`): `bench-N.json`,
/// `bench-N.jsonl` for SGLang's client.
pub const BENCH_RUN_PREFIX: &str = "bench-";

pub fn bench_run_json(n: usize) -> String {
    format!("{BENCH_RUN_PREFIX}{n}.json")
}

pub fn bench_run_jsonl(n: usize) -> String {
    format!("{BENCH_RUN_PREFIX}{n}.jsonl")
}

/// The per-request export beside a run's result (`bench-N.json`:
/// `bench-N.requests.jsonl`), copied in from an AIPerf step.
pub fn bench_requests_of(result: &str) -> Option<String> {
    let stem = result
        .strip_suffix(".json")
        .or_else(|| result.strip_suffix(".jsonl"))?;
    Some(format!("{stem}.requests.jsonl"))
}
/// GuideLLM's JSON report as the tool names it by default (`guidellm run --output
/// kind=json`); read by its shape under any name.
pub const GUIDELLM_RESULT: &str = "benchmarks.json";
/// AIPerf's summary inside its artifact directory (`aiperf profile --artifact-dir`).
pub const AIPERF_RESULT: &str = "profile_export_aiperf.json";
/// AIPerf's scrape of the server's `/metrics`, beside its summary.
pub const AIPERF_SERVER_METRICS: &str = "server_metrics_export.json";
/// The same under `aiperf profile --profile-export-prefix NAME`: `NAME_server_metrics.json`.
pub const AIPERF_SERVER_METRICS_PREFIXED: &str = "*_server_metrics.json";
/// The subfolder of a run folder the recorder gives AIPerf as its artifact directory.
pub const AIPERF_DIR: &str = "aiperf";
/// The load command's merged output.
pub const LOAD_LOG: &str = "load.log";
/// A deployment's identity: the Prometheus source and its replicas (`fleet.rs`).
pub const FLEET: &str = "fleet.json";
/// The subfolder holding one folder per replica, each laid out like a single server's
/// run folder (snapshots and series under their usual names).
pub const REPLICAS_DIR: &str = "replicas";
/// The subfolder holding the router's own metrics (snapshots under their usual names).
pub const ROUTER_DIR: &str = "router";
/// The recorder's documents (docs/run-folder.md#recorder-documents).
pub const MANIFEST: &str = "manifest.json";
pub const GATE: &str = "gate.json";
pub const PROBE: &str = "probe.json";
pub const TEARDOWN: &str = "teardown.json";
pub const PROCESSES: &str = "processes.json";
/// The Report `inferlint analyze` writes (docs/run-folder.md#results-json); never read
/// back.
pub const RESULTS: &str = "results.json";
/// The human report `inferlint analyze` writes (docs/run-folder.md#report-html).
pub const REPORT: &str = "report.html";

/// How every snapshot file's name ends (docs/run-folder.md#discovery).
pub const SNAPSHOT_SUFFIX: &str = ".snapshot.json";
/// How every series file's name ends.
pub const SERIES_SUFFIX: &str = ".series.jsonl";

/// The recorder's documents: never a load-tool result.
pub const RECORDER_DOCUMENTS: [&str; 6] = [MANIFEST, GATE, PROBE, TEARDOWN, PROCESSES, FLEET];

/// The key that carries a document's tag.
pub const SCHEMA_KEY: &str = "schema";

/// A document with a `schema` tag, written first.
pub trait Document: Serialize + DeserializeOwned {
    /// The tag; a document carrying another is refused.
    const SCHEMA: &'static str;
}

/// The document with its tag in front: `{"schema": "...", <the document's keys>}`.
#[derive(Serialize)]
struct Tagged<'a, T> {
    /// Named as [`SCHEMA_KEY`] says.
    schema: &'static str,
    #[serde(flatten)]
    doc: &'a T,
}

/// A document's bytes as the recorder writes it: one-space indent, a final newline.
pub fn to_bytes<T: Document>(doc: &T) -> Vec<u8> {
    let mut text = json::to_pretty(
        &Tagged {
            schema: T::SCHEMA,
            doc,
        },
        1,
    );
    text.push('\n');
    text.into_bytes()
}

/// A tagged document on one line, without a newline (a series file's header).
pub fn to_line<T: Document>(doc: &T) -> String {
    json::to_compact(&Tagged {
        schema: T::SCHEMA,
        doc,
    })
}

/// Reads a document from a file's bytes. `file` names the file in errors.
pub fn read<T: Document>(file: &str, bytes: &[u8]) -> Result<T, InputError> {
    read_text(file, decode_strict(file, bytes)?)
}

/// Reads a document from text already decoded.
pub fn read_text<T: Document>(file: &str, text: &str) -> Result<T, InputError> {
    let value = json::parse(text).map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
    if value.as_object().is_none() {
        return Err(InputError::new(file, None, "not a JSON object"));
    }
    match value.get(SCHEMA_KEY) {
        Some(Json::Str(s)) if s == T::SCHEMA => {}
        Some(other) => {
            return Err(InputError::new(
                file,
                None,
                format!(
                    "schema is {}, expected \"{}\"",
                    other.to_compact(),
                    T::SCHEMA
                ),
            ))
        }
        None => {
            return Err(InputError::new(
                file,
                None,
                format!("no `schema`: expected \"{}\"", T::SCHEMA),
            ))
        }
    }
    json::from_json(&value).map_err(|e| InputError::new(file, None, e.to_string()))
}

/// Any serializable value as a [`Json`] (evidence built from typed documents).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Json {
    // Our own serializer's output always parses back.
    json::parse(&json::to_compact(value)).unwrap_or(Json::Null)
}

/// An engine is written as its key (`vllm`, `sglang`, `trtllm`).
impl Serialize for Engine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

impl<'de> Deserialize<'de> for Engine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Engine, D::Error> {
        let key = String::deserialize(d)?;
        Engine::from_key(&key)
            .ok_or_else(|| serde::de::Error::unknown_variant(&key, &["vllm", "sglang", "trtllm"]))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A recorded document of `fixtures/recorded/` (written by the recorder).
    pub fn fixture(engine: &str, name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../fixtures/recorded/{engine}/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn wrong_or_missing_schema_is_refused_with_the_file_name() {
        let e = read::<Gate>("run/gate.json", br#"{"schema": "inferlint.probe/1"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "run/gate.json: schema is \"inferlint.probe/1\", expected \"inferlint.gate/1\""
        );
        let e = read::<Gate>("g.json", br#"{"clear": true}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "g.json: no `schema`: expected \"inferlint.gate/1\""
        );
        let e = read::<Gate>("g.json", b"[1]").unwrap_err();
        assert_eq!(e.to_string(), "g.json: not a JSON object");
    }

    #[test]
    fn syntax_errors_name_the_line_and_bad_bytes_are_refused() {
        let e = read::<Gate>(
            "g.json",
            b"{\n \"schema\": \"inferlint.gate/1\",\n \"clear\": tru\n}",
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("g.json", Some(3)));
        let e = read::<Gate>("g.json", b"{\"schema\": \"\xff\"}").unwrap_err();
        assert_eq!(e.reason, "not valid UTF-8 text");
    }

    #[test]
    fn a_wrong_type_names_the_key_path() {
        let e = read::<Manifest>(
            "m.json",
            br#"{"schema": "inferlint.run/1", "load": {"exit": "x"}}"#,
        )
        .unwrap_err();
        assert!(e.reason.starts_with("load.exit: invalid type"), "{e}");
        let e = read::<Teardown>(
            "t.json",
            br#"{"schema": "inferlint.teardown/1", "readings": [[0.0, 1, 0], [1.0, "x", 0]]}"#,
        )
        .unwrap_err();
        assert!(e.reason.starts_with("readings[1]"), "{e}");
    }

    #[test]
    fn engines_are_written_as_their_keys() {
        assert_eq!(to_json(&Engine::Trtllm), Json::from("trtllm"));
        assert!(json::from_json::<Engine>(&Json::from("tgi")).is_err());
    }
}
