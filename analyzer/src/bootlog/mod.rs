//! Boot logs (docs/run-folder.md#boot-log): the facts of each start, the failure
//! classifier, and which starts share their settings (the rules that judge them are in
//! `rules/`: T4–T7, T11, T12).
//!
//! The public types and functions below are the contract the rest of the analyzer uses.
//! The work is split by job: `scan` walks the lines once (`lines` prepares each line,
//! `anchors` finds the fixed texts on it); `facts` applies the field table of `fields`
//! (value rules in `vllm`, `sglang`, `trtllm`, written with the patterns of `pat`, giving
//! a `value`; Python literals in `pylit`, stamps and counts in `stamps` and `counts`);
//! `derive` computes the settings and derived facts;
//! `classify` is the failure classifier; `compare` groups starts with the same settings;
//! `record` writes the facts record; `labels` names logs given together.

mod anchors;
mod classify;
mod compare;
mod counts;
pub(crate) mod derive;
mod facts;
mod fields;
pub(crate) mod jsoneq;
mod labels;
mod lines;
mod pat;
pub(crate) mod pylit;
mod record;
mod scan;
mod sglang;
mod stamps;
mod trtllm;
mod value;
mod vllm;

pub use compare::groups;

use crate::engine::{engine_from_log, Engine};
use crate::json::Json;

/// One unparsed line: an anchor was present but the value did not parse.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unparsed {
    pub field: String,
    pub lineno: usize,
    pub line: String,
}

impl Unparsed {
    /// `{field, lineno, line}`, as the facts record and check-log's T12 show it.
    pub fn to_json(&self) -> Json {
        crate::json::obj([
            ("field", Json::Str(self.field.clone())),
            ("lineno", Json::from(self.lineno)),
            ("line", Json::Str(self.line.clone())),
        ])
    }
}

/// The server's own limit on running requests (T8 names it: docs/tripwires.md#t8).
#[derive(Debug, Clone, PartialEq)]
pub struct RunningCap {
    /// The limit it runs with.
    pub cap: i64,
    /// The limit it was started with, when it printed a lower one it settled on.
    pub requested_running: Option<i64>,
    /// Why it lowered the limit ("mamba state cache"), when printed.
    pub reason: Option<String>,
    /// The engine the cap was read from (vLLM when the log names none).
    pub engine: Engine,
    /// True when the cap is vLLM's non-default `max_num_seqs` (no printed limit).
    pub from_max_num_seqs: bool,
}

/// Everything a boot log says (its facts record, `record.rs`), plus derived facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BootFacts {
    pub engine: Option<Engine>,
    pub vllm_version: Option<String>,
    pub engine_version: Option<String>,
    pub server_version: Option<String>,
    pub non_default_args: Option<Json>,
    pub server_args: Option<Json>,
    pub page_size: Option<i64>,
    pub running_cap: Option<i64>,
    pub running_cap_reason: Option<String>,
    pub requested_running: Option<i64>,
    pub requested_backend: Option<String>,
    pub selected_backends: Vec<String>,
    pub drafter_backends: Vec<String>,
    pub candidate_backends: Vec<String>,
    pub attention_block_size: Option<i64>,
    pub mamba_page_padding_pct: Option<f64>,
    pub kv_pool_tokens: Option<i64>,
    pub max_concurrency: Option<f64>,
    pub max_concurrency_request_len: Option<i64>,
    pub available_kv_cache_gib: Option<f64>,
    pub model_load_gib: Option<f64>,
    pub model_load_s: Option<f64>,
    pub cudagraphs: Option<bool>,
    pub cudagraph_estimated_gib: Option<f64>,
    pub cudagraph_actual_gib: Option<f64>,
    pub cudagraph_mode_downgrade: Option<(String, String)>,
    pub consumed_gib: Option<f64>,
    pub peak_activation_gib: Option<f64>,
    pub compile_s: Option<f64>,
    pub compiled_fresh: Option<bool>,
    pub pauses: Option<i64>,
    pub served_in_log: Option<i64>,
    pub speculative: Option<bool>,
    pub ready: bool,
    pub ready_lineno: Option<usize>,
    /// Process tag name → distinct pids, ascending; in order of first appearance.
    pub processes: Vec<(String, Vec<i64>)>,
    pub unparsed: Vec<Unparsed>,
    /// Field id → every distinct value seen, in order of first appearance.
    pub conflicts: Vec<(String, Vec<Json>)>,
    pub lines: usize,
    /// A start's identity for T4/T11 (docs/tripwires.md#t4).
    pub config_args: Option<Json>,
    /// Seconds from the first to the last stamped line up to the ready line.
    pub boot_seconds: Option<f64>,
}

