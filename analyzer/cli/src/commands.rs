//! One function per command. Each returns the exit status, or an [`Exit`] for errors
//! that end it before any verdict.

use std::path::{Path, PathBuf};

use super::args::{
    AnalyzeArgs, BootFactsArgs, CheckLogArgs, Common, ExplainArgs, PreemptionArgs, RateArgs,
    SeriesArgs,
};
use super::disk::{self, read_input};
use super::output::{same_file, write_atomically, OutputError};
use super::render;
use super::{named_engine, Exit};
use analyzer::analysis::{
    self, mismatch, snapshots_engine, AnalyzeError, BenchInput, NamedEngine, Options, RunInput,
};
use analyzer::bootlog::{self, BootFacts};
use analyzer::counters::Pair;
use analyzer::engine::{engine_from_log, Engine};
use analyzer::input::InputError;
use analyzer::json::{self, Json};
use analyzer::rules;
use analyzer::rules::registry::{self, Explanation};
use analyzer::rules::verdict::{exit_status, CheckResult};
use analyzer::rules::Tripwire;
use analyzer::series::Series;
use analyzer::sizes::Role;
use analyzer::snapshot::Snapshot;
use analyzer::term::escape;
use analyzer::text::decode_lossy;

/// One line on stderr, `inferlint: ` first, control characters made visible.
pub(crate) fn note(line: &str) {
    eprintln!("inferlint: {}", escape(line));
}

/// One line on stdout, control characters made visible.
fn say(line: &str) {
    println!("{}", escape(line));
}

/// Prints results as a JSON array or as terminal lines, then the count line.
fn print_results(results: &[CheckResult], common: &Common, extra: &[String]) {
    if common.json {
        println!("{}", json::to_pretty(results, 1));
        return;
    }
    let colour = render::colour();
    for r in results {
        println!("{}", render::result_line(r, colour));
    }
    for line in extra {
        say(line);
    }
    println!("{}", render::count_line(results));
}

fn input_error(e: &InputError) -> Exit {
    Exit::usage(e.to_string())
}

/// Reads a snapshot given on the command line.
fn snapshot_arg(path: &Path) -> Result<Snapshot, InputError> {
    let f = read_input(path, Role::Snapshot);
    let bytes = f
        .bytes
        .map_err(|reason| InputError::new(&f.name, None, reason))?;
    Snapshot::read(&f.name, &bytes)
}

/// Reads a series given on the command line, streamed from disk into its rows.
fn series_arg(path: &Path) -> Result<Series, InputError> {
    let name = path.display().to_string();
    let s = disk::read_series(path, &name, false)?;
    if let Some(n) = s.skip_note(&name) {
        note(&n);
    }
    Ok(s)
}

/// A boot log's text (lossy); an unreadable file is an input error.
fn log_arg(path: &Path) -> Result<(String, String), InputError> {
    let f = read_input(path, Role::Log);
    match f.bytes {
        Ok(b) => Ok((f.name, decode_lossy(&b).into_owned())),
        Err(reason) => Err(InputError::new(&f.name, None, reason)),
    }
}

/// Refuses a boot log of another engine than the one named.
fn check_log_engine(named: Option<NamedEngine>, name: &str, text: &str) -> Result<(), Exit> {
    if let (Some(n), Some(found)) = (named, engine_from_log(text)) {
        if found != n.engine {
            return Err(Exit::usage(mismatch(n, name, found)));
        }
    }
    Ok(())
}

fn check_snapshots_engine(named: Option<NamedEngine>, snaps: &[&Snapshot]) -> Result<Engine, Exit> {
    let found = snapshots_engine(snaps);
    if let (Some(n), Some(f)) = (named, found) {
        if f != n.engine {
            return Err(Exit::usage(mismatch(n, "the snapshots' metrics", f)));
        }
    }
    if found.is_none() && named.is_none() {
        note("no engine's metric names in the snapshots: reading them as vLLM's");
    }
    Ok(found.unwrap_or(Engine::Vllm))
}

