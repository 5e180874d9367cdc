//! CI-native output of `analyze` and `compare` (`--format junit|github`): the results as
//! test suites and cases that CI test reporters and annotations show.
//!
//! The mapping, chosen so the report's red cases are exactly what made the exit status 1:
//! a failed tripwire is a failure; a warning passes, with the warning in the case's output,
//! unless `--strict` makes warnings fail the run, when it is a failure too (linters such
//! as ESLint and ruff report warnings as failures only when they fail the build); "can't
//! tell" and "does not apply" are skipped with the reason, as GitLab, Jenkins and the
//! GitHub test-report actions list skipped cases with their message; an unusable input
//! file is an error. Under `compare --baseline` the one suite is the baseline's: each
//! tripwire of the new run and each figure, failing where it regressed (the failures of
//! the old run, or those both runs share, are not what its exit status judges).

mod github;
mod junit;

use std::path::Path;

use analyzer::analysis::{Analysis, RunInput};
use analyzer::compare::Baseline;
use analyzer::input::InputError;
use analyzer::report::Report;
use analyzer::rules::verdict::{CheckResult, Status};
use analyzer::Engine;

use crate::args::{AnalyzeArgs, Format, FormatArgs};

pub use github::github;
pub use junit::junit;

/// A group of cases: one run, or the baseline verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub properties: Vec<(String, String)>,
    pub cases: Vec<Case>,
}

/// One tripwire result, one unusable file, or one baseline judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub classname: String,
    pub name: String,
    pub outcome: Outcome,
    /// The file the result was read from, for annotations.
    pub file: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Passed; `warning` holds a warning that does not fail the run.
    Passed { warning: Option<String> },
    /// Failed: `kind` names why (`tripwire-failed`, `warning`, `regression`).
    Failed {
        kind: &'static str,
        message: String,
        detail: String,
    },
    /// Not decided; `cant_tell` is false for "does not apply".
    Skipped { message: String, cant_tell: bool },
    /// An input could not be used.
    Errored { message: String },
}

impl Suite {
    /// How many cases have each outcome: (failures, errors, skipped).
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for c in &self.cases {
            match c.outcome {
                Outcome::Failed { .. } => n.0 += 1,
                Outcome::Errored { .. } => n.1 += 1,
                Outcome::Skipped { .. } => n.2 += 1,
                Outcome::Passed { .. } => {}
            }
        }
        n
    }
}

