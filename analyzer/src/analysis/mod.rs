//! The `analyze` flow: parse every input once (`parsed.rs`), refuse mixed engines and
//! decide the engine of each input (`engines.rs`), build the whole run's context
//! (`rules::scope::RunScope`) and run its rules (`rules::runner`), judge each phase of a
//! sweep and each replica of a fleet the same way, and assemble the Report.

mod derived;
mod engines;
mod parsed;

use crate::bench::{untimed_requests, BenchResult};
use crate::bootlog::{self, BootLog};
use crate::engine::Engine;
use crate::input::InputError;
use crate::manifest::Manifest;
use crate::plausible::Implausible;
use crate::report::Report;
use crate::rules::outcome::RunOutcome;
use crate::rules::runner;
use crate::rules::scope::RunScope;
use crate::series::Series;
use crate::text::decode_lossy;
use derived::Derived;
use parsed::Parsed;

pub use crate::snapshot::snapshots_engine;
pub use engines::mismatch;
// The input types live in their own leaf module; callers name them from here too.
pub use crate::inputs::{BenchInput, InputFile, NamedEngine, Options, RunInput};

/// Why `analyze` gave no report at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalyzeError {
    /// An input names another engine than the one the user named.
    #[error("{0}")]
    EngineMismatch(String),
    #[error("no run files: the folder has no boot log, snapshot, series, gate.json, probe.json, teardown.json or AIPerf's server_metrics_export.json")]
    NoRunFiles,
    #[error("no usable run file")]
    NothingUsable(Vec<InputError>),
}

/// A finished analysis.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub report: Report,
    /// Notes for stderr (skipped series lines, the engine fallback, the untested version).
    pub notes: Vec<String>,
    /// Input errors: each also made the checks needing that file `unknown`.
    pub errors: Vec<InputError>,
    /// Values the plausibility gate refused: each made the checks reading its field
    /// `unknown` (never a pass).
    pub implausible: Vec<Implausible>,
}

impl Analysis {
    /// Exit status: 1 on a failed tripwire (or a warning under `strict`), else 2 when a
    /// check can't tell, an input is unusable or the run broke, else 0. A sweep's phases
    /// count as checks of the run: the worst phase decides too.
    pub fn exit_status(&self, strict: bool) -> i32 {
        let broken = self
            .report
            .banner
            .as_ref()
            .is_some_and(|b| !b.what_broke.is_empty());
        crate::rules::verdict::exit_status(
            &self.report.all_checks(),
            strict,
            broken || !self.errors.is_empty(),
        )
    }
}

/// Runs every check the inputs allow.
pub fn analyze(input: &RunInput, opts: &Options) -> Result<Analysis, AnalyzeError> {
    let series = input
        .series
        .as_ref()
        .map(|f| f.bytes().and_then(|b| Series::read(&f.name, b)));
    analyze_with_series(input, opts, series)
}

/// As [`analyze`], with the series already read (a front end streams a long recording
/// with `series::SeriesReader` rather than holding its bytes): `input.series` then only
/// names the file, and its bytes are not read.
pub fn analyze_with_series(
    input: &RunInput,
    opts: &Options,
    series: Option<Result<Series, InputError>>,
) -> Result<Analysis, AnalyzeError> {
    let mut errors = Vec::new();
    let mut p = Parsed::read(input, series, &mut errors);
    if !parsed::has_run_files(input) {
        return Err(AnalyzeError::NoRunFiles);
    }
    engines::refuse_mixed(opts.engine, &p, input)?;
    let named_engine = opts.engine.map(|n| n.engine);
    let logs = read_logs(&mut p, input, named_engine);
    let mut implausible = p.implausible();
    let mut notes = parsed::implausible_notes(&implausible);
    errors.extend(p.errors());
    if !p.any_usable(input) {
        return Err(AnalyzeError::NothingUsable(errors));
    }
    let log_engine = logs.first().and_then(|l| l.facts.engine);
    let engines = engines::Engines::find(&p, log_engine, named_engine);
    // A fleet's replicas name it; said after they are read.
    if engines.report.is_none() && named_engine.is_none() && input.fleet.is_none() {
        notes.push(ENGINE_UNNAMED.to_string());
    }
    notes.extend(input_notes(&p, input, &logs));

    let d = Derived::of(&p, input, opts, &logs);
    let cx = d.scope(&p, input, &logs, &engines);
    let mut results = runner::run(&cx);
    let phases = crate::phases::judge_all(&cx);

    // A fleet: each replica and the fleet as a whole (fleet/).
    let fleet = input.fleet.as_ref().map(|f| {
        crate::fleet::analyze(
            input,
            f,
            &crate::fleet::FleetContext {
                requested: d.requested,
                bench: cx
                    .bench_ok()
                    .zip(input.bench.as_ref().map(|b| b.evidence_path.as_str())),
                expected_extra: d.expected_extra,
                down: d.down.is_some(),
            },
        )
    });
    let mut report_engine = engines.report;
    if let Some(fleet) = &fleet {
        errors.extend(fleet.errors.iter().cloned());
        notes.extend(parsed::implausible_notes(&fleet.implausible));
        implausible.extend(fleet.implausible.iter().cloned());
        results.extend(fleet.checks.iter().cloned());
        report_engine = report_engine.or(fleet.engine);
        if report_engine.is_none() && named_engine.is_none() {
            notes.push(ENGINE_UNNAMED.to_string());
        }
    }
    if d.outcome.is_broken() {
        let ready_line = logs.first().and_then(|l| l.facts.ready_lineno);
        runner::qualify_broken(&mut results, &d.outcome, ready_line);
    }
    let report = report(&cx, opts, report_engine, results, phases, fleet);
    Ok(Analysis {
        report,
        notes,
        errors,
        implausible,
    })
}

