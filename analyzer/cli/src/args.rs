//! Command-line arguments of `inferlint` (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  inferlint analyze run/                      check a run folder recorded by inferlint-recorder
  inferlint analyze run/ --requested 32 --json
  inferlint check-log boot1.log boot2.log     compare two starts with the same flags (T4, T11)
  inferlint boot-facts boot.log               what the server actually started with
  inferlint preemption before.prom after.prom T1 from two metric snapshots
  inferlint rate before.snapshot.json after.snapshot.json
  inferlint series run.series.jsonl --snapshot after.snapshot.json --requested 32
  inferlint explain T9                        what a tripwire catches and why it matters

Exit status: 1 when a tripwire failed (or warned, with --strict); otherwise 2 when a check
could not decide or an input is unusable; otherwise 0.
Environment: INFERLINT_ENGINE names the engine when --engine is not given; NO_COLOR turns
colour off.";

/// Checks an LLM serving benchmark run (vLLM, SGLang, TensorRT-LLM) against eighteen
/// tripwires: does the run measure what it seems to?
#[derive(Parser, Debug)]
#[command(name = "inferlint", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every checking command takes.
#[derive(Args, Debug, Clone, Default)]
pub struct Common {
    /// Print JSON on stdout and nothing else there.
    #[arg(long, global = true)]
    pub json: bool,
    /// Treat warnings as failures in the exit status.
    #[arg(long, global = true)]
    pub strict: bool,
    /// The engine: vllm, sglang or trtllm (TensorRT-LLM). Inputs of another engine are
    /// refused. Falls back to INFERLINT_ENGINE.
    #[arg(long, global = true, value_name = "ENGINE")]
    pub engine: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check a run folder: every tripwire its files allow, what limited the run; writes
    /// RUN/results.json and RUN/report.html.
    Analyze(AnalyzeArgs),
    /// T4 T5 T6 T7 T11 T12 from one or more boot logs.
    CheckLog(CheckLogArgs),
    /// What a boot log says the server started with.
    BootFacts(BootFactsArgs),
    /// T1 (silent preemption) from two metric snapshots.
    Preemption(PreemptionArgs),
    /// T10: the token rate from the snapshots' own sub-second clocks.
    Rate(RateArgs),
    /// T14 T9 T8 from a gauge recording.
    Series(SeriesArgs),
    /// What each tripwire catches, why it matters and how to check it.
    Explain(ExplainArgs),
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The run folder (files are found by name inside it).
    pub run: Option<PathBuf>,
    /// Concurrency the load asked for (T8); else the recorder's manifest, else the
    /// result file's max_concurrency.
    #[arg(long, value_name = "N")]
    pub requested: Option<i64>,
    /// A boot log (repeat for several starts; T4 and T11 compare them).
    #[arg(long = "boot-log", value_name = "FILE")]
    pub boot_log: Vec<PathBuf>,
    /// The snapshot taken before the load.
    #[arg(long, value_name = "FILE")]
    pub before: Option<PathBuf>,
    /// The snapshot taken after the load.
    #[arg(long, value_name = "FILE")]
    pub after: Option<PathBuf>,
    /// The gauge recording (`*.series.jsonl`).
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// The load tool's result file (bench.json / bench.jsonl).
    #[arg(long = "bench-result", value_name = "FILE")]
    pub bench_result: Option<PathBuf>,
    /// The report title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Write the report page here instead of RUN/report.html.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct CheckLogArgs {
    /// Boot logs, in the order the starts happened.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct BootFactsArgs {
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct PreemptionArgs {
    /// Snapshot before the load (`.snapshot.json` or bare Prometheus text).
    pub before: PathBuf,
    /// Snapshot after the load.
    pub after: PathBuf,
    /// The gauge recording, for TensorRT-LLM's paused gauge.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// The server log covering the run (TensorRT-LLM logs each pause).
    #[arg(long = "boot-log", value_name = "FILE")]
    pub boot_log: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct RateArgs {
    pub before: PathBuf,
    pub after: PathBuf,
    /// The counter to rate (default: the engine's generated-token counter).
    #[arg(long, value_name = "NAME")]
    pub counter: Option<String>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct SeriesArgs {
    /// The gauge recording (`*.series.jsonl`).
    pub series: PathBuf,
    /// An after snapshot, for T14's exported block count.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Concurrency the load asked for (T8).
    #[arg(long, value_name = "N")]
    pub requested: Option<i64>,
    /// The boot log, for T8's explanation.
    #[arg(long = "boot-log", value_name = "FILE")]
    pub boot_log: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A tripwire: T9, 9 or falling-ceiling. Without one, the list.
    pub tripwire: Option<String>,
    #[command(flatten)]
    pub common: Common,
}
