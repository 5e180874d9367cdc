//! Command-line parsing (clap) and dispatch. Usage errors exit 2 before anything runs.

use std::path::PathBuf;

use analyzer::docs::manifest::EngineFrom;
use analyzer::rules::t02_orphaned_engine as t02;
use analyzer::Engine;
use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::commands;
use crate::flags;

const EXAMPLES: &str = "Examples:
  # start vLLM, record around its own benchmark client, stop it, check the run
  inferlint-recorder record -o run/ --serve \"vllm serve Qwen/Qwen3-8B --max-model-len 16384\" \\
      -- vllm bench serve --model Qwen/Qwen3-8B --max-concurrency 32 --num-prompts 32

  # attach to a server that is already running (its log copied in after the load)
  inferlint-recorder record -o run/ --url http://127.0.0.1:30000 --boot-log sglang.log \\
      -- python -m sglang.bench_serving --backend sglang --num-prompts 64

  # many replicas behind a router, read through Prometheus (probe and load via the router)
  inferlint-recorder record -o run/ --url http://127.0.0.1:8030 \\
      --prometheus http://127.0.0.1:9090 --match '{job=\"vllm\"}' \\
      --router-metrics http://127.0.0.1:29000/metrics \\
      -- vllm bench serve --base-url http://127.0.0.1:8030 --model Qwen/Qwen3-8B --num-prompts 90

  # one step each, for scripts
  inferlint-recorder snapshot http://127.0.0.1:8000 -o before.snapshot.json
  inferlint-recorder watch http://127.0.0.1:8000 -o run.series.jsonl --duration 60
  inferlint-recorder probe http://127.0.0.1:8000
  inferlint-recorder gpu-inspect
  inferlint-recorder teardown --dry-run

Then: inferlint analyze run/";

const START_HERE: &str = "inferlint-recorder records an LLM inference-server benchmark run into a folder;
`inferlint analyze FOLDER` then checks it against eighteen tripwires.

Start here:
  inferlint-recorder record -o run/ --serve \"vllm serve MODEL\" -- vllm bench serve --model MODEL ...
  inferlint-recorder --help      every command, with examples";

