//! The `analyze` flow (checks.md §1.6, formats.md §8.2): parse every input once, decide
//! the engine, run each check its inputs allow, and assemble the Report.

use crate::bench::{untimed_requests, AiperfServer, BenchResult};
use crate::bootlog::{self, BootLog};
use crate::checks;
use crate::counters::Pair;
use crate::docs::{self, Gate, Probe, Teardown};
use crate::engine::{engine_from_log, Engine};
use crate::gpu_samples::GpuSamples;
use crate::input::InputError;
use crate::manifest::Manifest;
use crate::plausible::Implausible;
use crate::report::Report;
use crate::series::Series;
use crate::snapshot::Snapshot;
use crate::text::decode_lossy;
use crate::verdict::{CheckResult, Status};

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
    /// Exit status (formats.md §8.3): input errors count as "unusable", and so does a
    /// run that broke (never 0).
    /// A sweep's phases count as checks of the run: the worst phase decides too.
    pub fn exit_status(&self, strict: bool) -> i32 {
        let broken = self
            .report
            .banner
            .as_ref()
            .is_some_and(|b| !b.what_broke.is_empty());
        crate::verdict::exit_status(
            &self.report.all_checks(),
            strict,
            broken || !self.errors.is_empty(),
        )
    }
}

/// Refusal text: which flag named which engine, and which engine the input came from.
pub fn mismatch(named: NamedEngine, what: &str, found: Engine) -> String {
    format!(
        "{} names {}, but {} wrote {what}: refusing to mix engines",
        match named.by {
            "--engine" => format!("--engine {}", named.engine.key()),
            other => format!("{other}={}", named.engine.key()),
        },
        named.engine.display(),
        found.display()
    )
}

/// Parsed inputs, each `Ok(None)` when not given and `Err` when unusable.
struct Parsed {
    before: Option<Result<Snapshot, InputError>>,
    after: Option<Result<Snapshot, InputError>>,
    series: Option<Result<Series, InputError>>,
    bench: Option<Result<BenchResult, InputError>>,
    manifest: Option<Manifest>,
    gate: Option<Result<Gate, InputError>>,
    probe: Option<Result<Probe, InputError>>,
    teardown: Option<Result<Teardown, InputError>>,
    gpu: Option<Result<GpuSamples, InputError>>,
    /// AIPerf's scrape of the server's metrics.
    scrape: Option<Result<AiperfServer, InputError>>,
}

fn parse_opt<T>(
    f: &Option<InputFile>,
    read: impl Fn(&str, &[u8]) -> Result<T, InputError>,
) -> Option<Result<T, InputError>> {
    f.as_ref().map(|f| f.bytes().and_then(|b| read(&f.name, b)))
}

/// Runs every check the inputs allow.
pub fn analyze(input: &RunInput, opts: &Options) -> Result<Analysis, AnalyzeError> {
    analyze_with_series(input, opts, parse_opt(&input.series, Series::read))
}