/// The evidence as `key: value` lines, for a case's body.
fn evidence_text(c: &CheckResult) -> String {
    c.evidence()
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.to_compact()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The input a tripwire's verdict is read from, as named on the command line.
fn verdict_file(input: &RunInput, c: &CheckResult) -> Option<String> {
    let name = |f: &Option<analyzer::InputFile>| f.as_ref().map(|f| f.name.clone());
    let boot = || input.boot_logs.first().map(|f| f.name.clone());
    match c.tripwire.number() {
        1 | 10 => name(&input.after).or_else(|| name(&input.before)),
        8 | 9 | 14 => name(&input.series),
        15 => input.bench.as_ref().map(|b| b.file.name.clone()),
        2 => name(&input.teardown).or_else(|| name(&input.gate)),
        7 => name(&input.probe).or_else(boot),
        4 | 5 | 6 | 11 | 12 => c
            .source
            .as_ref()
            .and_then(|s| {
                input
                    .boot_logs
                    .iter()
                    .find(|f| f.name == *s || f.name.ends_with(&format!("/{s}")))
                    .map(|f| f.name.clone())
            })
            .or_else(boot),
        _ => None,
    }
}

/// "Does not apply to <engine>: why", without saying it twice when the message does.
fn not_applicable(engine: Engine, message: &str) -> String {
    let head = format!("does not apply to {}", engine.display());
    match message.strip_prefix(&head) {
        Some(rest) => format!("Does not apply to {}{rest}", engine.display()),
        None => format!("Does not apply to {}: {message}", engine.display()),
    }
}

/// One run's results as a suite named `label`.
pub fn run_suite(
    label: &str,
    report: &Report,
    errors: &[InputError],
    input: &RunInput,
    strict: bool,
) -> Suite {
    let classname = format!("inferlint.{label}");
    let engine = report.engine.unwrap_or(Engine::Vllm);
    // A broken run is the first case, an error: never a green suite.
    let broke: Vec<&String> = report.banner.iter().flat_map(|b| &b.what_broke).collect();
    let mut cases: Vec<Case> = (!broke.is_empty())
        .then(|| Case {
            classname: classname.clone(),
            name: "run the recording itself".to_string(),
            outcome: Outcome::Errored {
                message: format!(
                    "The run broke: {}",
                    broke
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            },
            file: Some(analyzer::docs::MANIFEST.to_string()),
        })
        .into_iter()
        .collect();
    cases.extend(report.checks.iter().map(|c| {
        let detail = evidence_text(c);
        let outcome = match c.status {
            Status::Fail => Outcome::Failed {
                kind: "tripwire-failed",
                message: c.message.clone(),
                detail,
            },
            Status::Warn if strict => Outcome::Failed {
                kind: "warning",
                message: c.message.clone(),
                detail,
            },
            Status::Warn => Outcome::Passed {
                warning: Some(if detail.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}\n{detail}", c.message)
                }),
            },
            Status::Unknown => Outcome::Skipped {
                message: format!("Can't tell: {}", c.message),
                cant_tell: true,
            },
            Status::NotApplicable => Outcome::Skipped {
                message: not_applicable(engine, &c.message),
                cant_tell: false,
            },
            Status::Pass => Outcome::Passed { warning: None },
        };
        Case {
            classname: classname.clone(),
            name: format!("{} {}", c.id(), c.name()),
            outcome,
            file: verdict_file(input, c),
        }
    }));
    for e in errors {
        cases.push(Case {
            classname: classname.clone(),
            name: format!("input {}", e.file),
            outcome: Outcome::Errored {
                message: e.to_string(),
            },
            file: Some(e.file.clone()),
        });
    }
    let mut properties = vec![("title".to_string(), report.title.clone())];
    if let Some(e) = report.engine {
        properties.push(("engine".to_string(), e.key().to_string()));
    }
    if let Some(r) = report.requested {
        properties.push(("requested".to_string(), r.to_string()));
    }
    Suite {
        name: label.to_string(),
        properties,
        cases,
    }
}

/// The baseline verdict as a suite: every tripwire of the new run and the two figures,
/// each failing when it regressed.
pub fn baseline_suite(b: &Baseline, new: &Report, new_input: &RunInput) -> Suite {
    let classname = "inferlint.baseline".to_string();
    let regression = |key: &str| b.regressions.iter().find(|r| r.key == key);
    let failed = |r: &analyzer::compare::Regression| Outcome::Failed {
        kind: "regression",
        message: r.reason.clone(),
        detail: format!("{}: {}\n{}: {}", b.old, r.old, b.new, r.new),
    };
    let mut cases: Vec<Case> = new
        .checks
        .iter()
        .map(|c| Case {
            classname: classname.clone(),
            name: format!("{} {} not worse", c.id(), c.name()),
            outcome: regression(&c.id()).map_or(Outcome::Passed { warning: None }, failed),
            file: verdict_file(new_input, c),
        })
        .collect();
    for (key, what) in [
        ("output_tokens_per_s", "output tokens/s"),
        ("peak_running", "most running at once"),
    ] {
        let not_compared = b.not_compared.iter().find(|n| n.starts_with(what)).cloned();
        let outcome = match (regression(key), not_compared) {
            (Some(r), _) => failed(r),
            (None, Some(why)) => Outcome::Skipped {
                message: format!("Can't tell: {why}"),
                cant_tell: true,
            },
            (None, None) => Outcome::Passed { warning: None },
        };
        cases.push(Case {
            classname: classname.clone(),
            name: format!(
                "{what} within {}%",
                analyzer::num::shortest(b.tolerance_pct)
            ),
            outcome,
            file: None,
        });
    }
    Suite {
        name: format!("baseline: {} against {}", b.new, b.old),
        properties: vec![
            ("old".to_string(), b.old.clone()),
            ("new".to_string(), b.new.clone()),
            (
                "tolerance_pct".to_string(),
                analyzer::num::shortest(b.tolerance_pct),
            ),
        ],
        cases,
    }
}