#[derive(Parser, Debug)]
#[command(
    name = "inferlint-recorder",
    version = inferlint::version::VERSION,
    about = "Start, probe, record and stop an LLM inference server around a benchmark run",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct Common {
    /// Print the result objects as JSON on stdout (record: the analyzer's Report)
    #[arg(long)]
    pub json: bool,
    /// A warning fails too
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug, Clone, Default)]
pub struct EngineArg {
    /// Name the engine (vllm, sglang, trtllm) and refuse others; else $INFERLINT_ENGINE
    #[arg(long)]
    pub engine: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Record a whole run: gate, start, probe, snapshots, series, load, stop, analysis
    #[command(after_help = "Examples:
  inferlint-recorder record -o run/ --serve \"vllm serve M --port 8000\" -- vllm bench serve --model M --max-concurrency 32
  inferlint-recorder record --url http://127.0.0.1:8000 --no-probe -- ./my-load.sh
  # several loads one after another, one phase each (each saves bench-N.json): --then
  inferlint-recorder record -o run/ --serve \"vllm serve M --port 8000\" -- \\
      vllm bench serve --model M --max-concurrency 2 --then vllm bench serve --model M --max-concurrency 16
  # replicas behind a router, their metrics from Prometheus (one folder per replica)
  inferlint-recorder record -o run/ --url http://127.0.0.1:8030 --prometheus http://127.0.0.1:9090 \\
      --match '{job=\"vllm\"}' --router-metrics http://127.0.0.1:29000/metrics \\
      -- vllm bench serve --base-url http://127.0.0.1:8030 --model M --num-prompts 90")]
    Record(RecordArgs),
    /// One timed reading of the server's metrics, into a snapshot file
    #[command(
        after_help = "Examples:\n  inferlint-recorder snapshot http://127.0.0.1:8000 -o before.snapshot.json\n  inferlint-recorder snapshot --prometheus http://127.0.0.1:9090 --match '{job=\"vllm\"}' -o now/   # now/<replica>.snapshot.json"
    )]
    Snapshot(SnapshotArgs),
    /// Record the gauges until stopped (Ctrl-C) or for --duration seconds
    #[command(
        after_help = "Examples:\n  inferlint-recorder watch http://127.0.0.1:8000 -o run.series.jsonl --interval 0.25 --duration 120\n  inferlint-recorder watch --prometheus http://127.0.0.1:9090 --match '{job=\"vllm\"}' -o series/ --interval 1   # series/<replica>.series.jsonl"
    )]
    Watch(WatchArgs),
    /// T7: one request, then a burst all at once, then a health check
    #[command(
        after_help = "Example:\n  inferlint-recorder probe http://127.0.0.1:8000 -o run/probe.json"
    )]
    Probe(ProbeArgs),
    /// The card's facts, and T2's check that it is free
    #[command(
        name = "gpu-inspect",
        after_help = "Example:\n  inferlint-recorder gpu-inspect -o run/gate.json"
    )]
    GpuInspect(GpuArgs),
    /// T2: stop inference servers (matched by their argument vectors), wait for a clear card
    #[command(after_help = "Examples:
  inferlint-recorder teardown --dry-run
  inferlint-recorder teardown --engine vllm
  inferlint-recorder teardown --run run/      # only the server the recorder of run/ started")]
    Teardown(TeardownArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish or powershell)
    #[command(after_help = "Examples:
  inferlint-recorder completions bash > ~/.local/share/bash-completion/completions/inferlint-recorder
  inferlint-recorder completions fish > ~/.config/fish/completions/inferlint-recorder.fish")]
    Completions(CompletionsArgs),
    /// Write the man pages (inferlint-recorder.1, inferlint-recorder-record.1, …) into a folder
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: inferlint::shell::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The folder to write the pages into (made when missing)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The run folder (default record-YYYYMMDD-HHMMSS)
    #[arg(short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Start the server with this command (without it: attach to a running server)
    #[arg(long, value_name = "CMD")]
    pub serve: Option<String>,
    /// The server's base address (default: from --serve, else the engine's port)
    #[arg(long)]
    pub url: Option<String>,
    /// Attach mode: the running server's log, copied in after the load
    #[arg(long, value_name = "FILE")]
    pub boot_log: Option<PathBuf>,
    /// The concurrency asked for (T8; default: the load's --max-concurrency)
    #[arg(long, value_name = "N", value_parser = flags::requested)]
    pub requested: Option<i64>,
    /// The load tool's result file (default: found)
    #[arg(long, value_name = "FILE")]
    pub bench_result: Option<PathBuf>,
    /// Seconds between series readings
    #[arg(long, default_value_t = 0.25, value_name = "S", value_parser = flags::positive_seconds)]
    pub interval: f64,
    /// Seconds to wait for readiness
    #[arg(long, default_value_t = 900.0, value_name = "S", value_parser = flags::positive_seconds)]
    pub ready_timeout: f64,
    /// (tests) seconds the card may take to read clear after the stop
    #[arg(long, default_value_t = t02::STOP_TIMEOUT_S, hide = true, value_name = "S", value_parser = flags::seconds)]
    pub stop_card_timeout: f64,
    /// Refuse to start the server when the GPU cannot be checked (no nvidia-smi):
    /// without it the start goes ahead with a warning
    #[arg(long)]
    pub require_gpu_check: bool,
    /// Skip the 9 probe requests
    #[arg(long)]
    pub no_probe: bool,
    /// Report title, stored for the analyzer
    #[arg(long)]
    pub title: Option<String>,
    /// Stop once the folder is written
    #[arg(long)]
    pub no_analyze: bool,
    #[command(flatten)]
    pub source: PrometheusArgs,
    /// The router's own metrics exporter (vllm-router: http://127.0.0.1:29000/metrics),
    /// read directly before and after the load
    #[arg(long, value_name = "URL", requires = "prometheus")]
    pub router_metrics: Option<String>,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub common: Common,
    /// The load command, after --; several run one after another when separated by a
    /// standalone --then (each is a phase of the run and saves its own result)
    #[arg(last = true, value_name = "LOAD")]
    pub load: Vec<String>,
}

/// Many replicas read through Prometheus instead of one server's metrics.
#[derive(Args, Debug, Clone, Default)]
pub struct PrometheusArgs {
    /// Read the replicas' metrics from this Prometheus server (attach mode: --url is the
    /// router the probe and the load go to)
    #[arg(long, value_name = "URL", requires = "selector")]
    pub prometheus: Option<String>,
    /// The replicas' series selector in Prometheus, e.g. '{job="vllm"}'
    #[arg(
        long = "match",
        id = "selector",
        value_name = "SELECTOR",
        requires = "prometheus"
    )]
    pub selector: Option<String>,
}