/// As [`analyze`], with the series already read (a front end streams a long recording
/// with `series::SeriesReader` rather than holding its bytes): `input.series` then only
/// names the file, and its bytes are not read.
pub fn analyze_with_series(
    input: &RunInput,
    opts: &Options,
    series: Option<Result<Series, InputError>>,
) -> Result<Analysis, AnalyzeError> {
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    let mut p = Parsed {
        before: parse_opt(&input.before, Snapshot::read),
        after: parse_opt(&input.after, Snapshot::read),
        series,
        bench: input.bench.as_ref().map(|b| {
            b.file
                .bytes()
                .and_then(|bytes| BenchResult::read(&b.file.name, bytes))
        }),
        manifest: None,
        gate: parse_opt(&input.gate, docs::read),
        probe: parse_opt(&input.probe, docs::read),
        teardown: parse_opt(&input.teardown, docs::read),
        gpu: parse_opt(&input.gpu, GpuSamples::read),
        scrape: parse_opt(&input.aiperf_server, AiperfServer::read),
    };
    if let Some(m) = &input.manifest {
        match m.bytes().and_then(|b| Manifest::read(&m.name, b)) {
            Ok(manifest) => p.manifest = Some(manifest),
            Err(e) => errors.push(e),
        }
    }
    if !input.bench_more.is_empty() {
        p.bench = input.bench.as_ref().map(|first| {
            crate::bench::runs::read_all(
                first,
                &input.bench_more,
                &input.bench_requests,
                p.manifest.as_ref(),
            )
        });
    }
    let has_run_files = !input.boot_logs.is_empty()
        || input.before.is_some()
        || input.after.is_some()
        || input.series.is_some()
        || input.gate.is_some()
        || input.probe.is_some()
        || input.teardown.is_some()
        || input.fleet.is_some()
        || input.aiperf_server.is_some();
    if !has_run_files {
        return Err(AnalyzeError::NoRunFiles);
    }

    // Boot logs decode lossily and never fail to parse; only an unreadable file fails.
    let mut log_texts = Vec::new();
    let mut log_errors = Vec::new();
    for f in &input.boot_logs {
        match f.bytes() {
            Ok(b) => log_texts.push((f.name.clone(), decode_lossy(b).into_owned())),
            Err(e) => log_errors.push(e),
        }
    }

    // Refuse inputs of another engine than the one named (formats.md §5.3).
    if let Some(named) = opts.engine {
        let snaps: Vec<&Snapshot> = [&p.before, &p.after]
            .into_iter()
            .filter_map(|s| s.as_ref().and_then(|r| r.as_ref().ok()))
            .collect();
        if let Some(found) = snapshots_engine(&snaps) {
            if found != named.engine {
                return Err(AnalyzeError::EngineMismatch(mismatch(
                    named,
                    "the snapshots' metrics",
                    found,
                )));
            }
        }
        if let Some(Ok(s)) = &p.series {
            if let Some(found) = s.engine_named {
                if found != named.engine {
                    let name = input
                        .series
                        .as_ref()
                        .map_or("the series", |f| f.name.as_str());
                    return Err(AnalyzeError::EngineMismatch(mismatch(named, name, found)));
                }
            }
        }
        if let (Some(Ok(s)), Some(f)) = (&p.scrape, &input.aiperf_server) {
            if let Some(found) = s.engine.filter(|&e| e != named.engine) {
                return Err(AnalyzeError::EngineMismatch(mismatch(
                    named, &f.name, found,
                )));
            }
        }
        for (name, text) in &log_texts {
            if let Some(found) = engine_from_log(text) {
                if found != named.engine {
                    return Err(AnalyzeError::EngineMismatch(mismatch(named, name, found)));
                }
            }
        }
    }

    let named_engine = opts.engine.map(|n| n.engine);
    let mut logs: Vec<BootLog> = bootlog::read_logs(&log_texts, named_engine);
    // The live server's version, when the first log prints no vLLM version.
    if let (Some(first), Some(m)) = (logs.first_mut(), &p.manifest) {
        if first.facts.vllm_version.is_none() {
            first.facts.server_version.clone_from(&m.server_version);
        }
    }
    let facts = logs.first().map(|l| &l.facts);
    // The engine's own limit on running requests bounds the running gauge (plausible.rs).
    let cap = facts
        .and_then(|f| f.running_cap_info())
        .and_then(|c| u64::try_from(c.cap).ok());
    if let (Some(Ok(s)), Some(cap), Some(f)) = (&mut p.series, cap, &input.series) {
        s.gate_running(cap, &f.name);
    }
    let mut implausible = implausible_values(&p);
    for group in implausible_notes(&implausible) {
        notes.push(group);
    }

    let before = ok_or_note(&p.before, &mut errors);
    let after = ok_or_note(&p.after, &mut errors);
    let series = ok_or_note(&p.series, &mut errors);
    let bench = ok_or_note(&p.bench, &mut errors);
    ok_or_note(&p.gate, &mut errors);
    ok_or_note(&p.probe, &mut errors);
    ok_or_note(&p.teardown, &mut errors);
    let gpu = ok_or_note(&p.gpu, &mut errors);
    let scrape = ok_or_note(&p.scrape, &mut errors);
    let scrape_error = p.scrape.as_ref().and_then(|r| r.as_ref().err());
    let scrape_file = input.aiperf_server.as_ref().map_or("", |f| f.name.as_str());
    errors.extend(log_errors.iter().cloned());

    let usable = !log_texts.is_empty()
        || before.is_some()
        || after.is_some()
        || series.is_some()
        || matches!(p.gate, Some(Ok(_)))
        || matches!(p.probe, Some(Ok(_)))
        || matches!(p.teardown, Some(Ok(_)))
        || input.fleet.is_some()
        || scrape.is_some();
    if !usable {
        return Err(AnalyzeError::NothingUsable(errors));
    }

    // The engine of each kind of input, and of the report (report.md §1).
    let snap_list: Vec<&Snapshot> = [before, after].into_iter().flatten().collect();
    let snap_engine_named = snapshots_engine(&snap_list);
    let snap_engine = snap_engine_named.unwrap_or(Engine::Vllm);
    let log_engine = facts.and_then(|f| f.engine);
    let mut report_engine = snap_engine_named
        .or(series.and_then(|s| s.engine_named))
        .or(log_engine)
        .or(scrape.and_then(|s| s.engine))
        .or(named_engine);
    let engine_unnamed = "no input names its engine: reading it as vLLM's";
    // The engine AIPerf's scrape is read as (its own metric names, else the report's).
    let scraped_engine = scrape
        .and_then(|s| s.engine)
        .or(report_engine)
        .unwrap_or(Engine::Vllm);
    // A fleet's replicas name it; said after they are read.
    if report_engine.is_none() && named_engine.is_none() && input.fleet.is_none() {
        notes.push(engine_unnamed.to_string());
    }
    if let (Some(s), Some(f)) = (series, &input.series) {
        if let Some(n) = s.skip_note(&f.name) {
            notes.push(n);
        }
    }
    if let (Some(Ok(g)), Some(f)) = (&p.gpu, &input.gpu) {
        notes.extend(g.skip_note(&f.name));
    }
    if let Some(note) = facts.and_then(|f| f.untested_version_note()) {
        notes.push(note);
    }

    let mut results: Vec<CheckResult> = bootlog::check_logs(&logs, false);
    for e in &log_errors {
        for t in [12, 5, 6] {
            results.push(unknown_for(t, e));
        }
    }

    // How the recording ended: a broken run says so and never passes as whole.
    let outcome = checks::run_outcome::read(&checks::run_outcome::Evidence {
        manifest: p.manifest.as_ref(),
        teardown: p.teardown.as_ref().and_then(|r| r.as_ref().ok()),
        bench,
        before_only: input.before.is_some() && input.after.is_none(),
        server_ready: logs.first().map(|l| l.facts.ready),
    });

    // T2 from teardown.json, else gate.json; then the probe's T7.
    match (&p.teardown, &p.gate) {
        (Some(Ok(doc)), _) => results.push(checks::t02_orphaned_engine::from_teardown(doc)),
        (Some(Err(e)), _) => results.push(unknown_for(2, e)),
        (None, _) if outcome.no_teardown => results.push(checks::t02_orphaned_engine::no_teardown(
            outcome.recorder_died,
        )),
        (None, Some(Ok(doc))) => results.push(checks::t02_orphaned_engine::from_gate(doc)),
        (None, Some(Err(e))) => results.push(unknown_for(2, e)),
        (None, None) => {}
    }
    let probe_t7 = match &p.probe {
        Some(Ok(doc)) => Some(checks::t07_probe::from_document(doc)),
        Some(Err(e)) => Some(unknown_for(7, e)),
        None => None,
    };
    // A server that died on its own is the run's one T7, whatever came before.
    match outcome.t7_death(&logs, probe_t7.as_ref()) {
        Some(death) => {
            results.retain(|r| r.tripwire != 7);
            results.push(death);
        }
        None => results.extend(probe_t7),
    }

    // Which snapshot error, if any, stands in for the pair.
    let pair_error = [&p.before, &p.after]
        .into_iter()
        .find_map(|s| s.as_ref().and_then(|r| r.as_ref().err()));
    let pair = match (before, after) {
        (Some(b), Some(a)) => Some(Pair::new(b, a)),
        _ => None,
    };

    // A server down before the load: T8 and T15 say so instead of judging the load.
    let down = checks::server_down::before_load(p.probe.as_ref().and_then(|r| r.as_ref().ok()));

    // A load ran unless the recorder says none was given: then T8 and T15 are never left
    // out (load_figures.rs).
    let load_ran = p.manifest.as_ref().is_none_or(|m| m.load_given);

    // T15
    if let Some(d) = &down {
        if input.bench.is_some() || p.manifest.as_ref().is_some_and(|m| m.load_given) {
            results.push(checks::t15_client_server::server_down(d));
        }
    } else if let Some(b) = &input.bench {
        match (&p.bench, &pair, pair_error) {
            (Some(Err(e)), _, _) => results.push(unknown_for(15, e)),
            (Some(Ok(res)), Some(pair), _) => {
                let extra = expected_extra(input, p.manifest.as_ref(), Some(res));
                results.push(checks::t15_client_server::check(
                    snap_engine,
                    pair,
                    res,
                    &b.evidence_path,
                    extra,
                ));
            }
            (Some(Ok(_)), None, Some(e)) => results.push(unknown_for(15, e)),
            (Some(Ok(res)), None, None) if outcome.after_missing.is_some() => {
                let why = outcome.after_missing.as_deref().unwrap_or_default();
                results.push(checks::t15_client_server::pair_missing(res, why));
            }
            // No snapshots: AIPerf's own scrape of the server, when it left one.
            (Some(Ok(res)), None, None) => match (scrape, scrape_error) {
                (Some(s), _) => results.push(checks::scraped::t15(
                    scraped_engine,
                    s,
                    scrape_file,
                    res,
                    &b.evidence_path,
                )),
                (None, Some(e)) => results.push(unknown_for(15, e)),
                (None, None) => {}
            },
            _ => {}
        }
    } else if let (true, Some(why)) = (load_ran, &outcome.after_missing) {
        results.push(missing_for(15, why));
    } else if load_ran && (pair.is_some() || pair_error.is_some() || p.scrape.is_some()) {
        results.push(checks::load_figures::t15(p.manifest.as_ref()));
    }

    // T1, T10
    match (&pair, pair_error) {
        (Some(pair), _) => {
            results.push(checks::t01_preemption::check(
                snap_engine,
                pair,
                series,
                facts,
            ));
            results.push(checks::t10_rate::check(
                pair,
                snap_engine.metrics().generation_tokens,
            ));
        }
        (None, Some(e)) => {
            results.push(unknown_for(1, e));
            results.push(unknown_for(10, e));
        }
        (None, None) if outcome.after_missing.is_some() => {
            let why = outcome.after_missing.as_deref().unwrap_or_default();
            results.push(missing_for(1, why));
            results.push(missing_for(10, why));
        }
        (None, None) => match (scrape, scrape_error) {
            (Some(s), _) => results.push(checks::scraped::t1(scraped_engine, s, scrape_file)),
            (None, Some(e)) => results.push(unknown_for(1, e)),
            (None, None) => {}
        },
    }

    // T14, T9, T8 from the series.
    let series_error = p.series.as_ref().and_then(|r| r.as_ref().err());
    let requested = requested_concurrency(opts, p.manifest.as_ref(), bench);
    let mut usable_blocks = None;
    if let Some(s) = series {
        let series_engine = s.engine();
        if series_engine.metrics().cache_info.is_none() {
            results.push(checks::t14_null_block::not_applicable(series_engine));
        } else if let Some(a) = after {
            let (r, n) = checks::t14_null_block::check(s, a);
            usable_blocks = n;
            results.push(r);
        } else if let Some(Err(e)) = &p.after {
            results.push(unknown_for(14, e));
        } else if let Some(why) = &outcome.after_missing {
            results.push(missing_for(14, why));
        }
        results.push(checks::t09_ceiling::check(s, usable_blocks));
        match (requested, &down) {
            (Some(req), Some(d)) => results.push(checks::t08_concurrency::server_down(req, d)),
            (Some(req), None) => {
                let mut r = checks::t08_concurrency::check(s, req, facts);
                checks::load_figures::note_sweep(&mut r, bench);
                results.push(r);
            }
            (None, _) if load_ran => results.push(match &p.bench {
                Some(Err(e)) => unknown_for(8, e).with(
                    checks::load_figures::DECIDE_WITH,
                    checks::load_figures::REQUESTED_FLAG,
                ),
                _ => checks::load_figures::t8(s, bench, p.manifest.as_ref()),
            }),
            (None, _) => {}
        }
    } else if let Some(e) = series_error {
        results.push(unknown_for(14, e));
        results.push(unknown_for(9, e));
        if requested.is_some() || load_ran {
            results.push(unknown_for(8, e));
        }
    } else if let (Some(d), Some(req)) = (&down, requested) {
        results.push(checks::t08_concurrency::server_down(req, d));
    } else if let Some(s) = scrape {
        results.push(checks::scraped::t8(
            scraped_engine,
            s,
            scrape_file,
            requested,
            bench,
        ));
    } else if let Some(e) = scrape_error {
        results.push(unknown_for(8, e));
    }

    // A sweep's phases, each judged on its own window (phases/).
    let phases = bench.map_or_else(Vec::new, |b| {
        let no_series = match (&down, series_error) {
            (Some(d), _) => Some(format!(
                "the server was down before the load started: {}",
                d.reason
            )),
            (None, Some(e)) => Some(format!("unusable input: {e}")),
            (None, None) => None,
        };
        crate::phases::judge_all(&crate::phases::PhaseInputs {
            bench: b,
            series: series.filter(|_| no_series.is_none()),
            no_series,
            cx: crate::phases::Context {
                engine: series.map_or(snap_engine, Series::engine),
                facts,
                usable_blocks,
                tool: b.tool_name(),
            },
        })
    });

    // A fleet: each replica and the fleet as a whole (fleet/). T16–T18 read one server's
    // readings, which a fleet folder's top level does not hold.
    let mut replicas = Vec::new();
    let mut fleet_charts = None;
    if let Some(f) = &input.fleet {
        let fleet = crate::fleet::analyze(
            input,
            f,
            &crate::fleet::FleetContext {
                requested,
                bench: bench.zip(input.bench.as_ref().map(|b| b.evidence_path.as_str())),
                expected_extra: expected_extra(input, p.manifest.as_ref(), bench),
            },
        );
        errors.extend(fleet.errors);
        notes.extend(implausible_notes(&fleet.implausible));
        implausible.extend(fleet.implausible);
        // A server down before the load already gave T8 and T15 their verdicts.
        results.extend(
            fleet
                .checks
                .into_iter()
                .filter(|c| down.is_none() || !matches!(c.tripwire, 8 | 15)),
        );
        replicas = fleet.replicas;
        fleet_charts = fleet.charts;
        report_engine = report_engine.or(fleet.engine);
        if report_engine.is_none() && named_engine.is_none() {
            notes.push(engine_unnamed.to_string());
        }
    } else if checks::measured::applies(input) {
        results.extend(checks::measured::run(&checks::measured::Measured {
            input,
            snapshot_engine: snap_engine,
            engine: log_engine.or(report_engine).unwrap_or(Engine::Vllm),
            gpu: p.gpu.as_ref(),
            pair: pair.as_ref(),
            pair_error,
            pair_missing: outcome.after_missing.as_deref(),
            series,
            bench,
            manifest: p.manifest.as_ref(),
            requested,
            untimed: expected_extra(input, p.manifest.as_ref(), bench),
        }));
    }

    // Readings that stop before the load's end judge only a part of it (series/coverage.rs).
    if let (Some(s), Some(m)) = (series, p.manifest.as_ref()) {
        if let Some(load) = crate::series::coverage::LoadWindow::of(m) {
            let ends = crate::series::coverage::coverage(s, load);
            checks::readings_end::qualify(&mut results, &ends, m.outcome_problem.as_deref());
        }
    }

    if outcome.is_broken() {
        let ready_line = logs.first().and_then(|l| l.facts.ready_lineno);
        qualify_broken(&mut results, &outcome, ready_line);
    }

    let mut report = Report::build(crate::report::ReportInputs {
        engine: report_engine,
        title: opts.title.clone(),
        manifest: p.manifest.as_ref(),
        logs: &logs,
        checks: results,
        phases,
        requested,
        usable_blocks,
        pair: pair.as_ref(),
        series,
        bench,
        gpu,
        input,
        utc_offset_min: opts.utc_offset_min,
    });
    report.replicas = replicas;
    if outcome.is_broken() {
        let state = p.manifest.as_ref().and_then(|m| m.outcome_state.clone());
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
    // A fleet folder's top level has no recording: its chart places show the replicas.
    if let Some((requests, kv)) = fleet_charts {
        report.charts.requests.get_or_insert(requests);
        report.charts.kv.get_or_insert(kv);
    }
    Ok(Analysis {
        report,
        notes,
        errors,
        implausible,
    })
}

/// A broken run's passes cover only what was recorded before it broke: each says so.
/// The start-up checks (T5, T6, T12) and the teardown's T2 judge what they read whole.
fn qualify_broken(
    results: &mut [CheckResult],
    outcome: &checks::run_outcome::RunOutcome,
    ready_line: Option<usize>,
) {
    for r in results.iter_mut().filter(|r| r.status == Status::Pass) {
        match r.tripwire {
            12 if outcome.server_died.is_some() => {
                r.message = match ready_line {
                    Some(n) => format!(
                        "The server started cleanly (ready at line {n}); it died later, during \
                         the run (T7)"
                    ),
                    None => {
                        "The server started cleanly; it died later, during the run (T7)".to_string()
                    }
                };
            }
            2 | 5 | 6 | 12 => {}
            _ => {
                r.message
                    .push_str(" (the run broke: this covers only what was recorded)");
                r.set("partial_run", true);
            }
        }
    }
}

/// Every value the plausibility gate refused, input by input.
fn implausible_values(p: &Parsed) -> Vec<Implausible> {
    let mut all = Vec::new();
    for s in [&p.before, &p.after].into_iter().flatten().flatten() {
        all.extend(s.implausible.iter().cloned());
    }
    if let Some(Ok(s)) = &p.series {
        all.extend(s.implausible.iter().cloned());
    }
    if let Some(Ok(b)) = &p.bench {
        all.extend(b.implausible.iter().cloned());
        all.extend(
            b.requests
                .iter()
                .flat_map(|q| q.implausible.iter().cloned()),
        );
    }
    if let Some(Ok(g)) = &p.gpu {
        all.extend(g.implausible.iter().cloned());
    }
    if let Some(Ok(s)) = &p.scrape {
        all.extend(s.implausible.iter().cloned());
    }
    all
}

/// One note per file: its first refused value and how many more (a damaged series can
/// hold thousands).
fn implausible_notes(all: &[Implausible]) -> Vec<String> {
    let mut notes: Vec<(String, usize, String)> = Vec::new();
    for i in all {
        match notes.iter_mut().find(|(f, _, _)| *f == i.file) {
            Some(n) => n.1 += 1,
            None => notes.push((i.file.clone(), 1, i.to_string())),
        }
    }
    notes
        .into_iter()
        .map(|(_, n, first)| match n {
            1 => format!("implausible value left out: {first}"),
            n => format!(
                "implausible value left out: {first} (and {} more in that file)",
                n - 1
            ),
        })
        .collect()
}

fn ok_or_note<'a, T>(
    r: &'a Option<Result<T, InputError>>,
    errors: &mut Vec<InputError>,
) -> Option<&'a T> {
    match r {
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            errors.push(e.clone());
            None
        }
        None => None,
    }
}

/// A check that could not run because an input it needs is missing.
pub fn missing_for(tripwire: u8, why: &str) -> CheckResult {
    let mut r = CheckResult::new(tripwire, Status::Unknown, format!("can't tell: {why}"));
    r.set("missing_input", why);
    r
}

/// A check that could not run because its input is unusable.
pub fn unknown_for(tripwire: u8, e: &InputError) -> CheckResult {
    let mut r = CheckResult::new(tripwire, Status::Unknown, format!("unusable input: {e}"));
    r.set("input_error", e.to_string());
    r
}

/// The engine a set of snapshots names, by the union of their metric names.
pub fn snapshots_engine(snaps: &[&Snapshot]) -> Option<Engine> {
    let mut names: Vec<&str> = snaps.iter().flat_map(|s| s.metrics.names()).collect();
    names.sort_unstable();
    names.dedup();
    Engine::from_metric_names(names)
}

/// The requested concurrency (checks.md §1.6).
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

/// Requests the load tool left out of its result: from `load.log` (formats.md §6.4),
/// plus those its result counts apart (GuideLLM's and AIPerf's warm-up).
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