/// Writes `text` to `path` whole or not at all, never through a link (the one atomic
/// writer), naming the file on failure.
pub fn write_file(path: &Path, text: &str) -> Result<(), crate::Exit> {
    crate::output::write_atomically(path, text.as_bytes())
        .map_err(|e| crate::Exit::usage(e.to_string()))
}

/// The format asked for: `--format`, else `json` for `--json`, else text. `--json` beside
/// another `--format` is refused unless that one goes to a file (`--output`): both would
/// print on stdout.
pub fn resolve(f: &FormatArgs, json: bool) -> Result<Format, crate::Exit> {
    if f.format == Some(Format::Text) && f.output.is_some() {
        return Err(crate::Exit::usage(
            "--output takes the json, junit or github output; the text goes to the terminal",
        ));
    }
    match (f.format, json) {
        (None, true) => Ok(Format::Json),
        (None, false) => Ok(Format::Text),
        (Some(Format::Text), true) if f.output.is_none() => Ok(Format::Json),
        (Some(other), true) if other != Format::Json && f.output.is_none() => {
            Err(crate::Exit::usage(format!(
                "--json and --format {} both print on stdout: give --output FILE for one",
                format_name(other)
            )))
        }
        (Some(other), _) => Ok(other),
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Text => "text",
        Format::Json => "json",
        Format::Junit => "junit",
        Format::Github => "github",
    }
}

/// `analyze`'s `--format`: writes the JUnit or GitHub output (to `--output`, else to
/// stdout) and the JSON to `--output`. Returns whether stdout now holds that output alone,
/// so the terminal text is not printed after it.
pub fn for_analyze(
    args: &AnalyzeArgs,
    input: &RunInput,
    analysis: &Analysis,
    json_doc: &str,
) -> Result<bool, crate::Exit> {
    let format = resolve(&args.format, args.common.json)?;
    let label = args.run.as_ref().map_or_else(
        || "files".to_string(),
        |d| d.display().to_string().trim_end_matches('/').to_string(),
    );
    let suites = || {
        [run_suite(
            &label,
            &analysis.report,
            &analysis.errors,
            input,
            args.common.strict,
        )]
    };
    let out = args.format.output.as_deref();
    match (format, out) {
        // Printed by the command itself (`--json`, or `--format json` made into it).
        (Format::Text | Format::Json, None) => Ok(false),
        (Format::Json, Some(p)) => write_file(p, json_doc).map(|()| false),
        (Format::Junit, Some(p)) => write_file(p, &junit(&suites())).map(|()| false),
        (Format::Junit, None) => {
            print!("{}", junit(&suites()));
            Ok(true)
        }
        (Format::Github, Some(p)) => write_file(p, &github(&suites())).map(|()| false),
        (Format::Github, None) => {
            print!("{}", github(&suites()));
            Ok(false)
        }
        (Format::Text, Some(_)) => Ok(false),
    }
}

/// Checks `--format` against `--json` before any work, and makes `--format json` without
/// `--output` into `--json`, which the command prints as it always has.
pub fn prepare(common: &mut crate::args::Common, f: &FormatArgs) -> Result<(), crate::Exit> {
    if resolve(f, common.json)? == Format::Json && f.output.is_none() {
        common.json = true;
    }
    Ok(())
}
