//! `manifest.json` (`inferlint.run/1`, docs/run-folder.md#manifest): how far a recorded
//! run got, its commands, engine, address, server version, requested concurrency and load
//! client. Written at the first step and rewritten as the run goes; every key is optional
//! when read, so a manifest cut short (or from an older recorder) still reads.

use serde::{Deserialize, Serialize};

use super::fleet::FleetSource;
use super::gate::Gpu;
use super::keyword::keywords;
use super::Document;
use crate::engine::Engine;

/// The program that wrote the folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recorder {
    pub name: String,
    pub version: String,
}

keywords! {
    /// Whether the recorder started the server or attached to a running one.
    #[derive(Default)]
    pub enum Mode {
        #[default]
        Serve = "serve",
        Attach = "attach",
    }
}

/// How a process ended: its exit code, or the name of the signal that killed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Exit {
    Code(i32),
    Signal(String),
}

keywords! {
    /// Whether the listening socket was proven to be the launched server's (T13,
    /// docs/tripwires.md#t13).
    pub enum Ownership {
        Verified = "verified",
        Unverified = "unverified",
    }
}

/// The server `record --serve` started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Serve {
    /// The command as given.
    pub command: String,
    pub argv: Vec<String>,
    pub pid: Option<i32>,
    pub sid: Option<i32>,
    /// The launched process's start time (clock ticks after boot, from /proc), so a later
    /// `teardown --run` can tell it from a reused PID or session id.
    pub start_ticks: Option<u64>,
    pub exit: Option<Exit>,
    pub ownership: Option<Ownership>,
}

keywords! {
    /// Where the engine in effect came from.
    pub enum EngineFrom {
        Flag = "flag",
        Env = "env",
        ServeCommand = "serve command",
        Metrics = "metrics",
    }
}

/// The engine in effect.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineInEffect {
    pub key: Option<Engine>,
    pub from: Option<EngineFrom>,
}

/// The server's own version, and the endpoint that gave it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerVersion {
    pub version: String,
    pub endpoint: String,
}

keywords! {
    /// A load client the recorder recognises (`recorder/src/load.rs`).
    pub enum Client {
        Vllm = "vllm",
        Sglang = "sglang",
        Trtllm = "trtllm",
        /// `guidellm run` (GuideLLM 0.8).
        Guidellm = "guidellm",
        /// `aiperf profile` (AIPerf 0.13).
        Aiperf = "aiperf",
    }
}

/// The load command and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Load {
    pub argv_given: Vec<String>,
    /// The vector run: the given one plus the save flags appended.
    pub argv_run: Vec<String>,
    /// None: no recognised client, so `load.log` is not counted
    /// (docs/run-folder.md#load-log).
    pub client: Option<Client>,
    pub appended: Vec<String>,
    pub exit: Option<i32>,
    pub signal: Option<String>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
    /// Several load commands run one after another (`-- A --then B`), each a phase of the
    /// run, in order. Left out for a single command, so its manifest reads and writes as
    /// before; then the fields above describe the whole sequence (`argv_given` with its
    /// `--then` tokens, the first failure's exit, the first start and the last end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<LoadRun>,
}

/// One of several load commands: what ran, when (the series' wall clock, unix seconds),
/// how it ended, and the result it saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadRun {
    pub argv_given: Vec<String>,
    pub argv_run: Vec<String>,
    pub client: Option<Client>,
    pub appended: Vec<String>,
    pub exit: Option<i32>,
    pub signal: Option<String>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
    /// Its result in the folder (`bench-N.json`), when it saved one.
    pub result: Option<BenchResult>,
}

/// The requested concurrency (T8's order of sources: docs/tripwires.md#t8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Requested {
    /// The recorder's `--requested`.
    pub flag: Option<i64>,
    /// The load command's `--max-concurrency`.
    pub from_load: Option<i64>,
}

/// The load tool's result file: its name in the folder, and where it was found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchResult {
    pub file: String,
    pub source: String,
}

/// Where `boot.log` came from, and its byte length at four moments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BootLog {
    /// `launched`, or the `--boot-log` path copied in.
    pub source: String,
    pub ready: Option<u64>,
    pub load_start: Option<u64>,
    pub load_end: Option<u64>,
    pub stop: Option<u64>,
}

impl BootLog {
    /// The source of a log the recorder's own server wrote.
    pub const LAUNCHED: &'static str = "launched";
}

keywords! {
    /// How far the run got.
    pub enum State {
        Running = "running",
        Completed = "completed",
        Problem = "problem",
        Interrupted = "interrupted",
    }
}

keywords! {
    /// The step a run ended at (the steps of `record`: `recorder/src/record/mod.rs`).
    pub enum Stage {
        Engine = "engine",
        Platform = "platform",
        Gate = "gate",
        Port = "port",
        Start = "start",
        Ready = "ready",
        Attach = "attach",
        Metrics = "metrics",
        BootLog = "boot_log",
        Before = "before",
        Load = "load",
        After = "after",
        Stop = "stop",
    }
}

/// Where the run ended, and the problem that ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub state: State,
    #[serde(default)]
    pub stage: Option<Stage>,
    #[serde(default)]
    pub problem: Option<String>,
}