/// The note when no input names the engine.
const ENGINE_UNNAMED: &str = "no input names its engine: reading it as vLLM's";

/// The Report: the run's results and phases, the figures around them, what broke, and a
/// fleet's replicas and charts.
fn report(
    cx: &RunScope<'_>,
    opts: &Options,
    engine: Option<Engine>,
    checks: Vec<crate::rules::CheckResult>,
    phases: Vec<crate::phases::PhaseVerdict>,
    fleet: Option<crate::fleet::FleetOutcome>,
) -> Report {
    let pair = cx.pair.present();
    let mut report = Report::build(crate::report::ReportInputs {
        engine,
        title: opts.title.clone(),
        manifest: cx.manifest,
        logs: cx.logs,
        checks,
        phases,
        requested: cx.requested,
        usable_blocks: cx.usable_blocks(),
        pair,
        series: cx.series.present(),
        bench: cx.bench_ok(),
        gpu: cx.gpu.present(),
        input: cx.input,
        utc_offset_min: opts.utc_offset_min,
    });
    say_what_broke(&mut report, cx.outcome, cx.manifest);
    if let Some(fleet) = fleet {
        report.replicas = fleet.replicas;
        // A fleet folder's top level has no recording: its chart places show the replicas.
        if let Some((requests, kv)) = fleet.charts {
            report.charts.requests.get_or_insert(requests);
            report.charts.kv.get_or_insert(kv);
        }
    }
    report
}

/// A parsed input, when it was given and usable.
fn ok<T>(r: &Option<Result<T, InputError>>) -> Option<&T> {
    r.as_ref().and_then(|r| r.as_ref().ok())
}

/// The boot logs' facts; the running gauge is then bounded by the engine's own limit on
/// running requests (a reading above it is refused).
fn read_logs(p: &mut Parsed, input: &RunInput, named: Option<Engine>) -> Vec<BootLog> {
    let mut logs: Vec<BootLog> = bootlog::read_logs(&p.log_texts, named);
    // The live server's version, when the first log prints no vLLM version.
    if let (Some(first), Some(m)) = (logs.first_mut(), &p.manifest) {
        if first.facts.vllm_version.is_none() {
            first.facts.server_version.clone_from(&m.server_version);
        }
    }
    let cap = logs
        .first()
        .and_then(|l| l.facts.running_cap_info())
        .and_then(|c| u64::try_from(c.cap).ok());
    if let (Some(Ok(s)), Some(cap), Some(f)) = (&mut p.series, cap, &input.series) {
        s.gate_running(cap, &f.name);
    }
    logs
}

/// Notes on the inputs: lines of the series and GPU samples skipped, an untested engine
/// version.
fn input_notes(p: &Parsed, input: &RunInput, logs: &[BootLog]) -> Vec<String> {
    let mut notes = Vec::new();
    if let (Some(Ok(s)), Some(f)) = (&p.series, &input.series) {
        notes.extend(s.skip_note(&f.name));
    }
    if let (Some(Ok(g)), Some(f)) = (&p.gpu, &input.gpu) {
        notes.extend(g.skip_note(&f.name));
    }
    notes.extend(logs.first().and_then(|l| l.facts.untested_version_note()));
    notes
}

/// A broken run's banner lists what broke.
fn say_what_broke(report: &mut Report, outcome: &RunOutcome, manifest: Option<&Manifest>) {
    if !outcome.is_broken() {
        return;
    }
    let state = manifest.and_then(|m| m.outcome_state.clone());
    report
        .banner
        .get_or_insert_with(|| crate::report::Banner {
            state: state.unwrap_or_else(|| "completed".to_string()),
            stage: None,
            problem: None,
            what_broke: Vec::new(),
        })
        .what_broke = outcome.broke.clone();
}

/// The requested concurrency: `--requested`, else the recorder's flag, else what it read
/// from the load command, else the load tool's result.
pub fn requested_concurrency(
    opts: &Options,
    manifest: Option<&Manifest>,
    bench: Option<&BenchResult>,
) -> Option<i64> {
    opts.requested
        .or(manifest.and_then(|m| m.requested_flag))
        .or(manifest.and_then(|m| m.requested_from_load))
        .or(bench.and_then(|b| b.max_concurrency))
        .filter(|&n| n > 0)
}

/// Requests the load tool left out of its result: from `load.log`, plus those its result
/// counts apart (GuideLLM's and AIPerf's warm-up).
fn expected_extra(
    input: &RunInput,
    manifest: Option<&Manifest>,
    bench: Option<&BenchResult>,
) -> i64 {
    let own = bench.and_then(|b| b.untimed).unwrap_or(0);
    if manifest.is_some_and(|m| m.load_unrecognised) {
        return own;
    }
    own + match input.load_log.as_ref().and_then(|f| f.bytes.as_ref().ok()) {
        Some(b) => untimed_requests(&decode_lossy(b)),
        None => 0,
    }
}