fn check_series_engine(named: Option<NamedEngine>, name: &str, s: &Series) -> Result<(), Exit> {
    if let (Some(n), Some(f)) = (named, s.engine_named) {
        if f != n.engine {
            return Err(Exit::usage(mismatch(n, name, f)));
        }
    }
    Ok(())
}

fn optional_facts(
    path: Option<&PathBuf>,
    named: Option<NamedEngine>,
) -> Result<Option<BootFacts>, Exit> {
    let Some(p) = path else { return Ok(None) };
    let (name, text) = log_arg(p).map_err(|e| input_error(&e))?;
    check_log_engine(named, &name, &text)?;
    Ok(Some(bootlog::read_facts(&text, named.map(|n| n.engine))))
}

pub fn preemption(args: PreemptionArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let before = snapshot_arg(&args.before).map_err(|e| input_error(&e))?;
    let after = snapshot_arg(&args.after).map_err(|e| input_error(&e))?;
    let engine = check_snapshots_engine(named, &[&before, &after])?;
    let mut unusable = false;
    let series = match &args.series {
        None => None,
        Some(p) => match series_arg(p) {
            Ok(s) => {
                check_series_engine(named, &p.display().to_string(), &s)?;
                Some(s)
            }
            Err(e) => {
                note(&e.to_string());
                unusable = true;
                None
            }
        },
    };
    let facts = optional_facts(args.boot_log.as_ref(), named)?;
    let pair = Pair::new(&before, &after);
    let r = rules::t01_silent_preemption::check(engine, &pair, series.as_ref(), facts.as_ref());
    let results = vec![r];
    print_results(&results, &args.common, &[]);
    Ok(exit_status(&results, args.common.strict, unusable))
}

pub fn rate(args: RateArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let before = snapshot_arg(&args.before).map_err(|e| input_error(&e))?;
    let after = snapshot_arg(&args.after).map_err(|e| input_error(&e))?;
    let engine = check_snapshots_engine(named, &[&before, &after])?;
    let counter = args
        .counter
        .clone()
        .unwrap_or_else(|| engine.metrics().generation_tokens.to_string());
    let pair = Pair::new(&before, &after);
    let r = rules::t10_integer_second_timer::check(&pair, &counter);
    let extra: Vec<String> = rules::t10_integer_second_timer::integer_second_comparison(&r)
        .map(|c| format!("      {c}"))
        .into_iter()
        .collect();
    let results = vec![r];
    print_results(&results, &args.common, &extra);
    Ok(exit_status(&results, args.common.strict, false))
}

pub fn series(args: SeriesArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let s = series_arg(&args.series).map_err(|e| input_error(&e))?;
    check_series_engine(named, &args.series.display().to_string(), &s)?;
    let facts = optional_facts(args.boot_log.as_ref(), named)?;
    let mut results = Vec::new();
    let mut usable_blocks = None;
    let engine = s.engine();
    if engine.metrics().cache_info.is_none() {
        results.push(rules::t14_null_block::not_applicable(engine));
    } else if let Some(p) = &args.snapshot {
        match snapshot_arg(p) {
            Ok(snap) => {
                let steps = analyzer::blocks::GaugeSteps::read(&s, &snap);
                usable_blocks = steps.usable_blocks();
                results.push(rules::t14_null_block::judge(&steps));
            }
            Err(e) => {
                note(&e.to_string());
                results.push(rules::absent::unusable(Tripwire::NullBlock, &e));
            }
        }
    }
    results.push(rules::t09_falling_ceiling::check(&s, usable_blocks));
    if let Some(req) = args.requested {
        if req <= 0 {
            return Err(Exit::usage("--requested must be a positive number"));
        }
        results.push(rules::t08_concurrency_not_reached::check(
            &s,
            req,
            facts.as_ref(),
        ));
    }
    print_results(&results, &args.common, &[]);
    Ok(exit_status(&results, args.common.strict, false))
}