/// `manifest.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    pub recorder: Recorder,
    pub argv: Vec<String>,
    pub mode: Mode,
    /// Serve mode only.
    pub serve: Option<Serve>,
    pub url: String,
    pub metrics_path: Option<String>,
    /// Where the metrics were read when not from the server at `url`: `prometheus` for
    /// a fleet recorded through Prometheus (`fleet.json` says which server and replicas).
    /// Left out when the server itself was scraped, so older manifests read unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_source: Option<FleetSource>,
    pub engine: EngineInEffect,
    pub server_version: Option<ServerVersion>,
    /// The cards' facts at the start (`[]` without `nvidia-smi`).
    pub gpus: Vec<Gpu>,
    pub interval_s: f64,
    /// False with `--no-probe`.
    pub probe: bool,
    pub load: Load,
    pub requested: Requested,
    pub bench_result: Option<BenchResult>,
    /// The steps of a sweep whose tool writes one result per step (AIPerf's
    /// `--concurrency 2,16`: `concurrency_2/`, `concurrency_16/`), copied in as
    /// `bench-1.json`, `bench-2.json`, … in the order they ran, each with its per-request
    /// export as `bench-N.requests.jsonl`. Left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bench_steps: Vec<BenchResult>,
    pub boot_log: Option<BootLog>,
    pub title: Option<String>,
    pub notes: Vec<String>,
    pub started_wall: f64,
    pub ended_wall: Option<f64>,
    /// Always written; none only in a manifest that lacks it.
    pub outcome: Option<Outcome>,
    /// The folder's files at the close.
    pub files: Vec<String>,
}

impl Document for Manifest {
    const SCHEMA: &'static str = "inferlint.run/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes, to_json};
    use super::*;

    #[test]
    fn recorded_manifests_round_trip() {
        for engine in ["vllm", "sglang", "trtllm"] {
            let bytes = fixture(engine, "manifest.json");
            let m: Manifest = read("manifest.json", &bytes).unwrap();
            assert_eq!(m.engine.key.map(Engine::key), Some(engine));
            assert_eq!(m.outcome.as_ref().unwrap().state, State::Completed);
            // Every recorded run used `vllm bench serve` as its load.
            assert_eq!(m.load.client, Some(Client::Vllm));
            assert_eq!(m.serve.as_ref().unwrap().exit, Some(Exit::Code(0)));
            // These folders predate `serve.start_ticks`; otherwise the bytes are the same.
            let mut written =
                crate::json::parse(std::str::from_utf8(&to_bytes(&m)).unwrap()).unwrap();
            if let crate::json::Json::Obj(pairs) = &mut written {
                for (k, v) in pairs.iter_mut() {
                    if let (true, crate::json::Json::Obj(serve)) = (k == "serve", v) {
                        serve.retain(|(k, _)| k != "start_ticks");
                    }
                }
            }
            let mut text = written.to_pretty(1);
            text.push('\n');
            assert_eq!(text, String::from_utf8(bytes).unwrap(), "{engine}");
        }
    }

    #[test]
    fn several_load_runs_are_listed_and_a_single_one_writes_no_runs_key() {
        let single = Manifest::default();
        let text = String::from_utf8(to_bytes(&single)).unwrap();
        assert!(!text.contains("\"runs\""), "{text}");
        let m = Manifest {
            load: Load {
                runs: vec![
                    LoadRun {
                        client: Some(Client::Vllm),
                        started_wall: Some(100.25),
                        ended_wall: Some(110.5),
                        result: Some(BenchResult {
                            file: "bench-1.json".into(),
                            source: "run/bench-1.json".into(),
                        }),
                        ..LoadRun::default()
                    },
                    LoadRun::default(),
                ],
                ..Load::default()
            },
            ..Manifest::default()
        };
        let back: Manifest = read("manifest.json", &to_bytes(&m)).unwrap();
        assert_eq!(back, m);
        assert_eq!(
            back.load.runs[0].result.as_ref().unwrap().file,
            "bench-1.json"
        );
    }

    #[test]
    fn a_short_manifest_reads_with_defaults() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/edge/gate-only/manifest.json"
        );
        let m: Manifest = read("manifest.json", &std::fs::read(path).unwrap()).unwrap();
        let outcome = m.outcome.clone().unwrap();
        assert_eq!(
            (outcome.state, outcome.stage),
            (State::Problem, Some(Stage::Gate))
        );
        assert_eq!(m.requested.from_load, Some(32));
        assert_eq!(m.title, None);
        assert!(m.serve.is_none() && m.gpus.is_empty());
    }

    #[test]
    fn keys_in_the_spec_order_and_exit_as_code_or_signal() {
        let m = Manifest {
            serve: Some(Serve {
                exit: Some(Exit::Signal("SIGKILL".into())),
                ..Serve::default()
            }),
            outcome: Some(Outcome {
                state: State::Interrupted,
                stage: Some(Stage::BootLog),
                problem: None,
            }),
            ..Manifest::default()
        };
        let keys: Vec<String> = match to_json(&m) {
            crate::json::Json::Obj(pairs) => pairs.into_iter().map(|(k, _)| k).collect(),
            _ => unreachable!(),
        };
        assert_eq!(
            keys.join(" "),
            "recorder argv mode serve url metrics_path engine server_version gpus interval_s \
             probe load requested bench_result boot_log title notes started_wall ended_wall \
             outcome files"
        );
        let back: Manifest = read("manifest.json", &to_bytes(&m)).unwrap();
        assert_eq!(back, m);
        assert_eq!(
            to_json(&m.outcome).to_compact(),
            r#"{"state": "interrupted", "stage": "boot_log", "problem": null}"#
        );
    }
}
