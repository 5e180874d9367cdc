//! Command-line arguments of `inferlint` (clap).

use clap::{Args, Parser, Subcommand, ValueEnum};
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
  inferlint compare old/ new/                 two or more runs side by side
  inferlint compare --baseline old/ new/      exit 1 when the new run is worse (CI)
  inferlint analyze run/ --format junit -o inferlint.xml   JUnit XML for CI test reports
  inferlint analyze run/ --format github      GitHub Actions annotations

Exit status: 1 when a tripwire failed (or warned, with --strict); otherwise 2 when a check
could not decide or an input is unusable; otherwise 0.
Environment: INFERLINT_ENGINE names the engine when --engine is not given; NO_COLOR turns
colour off.";

/// Checks an LLM serving benchmark run (vLLM, SGLang, TensorRT-LLM) against eighteen
/// tripwires: does the run measure what it seems to?
#[derive(Parser, Debug)]
#[command(name = "inferlint", version = crate::version::VERSION, about, after_help = AFTER_HELP)]
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
    /// Several run folders side by side; with --baseline, whether the new run is worse.
    #[command(after_help = COMPARE_HELP)]
    Compare(CompareArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Write the man pages (inferlint.1, inferlint-analyze.1, …) into a folder.
    Man(ManArgs),
}

const COMPLETIONS_HELP: &str = "\
Examples:
  inferlint completions bash > ~/.local/share/bash-completion/completions/inferlint
  inferlint completions zsh > ~/.zfunc/_inferlint      # with fpath+=~/.zfunc before compinit
  inferlint completions fish > ~/.config/fish/completions/inferlint.fish";

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: crate::shell::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The folder to write the pages into (made when missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// What a checking command prints: `--format`, and `--output` to send it to a file.
#[derive(Args, Debug, Clone, Default)]
pub struct FormatArgs {
    /// text (the default), json (as --json), junit (JUnit XML: one testcase per tripwire)
    /// or github (GitHub Actions annotations, then the text).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write the --format output to FILE; the terminal text is printed as usual.
    #[arg(long, short = 'o', value_name = "FILE", requires = "format")]
    pub output: Option<PathBuf>,
}

/// The output formats of `analyze` and `compare`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Junit,
    Github,
}

const COMPARE_HELP: &str = "\
Examples:
  inferlint compare vllm/ sglang/ trtllm/          one column per run, differences marked
  inferlint compare a/ b/ --json                   the same table as JSON
  inferlint compare a/ b/ --html compare.html      one offline page with both runs inside
  inferlint compare --baseline last-week/ tonight/ --tolerance 5%
  inferlint compare --baseline old/ new/ --format junit -o compare.xml
  inferlint compare --baseline old/ new/ --format github

A row marked ! differs in a way that matters and gets a one-line reading under the table;
~ differs in what ran (engine, version) or where a run cannot tell. With --baseline the
second run is judged against the first: a tripwire that did not fail there fails now (or,
with --strict, warns), or output tokens/s or most running at once fell by more than the
tolerance.

--format junit writes one <testsuite> per run with one <testcase> per tripwire result:
a failed tripwire is a <failure>; a warning passes (it is in the testcase's <system-out>)
unless --strict, where it is a <failure>, matching the exit status; \"can't tell\" and
\"does not apply\" are <skipped> with the reason; an unusable file is an <error>. With
--baseline the one suite is the baseline's: each tripwire of the new run and each figure,
a <failure> where it regressed. --format github prints ::error, ::warning and ::notice
workflow commands for the same cases, then the text.

Exit status: 2 when a run cannot be analyzed; with --baseline, 1 when the second run is
worse; otherwise 2 when a run has an unusable file; otherwise 0. Without --baseline a
tripwire failing in a run does not change the status: `inferlint analyze` judges a run.";

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Run folders, two or more; with --baseline, OLD then NEW.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Judge the second run against the first: exit 1 when it is worse.
    #[arg(long)]
    pub baseline: bool,
    /// How far output tokens/s and most running at once may fall under --baseline.
    #[arg(long, value_name = "PERCENT", default_value = "5%")]
    pub tolerance: String,
    /// Write one offline page with every run inside, shown side by side.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub common: Common,
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
    /// The load tool's result file: bench.json / bench.jsonl, GuideLLM's benchmarks.json or
    /// AIPerf's profile_export_aiperf.json.
    #[arg(long = "bench-result", value_name = "FILE")]
    pub bench_result: Option<PathBuf>,
    /// The report title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Write the report page here instead of RUN/report.html.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
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