pub fn check_log(args: CheckLogArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let mut texts = Vec::new();
    let mut unreadable = Vec::new();
    for p in &args.logs {
        match log_arg(p) {
            Ok((name, text)) => {
                check_log_engine(named, &name, &text)?;
                texts.push((name, text));
            }
            Err(e) if args.logs.len() == 1 => return Err(input_error(&e)),
            Err(e) => {
                note(&e.to_string());
                unreadable.push(e);
            }
        }
    }
    let logs = bootlog::read_logs(&texts, named.map(|n| n.engine));
    if let Some(n) = logs.first().and_then(|l| l.facts.untested_version_note()) {
        note(&n);
    }
    let mut results = rules::runner::check_logs(&logs, true);
    for e in &unreadable {
        for mut r in rules::runner::unreadable_log(e) {
            r.source = Some(e.file.clone());
            results.push(r);
        }
    }
    print_results(&results, &args.common, &[]);
    Ok(exit_status(
        &results,
        args.common.strict,
        !unreadable.is_empty(),
    ))
}

pub fn boot_facts(args: BootFactsArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let (name, text) = log_arg(&args.log).map_err(|e| input_error(&e))?;
    check_log_engine(named, &name, &text)?;
    let facts = bootlog::read_facts(&text, named.map(|n| n.engine));
    if let Some(n) = facts.untested_version_note() {
        note(&n);
    }
    if args.common.json {
        println!("{}", json::to_pretty(&facts, 1));
    } else {
        for (k, v) in record_entries(&facts) {
            let shown = match v {
                Json::Null => continue,
                Json::Arr(items) if items.is_empty() => continue,
                Json::Obj(o) if o.is_empty() => continue,
                Json::Str(s) => s.clone(),
                other => other.to_compact(),
            };
            say(&format!("{k:<28} {shown}"));
        }
    }
    if !facts.unparsed.is_empty() {
        note(&format!(
            "{name}: {} recognised line(s) had an unknown format (see `unparsed`)",
            facts.unparsed.len()
        ));
        if args.common.strict {
            return Ok(2);
        }
    }
    Ok(0)
}

/// The facts record's entries in order, to list them: read back from the record's own
/// JSON (which always parses).
fn record_entries(facts: &BootFacts) -> Vec<(String, Json)> {
    match json::parse(&json::to_compact(facts)) {
        Ok(Json::Obj(pairs)) => pairs,
        _ => Vec::new(),
    }
}

pub fn explain(args: ExplainArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?.map(|n| n.engine);
    // The engines whose notes are shown: the one named, else all.
    let engines: Vec<Engine> = named.map_or(Engine::ALL.to_vec(), |e| vec![e]);
    let Some(q) = &args.tripwire else {
        if args.common.json {
            let all: Vec<Explanation> = registry::single_server()
                .map(|t| t.explanation(&engines))
                .collect();
            println!("{}", json::to_pretty(&all, 1));
        } else {
            println!(
                "The {} tripwires (inferlint explain T<n> for one):",
                analyzer::num::spelled(registry::single_server().count())
            );
            for t in registry::single_server() {
                println!("  {:>3}  {:<24} {}", t.id(), t.slug, t.title);
            }
        }
        return Ok(0);
    };
    let Some(t) = Tripwire::find(q).map(Tripwire::entry) else {
        return Err(Exit::usage(format!(
            "{q}: no such tripwire (T1 to T15, or a name such as falling-ceiling)"
        )));
    };
    if args.common.json {
        println!("{}", json::to_pretty(&t.explanation(&engines), 1));
        return Ok(0);
    }
    println!("{} {} ({})\n", t.id(), t.title, t.slug);
    println!("What goes wrong\n  {}\n", t.catches);
    println!("Why it matters\n  {}\n", t.why);
    println!("What inferlint reads\n  {}\n", t.evidence);
    println!("Check it\n  {}\n", t.reproduce);
    println!("What to do\n  {}", t.fix);
    for e in engines {
        let note = t.engine_note(e);
        if !note.is_empty() {
            println!("\nOn {}\n  {note}", e.display());
        }
    }
    Ok(0)
}