impl PrometheusArgs {
    /// The source, when `--prometheus` was given; a bad selector is a usage error.
    pub fn source(&self) -> Result<Option<(String, crate::prometheus::Selector)>, String> {
        match (&self.prometheus, &self.selector) {
            (Some(url), Some(sel)) => Ok(Some((
                url.clone(),
                crate::prometheus::Selector::parse(sel)?,
            ))),
            _ => Ok(None),
        }
    }
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// The server's base address (not with --prometheus)
    #[arg(required_unless_present = "prometheus", conflicts_with = "prometheus")]
    pub url: Option<String>,
    /// The snapshot file; with --prometheus a folder, one <replica>.snapshot.json each
    #[arg(short = 'o', value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub source: PrometheusArgs,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The server's base address (not with --prometheus)
    #[arg(required_unless_present = "prometheus", conflicts_with = "prometheus")]
    pub url: Option<String>,
    /// The series file; with --prometheus a folder, one <replica>.series.jsonl each
    #[arg(short = 'o', value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub source: PrometheusArgs,
    /// Seconds between readings
    #[arg(long, default_value_t = 0.5, value_parser = flags::positive_seconds)]
    pub interval: f64,
    /// Stop after this many seconds
    #[arg(long, value_parser = flags::positive_seconds)]
    pub duration: Option<f64>,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct ProbeArgs {
    pub url: String,
    /// The model to ask (default: the first the server lists)
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, default_value_t = 8, value_parser = flags::concurrency)]
    pub concurrency: usize,
    #[arg(long, default_value_t = 16, value_parser = flags::max_tokens)]
    pub max_tokens: u32,
    /// Also write probe.json here
    #[arg(short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct GpuArgs {
    #[arg(long, default_value_t = t02::MAX_USED_MIB, value_parser = flags::mib)]
    pub max_used_mib: i64,
    #[arg(long, default_value_t = t02::CONSECUTIVE, value_parser = flags::consecutive)]
    pub consecutive: u32,
    #[arg(long, default_value_t = t02::GATE_TIMEOUT_S, value_parser = flags::seconds)]
    pub timeout: f64,
    /// Also write gate.json here
    #[arg(short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// (tests) read processes from this folder instead of /proc
    #[arg(long, hide = true)]
    pub proc_root: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct TeardownArgs {
    #[arg(long, default_value_t = t02::MAX_USED_MIB, value_parser = flags::mib)]
    pub max_used_mib: i64,
    #[arg(long, default_value_t = t02::CONSECUTIVE, value_parser = flags::consecutive)]
    pub consecutive: u32,
    #[arg(long, default_value_t = t02::STOP_TIMEOUT_S, value_parser = flags::seconds)]
    pub timeout: f64,
    /// Show what would be stopped, stop nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Only the server the recorder of this run folder started
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Also write teardown.json here
    #[arg(short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// (tests) read processes from this folder instead of /proc
    #[arg(long, hide = true)]
    pub proc_root: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub common: Common,
}

/// The engine named by `--engine`, else `INFERLINT_ENGINE` (a key or display name,
/// case-insensitive).
pub fn named_engine(arg: &EngineArg) -> Result<Option<(Engine, EngineFrom)>, String> {
    if let Some(e) = &arg.engine {
        return Engine::parse_name(e)
            .map(|x| Some((x, EngineFrom::Flag)))
            .ok_or_else(|| format!("--engine {e} is not an engine (known: vllm, sglang, trtllm)"));
    }
    match std::env::var("INFERLINT_ENGINE") {
        Ok(v) if !v.trim().is_empty() => Engine::parse_name(&v)
            .map(|x| Some((x, EngineFrom::Env)))
            .ok_or_else(|| {
                format!("INFERLINT_ENGINE={v} is not an engine (known: vllm, sglang, trtllm)")
            }),
        _ => Ok(None),
    }
}

pub fn main(argv: Vec<std::ffi::OsString>) -> i32 {
    let raw: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let Some(cmd) = cli.command else {
        println!("{START_HERE}");
        return 0;
    };
    let r = match cmd {
        Cmd::Record(a) => commands::record(a, raw),
        Cmd::Snapshot(a) => commands::snapshot(a),
        Cmd::Watch(a) => commands::watch(a),
        Cmd::Probe(a) => commands::probe(a),
        Cmd::GpuInspect(a) => commands::gpu_inspect(a),
        Cmd::Teardown(a) => commands::teardown(a),
        Cmd::Completions(a) => {
            inferlint::shell::completions(Cli::command(), a.shell, &mut std::io::stdout())
                .map(|()| 0)
                .context("cannot print the completions")
        }
        Cmd::Man(a) => inferlint::shell::man_pages(Cli::command(), &a.dir)
            .map(|()| 0)
            .with_context(|| format!("cannot write the man pages into {}", a.dir.display())),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "inferlint-recorder: {}",
                analyzer::term::escape(&format!("{e:#}"))
            );
            2
        }
    }
}
