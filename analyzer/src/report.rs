//! The Report (`results.json`, `analyze --json`; formats.md §8.2): every verdict of the run
//! and what the report page shows.

use crate::analysis::RunInput;
use crate::bench::BenchResult;
use crate::bootlog::BootLog;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::json::{obj, Json};
use crate::manifest::Manifest;
use crate::series::Series;
use crate::verdict::{CheckResult, Status};

pub const SCHEMA: &str = "inferlint.report/1";

/// One "what limited this run" finding (report.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub key: String,
    pub title: String,
    pub text: String,
    /// `limit` or `ok`.
    pub tone: String,
}

/// The report of one run.
#[derive(Debug, Clone)]
pub struct Report {
    pub engine: Option<Engine>,
    pub title: String,
    /// The first boot log's facts.
    pub facts: Option<Json>,
    pub checks: Vec<CheckResult>,
    pub limits: Vec<Limit>,
    /// The untested-version note, when the version is outside the tested series.
    pub version_note: Option<String>,
    /// Base names of the files read.
    pub made_from: Vec<String>,
}

/// What [`Report::build`] draws on.
pub struct ReportInputs<'a> {
    pub engine: Option<Engine>,
    pub title: Option<String>,
    pub manifest: Option<&'a Manifest>,
    pub logs: &'a [BootLog],
    pub checks: Vec<CheckResult>,
    pub requested: Option<i64>,
    pub usable_blocks: Option<u64>,
    pub pair: Option<&'a Pair<'a>>,
    pub series: Option<&'a Series>,
    pub bench: Option<&'a BenchResult>,
    pub input: &'a RunInput,
}

impl Report {
    pub fn build(i: ReportInputs<'_>) -> Report {
        let facts = i.logs.first().map(|l| &l.facts);
        let title = i
            .title
            .clone()
            .or_else(|| i.manifest.and_then(|m| m.title.clone()))
            .unwrap_or_else(|| match (facts, i.engine) {
                (None, _) => "Tripwire report".to_string(),
                (Some(f), e) => {
                    let name = f.engine.or(e).unwrap_or(Engine::Vllm).display();
                    match f.version() {
                        Some(v) => format!("{name} {v} run"),
                        None => format!("{name} run"),
                    }
                }
            });
        let input = i.input;
        let mut made_from: Vec<String> = input
            .boot_logs
            .iter()
            .map(|f| f.name.clone())
            .chain(
                [&input.before, &input.after, &input.series]
                    .into_iter()
                    .flatten()
                    .map(|f| f.name.clone()),
            )
            .chain(input.bench.iter().map(|b| b.file.name.clone()))
            .chain(
                [&input.manifest, &input.gate, &input.probe, &input.teardown]
                    .into_iter()
                    .flatten()
                    .map(|f| f.name.clone()),
            )
            .collect();
        for n in &mut made_from {
            *n = crate::text::base_name(n).to_string();
        }
        Report {
            engine: i.engine,
            title,
            facts: facts.map(|f| f.to_json()),
            checks: i.checks,
            limits: Vec::new(),
            version_note: facts.and_then(|f| f.untested_version_note()),
            made_from,
        }
    }

    /// How many results have each status, in the report's order.
    pub fn counts(&self) -> Vec<(Status, usize)> {
        [
            Status::Fail,
            Status::Warn,
            Status::Unknown,
            Status::Pass,
            Status::NotApplicable,
        ]
        .into_iter()
        .map(|s| (s, self.checks.iter().filter(|c| c.status == s).count()))
        .collect()
    }

    pub fn to_json(&self) -> Json {
        obj([
            ("schema", Json::from(SCHEMA)),
            ("engine", Json::from(self.engine.map(Engine::key))),
            ("title", Json::from(self.title.as_str())),
            ("facts", self.facts.clone().unwrap_or(Json::Null)),
            (
                "checks",
                Json::Arr(self.checks.iter().map(CheckResult::to_json).collect()),
            ),
            (
                "limits",
                Json::Arr(
                    self.limits
                        .iter()
                        .map(|l| {
                            obj([
                                ("key", Json::from(l.key.as_str())),
                                ("title", Json::from(l.title.as_str())),
                                ("text", Json::from(l.text.as_str())),
                                ("tone", Json::from(l.tone.as_str())),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("version_note", Json::from(self.version_note.clone())),
            ("made_from", Json::from(self.made_from.clone())),
        ])
    }
}