impl BootFacts {
    /// `vllm_version`, else `engine_version`, else `server_version`.
    pub fn version(&self) -> Option<&str> {
        self.vllm_version
            .as_deref()
            .or(self.engine_version.as_deref())
            .or(self.server_version.as_deref())
    }
    /// Started with the same flags as `other` (the identity T4 and T11 group starts by);
    /// `None` when either start's flags are not in its log.
    pub fn same_flags(&self, other: &BootFacts) -> Option<bool> {
        let (a, b) = (self.config_args.as_ref()?, other.config_args.as_ref()?);
        Some(self.engine == other.engine && jsoneq::same(a, b))
    }
    /// `config_args.model`, else `config_args.model_path`.
    pub fn model(&self) -> Option<&str> {
        let args = self.config_args.as_ref()?;
        args.get("model")
            .and_then(Json::as_str)
            .or_else(|| args.get("model_path").and_then(Json::as_str))
    }
    /// vLLM's non-default `max_num_queued_reqs` when an integer.
    pub fn max_num_queued_reqs(&self) -> Option<i64> {
        match self.non_default_args.as_ref()?.get("max_num_queued_reqs")? {
            Json::Int(n) => Some(*n),
            _ => None,
        }
    }
    /// vLLM's non-default `max_num_queued_tokens`, as printed, when present.
    pub fn max_num_queued_tokens(&self) -> Option<Json> {
        self.non_default_args
            .as_ref()?
            .get("max_num_queued_tokens")
            .filter(|v| !v.is_null())
            .cloned()
    }
    /// TensorRT-LLM's `capacity_scheduler_policy` from its LLM Args line.
    pub fn capacity_scheduler_policy(&self) -> Option<&str> {
        let args = self.server_args.as_ref()?;
        if !args.has("llm_args") {
            return None;
        }
        args.get("capacity_scheduler_policy").and_then(Json::as_str)
    }
    /// The running cap: the limit the engine printed, else vLLM's non-default
    /// `max_num_seqs`.
    ///
    /// `requested_running` is set only when the engine printed a lower limit than the one
    /// it was started with (the "lowered its limit" case).
    pub fn running_cap_info(&self) -> Option<RunningCap> {
        let engine = self.engine.unwrap_or(Engine::Vllm);
        if let Some(cap) = self.running_cap {
            return Some(RunningCap {
                cap,
                requested_running: self.requested_running.filter(|&r| r > cap),
                reason: self.running_cap_reason.clone(),
                engine,
                from_max_num_seqs: false,
            });
        }
        match self.non_default_args.as_ref()?.get("max_num_seqs")? {
            Json::Int(n) => Some(RunningCap {
                cap: *n,
                requested_running: None,
                reason: None,
                engine,
                from_max_num_seqs: true,
            }),
            _ => None,
        }
    }
    /// The untested-version note, when the version is not a tested series.
    pub fn untested_version_note(&self) -> Option<String> {
        let version = self.version()?;
        let engine = self.engine.unwrap_or(Engine::Vllm);
        if engine.version_tested(version) {
            return None;
        }
        Some(format!(
            "{} {version} is not a release inferlint was tested with (tested: {}); a log line or \
             metric that changed in this release may explain a \"can't tell\" or an odd value",
            engine.display(),
            engine.tested_series().join(", ")
        ))
    }
}

/// A failure found by the classifier (docs/tripwires.md#classifier).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub kind: String,
    /// `boot` or `serving`.
    pub phase: String,
    pub lineno: usize,
    pub line: String,
    pub detail: String,
}

/// The classifier's verdict on a whole log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classification {
    pub failure: Option<Failure>,
    /// Admission-control rejections set aside (never a failure).
    pub rejections: usize,
    pub first_rejection_lineno: Option<usize>,
    /// The worst error a later served request set aside (step 5): not a failure by
    /// itself, but the cause to name when the server is known to have died during the
    /// run (its process exited on its own) whatever the log printed afterwards.
    pub set_aside: Option<Failure>,
}

/// One boot log read and classified.
#[derive(Debug, Clone)]
pub struct BootLog {
    /// The short name used in messages and evidence (`labels`).
    pub label: String,
    pub facts: BootFacts,
    pub classification: Classification,
}

/// Reads and classifies one log in a single pass over its lines.
pub fn read_log(text: &str, named: Option<Engine>) -> (BootFacts, Classification) {
    let mut facts = facts::FactsScan::new();
    let mut cls = classify::Classifier::new();
    scan::each_line(text, |v| {
        facts.line(v);
        cls.line(v);
    });
    (finish(facts, text, named), cls.end())
}

fn finish(scan: facts::FactsScan, text: &str, named: Option<Engine>) -> BootFacts {
    let (mut f, x) = scan.end();
    derive::derive(&mut f, &x, engine_from_log(text).or(named), text);
    f
}

/// Reads one log. `named` is the engine the user named, used when the log names none.
pub fn read_facts(text: &str, named: Option<Engine>) -> BootFacts {
    let mut facts = facts::FactsScan::new();
    scan::each_line(text, |v| facts.line(v));
    finish(facts, text, named)
}

/// Classifies one log (`classify`).
pub fn classify(text: &str) -> Classification {
    let mut cls = classify::Classifier::new();
    scan::each_line(text, |v| cls.line(v));
    cls.end()
}

/// Short, distinct labels for several log paths.
pub fn labels(paths: &[String]) -> Vec<String> {
    labels::labels(paths)
}

/// Reads and classifies logs given as (path, text), each with its label.
pub fn read_logs(logs: &[(String, String)], named: Option<Engine>) -> Vec<BootLog> {
    let paths: Vec<String> = logs.iter().map(|(p, _)| p.clone()).collect();
    labels(&paths)
        .into_iter()
        .zip(logs)
        .map(|(label, (_, text))| {
            let (facts, classification) = read_log(text, named);
            BootLog {
                label,
                facts,
                classification,
            }
        })
        .collect()
}