/// Builds the inputs of `analyze`: explicit files win, the rest found by name. The
/// series streams from disk into its rows (`disk::StreamedRun`): a week's recording is
/// never held as text and rows at once.
fn run_input(args: &AnalyzeArgs) -> Result<disk::StreamedRun, Exit> {
    // The page carries the series: encode it while it is read, when there is a page.
    let load = if super::html::viewer_template().is_some() {
        disk::load_run_folder_carried
    } else {
        disk::load_run_folder_streamed
    };
    let mut run = match &args.run {
        Some(dir) => load(dir)
            .map_err(|e| Exit::usage(format!("{}: cannot list the folder: {e}", dir.display())))?,
        None => disk::StreamedRun::default(),
    };
    if let Some(p) = &args.series {
        run.use_series_file(p);
    }
    let input = &mut run.input;
    if !args.boot_log.is_empty() {
        input.boot_logs = args
            .boot_log
            .iter()
            .map(|p| read_input(p, Role::Log))
            .collect();
    }
    let given = |p: &Option<PathBuf>, role| p.as_deref().map(|p| read_input(p, role));
    input.before = given(&args.before, Role::Snapshot).or(input.before.take());
    input.after = given(&args.after, Role::Snapshot).or(input.after.take());
    if let Some(p) = &args.bench_result {
        input.bench = Some(BenchInput {
            file: read_input(p, Role::LoadResult),
            evidence_path: p.display().to_string(),
        });
    }
    Ok(run)
}

/// Every input path `analyze` reads (as named), to keep `--html` off them.
pub(crate) fn input_paths(input: &RunInput) -> Vec<PathBuf> {
    let mut files: Vec<&analyzer::InputFile> = input.boot_logs.iter().collect();
    files.extend(
        [
            &input.before,
            &input.after,
            &input.series,
            &input.load_log,
            &input.manifest,
            &input.gate,
            &input.probe,
            &input.teardown,
        ]
        .into_iter()
        .flatten(),
    );
    files.extend(input.bench.as_ref().map(|b| &b.file));
    files.iter().map(|f| PathBuf::from(&f.name)).collect()
}

/// Refuses a `--html` path that is one of the inputs or the folder's `results.json`
/// (the page would overwrite what it was made from).
fn check_html_target(html: &Path, input: &RunInput, results: Option<&Path>) -> Result<(), Exit> {
    let mut taken = input_paths(input);
    taken.extend(results.map(Path::to_path_buf));
    match taken.iter().find(|p| same_file(html, p)) {
        Some(p) => Err(Exit::usage(format!(
            "--html {}: is {}, an input of this analysis (or its results.json); refusing to \
             overwrite it",
            html.display(),
            p.display()
        ))),
        None => Ok(()),
    }
}

