//! `inferlint compare RUN RUN [RUN…]`: each run folder analyzed as `analyze` would (nothing
//! is written into the folders), then the analyzer's [`Comparison`] drawn as a terminal
//! table, JSON, CI formats or one offline page; with `--baseline`, the exit status says
//! whether the second run is worse than the first.

mod page;
mod table;

use std::path::Path;

use analyzer::analysis::{self, Analysis, AnalyzeError, Options, RunInput};
use analyzer::compare::{self, Comparison, Run, Tolerance};
use analyzer::json;

use crate::args::{CompareArgs, Format};
use crate::ci_format::{self, Suite};
use crate::{disk, named_engine, Exit};

/// One run folder, read and analyzed.
struct Analyzed {
    label: String,
    input: RunInput,
    analysis: Analysis,
}

fn analyze_folder(dir: &Path, label: String, opts: &Options) -> Result<Analyzed, Exit> {
    let shown = dir.display().to_string();
    if !dir.is_dir() {
        return Err(Exit::usage(format!("{shown}: not a folder")));
    }
    let input = disk::load_run_folder(dir)
        .map_err(|e| Exit::usage(format!("{shown}: cannot list the folder: {e}")))?;
    let analysis = match analysis::analyze(&input, opts) {
        Ok(a) => a,
        Err(AnalyzeError::NothingUsable(errors)) => {
            for e in &errors {
                eprintln!("inferlint: {e}");
            }
            return Err(Exit::usage(format!("{shown}: no usable run file")));
        }
        Err(AnalyzeError::NoRunFiles) => {
            return Err(Exit::usage(format!(
                "{shown}: no run files (no boot log, snapshot, series, gate.json, probe.json or teardown.json)"
            )))
        }
        Err(e) => return Err(Exit::usage(format!("{shown}: {e}"))),
    };
    for e in &analysis.errors {
        eprintln!("inferlint: {e}");
    }
    Ok(Analyzed {
        label,
        input,
        analysis,
    })
}

/// Refuses an output path that is an input of one of the runs compared (or a run's
/// `results.json`): a comparison never overwrites what it read.
fn refuse_input_as_output(
    out: &Path,
    runs: &[Analyzed],
    dirs: &[std::path::PathBuf],
) -> Result<(), Exit> {
    for (run, dir) in runs.iter().zip(dirs) {
        let mut taken = crate::commands::input_paths(&run.input);
        taken.push(dir.join(analyzer::docs::RESULTS));
        if let Some(p) = taken.iter().find(|p| crate::output::same_file(out, p)) {
            return Err(Exit::usage(format!(
                "{}: is {}, an input of this comparison; refusing to overwrite it",
                out.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

pub fn compare(args: CompareArgs) -> Result<i32, Exit> {
    let named = named_engine(&args.common)?;
    let format = ci_format::resolve(&args.format, args.common.json)?;
    if args.baseline && args.runs.len() != 2 {
        return Err(Exit::usage(
            "--baseline takes exactly two run folders: OLD then NEW",
        ));
    }
    let tolerance = Tolerance {
        fraction: Tolerance::parse_percent(&args.tolerance).map_err(Exit::usage)?,
        strict: args.common.strict,
    };
    let paths: Vec<String> = args.runs.iter().map(|p| p.display().to_string()).collect();
    let labels = compare::labels(&paths.iter().map(String::as_str).collect::<Vec<_>>());
    let opts = Options {
        engine: named,
        utc_offset_min: crate::local_utc_offset_min(),
        ..Options::default()
    };
    let runs: Vec<Analyzed> = args
        .runs
        .iter()
        .zip(labels)
        .map(|(dir, label)| analyze_folder(dir, label, &opts))
        .collect::<Result<_, _>>()?;
    for out in args.html.iter().chain(&args.format.output) {
        refuse_input_as_output(out, &runs, &args.runs)?;
    }
    let view: Vec<Run<'_>> = runs
        .iter()
        .map(|r| Run {
            label: &r.label,
            report: &r.analysis.report,
        })
        .collect();
    let comparison = if args.baseline {
        compare::compare_with_baseline(view[0], view[1], tolerance)
    } else {
        compare::compare(&view)
    };

    if let Some(path) = &args.html {
        let html = page::page(
            &comparison,
            &runs_for_page(&runs, &opts),
            args.baseline,
            tolerance,
        );
        ci_format::write_file(path, &html)?;
        eprintln!("inferlint: wrote {}", path.display());
    }
    let doc = json::to_pretty(&comparison, 1) + "\n";
    let suites = || suites(&runs, &comparison, args.common.strict);
    let mut text_too = true;
    match (format, &args.format.output) {
        (Format::Text, _) => {}
        (Format::Json, Some(p)) => ci_format::write_file(p, &doc)?,
        (Format::Json, None) => {
            print!("{doc}");
            text_too = false;
        }
        (Format::Junit, Some(p)) => ci_format::write_file(p, &ci_format::junit(&suites()))?,
        (Format::Junit, None) => {
            print!("{}", ci_format::junit(&suites()));
            text_too = false;
        }
        (Format::Github, Some(p)) => ci_format::write_file(p, &ci_format::github(&suites()))?,
        (Format::Github, None) => print!("{}", ci_format::github(&suites())),
    }
    if text_too {
        for line in table::lines(&comparison, crate::render::colour()) {
            println!("{line}");
        }
    }
    let unusable = runs.iter().any(|r| !r.analysis.errors.is_empty());
    Ok(match &comparison.baseline {
        Some(b) if b.exit_status() == 1 => 1,
        _ if unusable => 2,
        _ => 0,
    })
}

/// Each run's suite; under `--baseline`, the baseline's alone, so the red cases are
/// exactly what makes the exit status 1.
fn suites(runs: &[Analyzed], c: &Comparison, strict: bool) -> Vec<Suite> {
    if let (Some(b), Some(new)) = (&c.baseline, runs.last()) {
        return vec![ci_format::baseline_suite(
            b,
            &new.analysis.report,
            &new.input,
        )];
    }
    runs.iter()
        .map(|r| {
            ci_format::run_suite(
                &r.label,
                &r.analysis.report,
                &r.analysis.errors,
                &r.input,
                strict,
            )
        })
        .collect()
}

/// The runs as the page carries them: their files and options, by label.
fn runs_for_page(runs: &[Analyzed], opts: &Options) -> Vec<(String, analyzer::pack::Pack)> {
    runs.iter()
        .map(|r| {
            (
                r.label.clone(),
                analyzer::pack::to_pack(&r.input, opts, None),
            )
        })
        .collect()
}