pub fn analyze(args: AnalyzeArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    match &args.run {
        Some(dir) if !dir.is_dir() => {
            return Err(Exit::usage(format!("{}: not a folder", dir.display())))
        }
        None if args.html.is_none() => {
            return Err(Exit::usage(
                "give a run folder (or --html OUT when naming the files one by one)",
            ))
        }
        _ => {}
    }
    if args.requested.is_some_and(|r| r <= 0) {
        return Err(Exit::usage("--requested must be a positive number"));
    }
    let mut run = run_input(&args)?;
    // The rows go with the analysis: only the report is left when the page is made.
    let series = run.series.take();
    let input = &std::mem::take(&mut run.input);
    let results_path = args.run.as_ref().map(|d| d.join(analyzer::docs::RESULTS));
    if let Some(h) = &args.html {
        check_html_target(h, input, results_path.as_deref())?;
    }
    let opts = Options {
        engine: named,
        requested: args.requested,
        title: args.title.clone(),
        utc_offset_min: super::local_utc_offset_min(),
    };
    let analysis = match analysis::analyze_with_series(input, &opts, series) {
        Ok(an) => an,
        Err(AnalyzeError::NothingUsable(errors)) => {
            for e in &errors {
                note(&e.to_string());
            }
            return Err(Exit::usage("no usable run file"));
        }
        Err(AnalyzeError::NoRunFiles) => {
            let place = args
                .run
                .as_ref()
                .map_or("the files named".to_string(), |d| d.display().to_string());
            return Err(Exit::usage(format!(
                "{place}: no run files (no boot log, snapshot, series, gate.json, probe.json or teardown.json)"
            )));
        }
        Err(e) => return Err(Exit::usage(e.to_string())),
    };
    for s in &analysis.report.skipped {
        note(&format!("skipped {}: {}", s.name, s.reason));
    }
    for e in &analysis.errors {
        note(&e.to_string());
    }
    for n in &analysis.notes {
        note(n);
    }
    // Written once: a long recording's chart data makes this text tens of megabytes.
    let doc = json::to_pretty(&analysis.report, 1) + "\n";
    let html_path = args
        .html
        .clone()
        .or_else(|| args.run.as_ref().map(|d| d.join(analyzer::docs::REPORT)));
    // results.json is written (and synced, which takes as long as making the page) while
    // the page is made; both are done before anything is printed.
    let text = doc.as_bytes();
    let outcomes = std::thread::scope(|scope| {
        let results = results_path.as_deref().map(|path| {
            let write = move || write_atomically(path, text);
            let started = std::thread::Builder::new().spawn_scoped(scope, write);
            (path, started)
        });
        let page = html_path.as_deref().map(|path| {
            let page = super::html::page(&analysis.report, input, &opts, || run.series_carriage());
            (path, write_atomically(path, page.as_bytes()))
        });
        let results = results.map(|(path, started)| {
            let outcome = match started {
                Ok(thread) => thread.join().unwrap_or_else(|_| {
                    Err(OutputError::Io(
                        path.display().to_string(),
                        std::io::Error::other("the writing thread failed"),
                    ))
                }),
                // No thread to be had: written here instead.
                Err(_) => write_atomically(path, text),
            };
            (path, outcome)
        });
        [results, page]
    });
    let mut written = Vec::new();
    let mut unwritten = false;
    for (path, outcome) in outcomes.into_iter().flatten() {
        match outcome {
            Ok(()) => written.push(path.display().to_string()),
            Err(e) => {
                note(&e.to_string());
                unwritten = true;
            }
        }
    }
    if super::ci_format::for_analyze(&args, input, &analysis, &doc)? {
        return Ok(analysis.exit_status(args.common.strict));
    }
    if args.common.json {
        print!("{doc}");
    } else {
        let colour = render::colour();
        for line in render::broke(&analysis.report, colour) {
            println!("{line}");
        }
        for r in &analysis.report.checks {
            println!("{}", render::result_line(r, colour));
        }
        crate::render_phases::table(&analysis.report.phases, colour)
            .iter()
            .for_each(|l| println!("{l}"));
        for line in render::replicas(&analysis.report, colour) {
            println!("{line}");
        }
        for line in render::limits(&analysis.report.limits) {
            say(&line);
        }
        let mut count = render::count_line(&analysis.report.all_checks());
        if !written.is_empty() {
            count.push_str(&format!("; wrote {}", written.join(" and ")));
        }
        say(&count);
    }
    // An output that could not be written is an error of the command, whatever the
    // verdicts: CI must not read a stale results.json as this run's.
    if unwritten {
        return Ok(2);
    }
    Ok(analysis.exit_status(args.common.strict))
}
