//! The Report (`results.json`, `analyze --json`; formats.md §8.2): every verdict of the run
//! and what the report page shows.

use crate::analysis::RunInput;
use crate::bench::BenchResult;
use crate::bootlog::BootLog;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::insights::charts::{self, ChartInputs, Charts};
use crate::insights::limits::{self, LimitInputs};
use crate::insights::summary::Summary;
use crate::insights::{account, cache, server};
use crate::json::{obj, Json};
use crate::manifest::Manifest;
use crate::num::thousands;
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

/// A labelled fact ("Measured time": "1 min 34 s ...").
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub label: String,
    pub value: String,
}

impl Fact {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Fact {
        Fact {
            label: label.into(),
            value: value.into(),
        }
    }
}

/// A headline tile (report.md §4.2).
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    pub key: String,
    pub label: String,
    pub value: String,
    pub sub: String,
    /// The badge: the tripwire's status when it is not a pass.
    pub status: Option<Status>,
}

impl Tile {
    pub fn new(key: &str, label: &str, value: String, sub: String, status: Option<Status>) -> Tile {
        Tile {
            key: key.into(),
            label: label.into(),
            value,
            sub,
            status,
        }
    }
}

/// The recording did not complete (the manifest's outcome).
#[derive(Debug, Clone, PartialEq)]
pub struct Banner {
    pub state: String,
    pub stage: Option<String>,
    pub problem: Option<String>,
}

/// The report of one run.
#[derive(Debug, Clone)]
pub struct Report {
    pub engine: Option<Engine>,
    pub title: String,
    /// The meta line's parts (engine and version, model, pool, concurrency asked for).
    pub meta: Vec<String>,
    /// The untested-version note, when the version is outside the tested series.
    pub version_note: Option<String>,
    pub banner: Option<Banner>,
    /// The first boot log's facts record, and the same as the report lists it.
    pub facts: Option<Json>,
    pub server: Vec<Fact>,
    pub checks: Vec<CheckResult>,
    pub limits: Vec<Limit>,
    pub account: Option<String>,
    pub tiles: Vec<Tile>,
    pub test: Vec<Fact>,
    pub setup: Vec<Fact>,
    pub status_note: Option<String>,
    pub glossary: Vec<(String, String)>,
    pub charts: Charts,
    pub summary: Summary,
    pub requested: Option<i64>,
    /// Requests admission control rejected, from the boot log.
    pub rejected: Option<usize>,
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
    /// Minutes east of UTC for clock times (the front end knows the reader's zone).
    pub utc_offset_min: i32,
}

impl Report {
    pub fn build(i: ReportInputs<'_>) -> Report {
        let facts = i.logs.first().map(|l| &l.facts);
        let engine = i.engine.unwrap_or(Engine::Vllm);
        let title = i
            .title
            .clone()
            .or_else(|| i.manifest.and_then(|m| m.title.clone()))
            .unwrap_or_else(|| match facts {
                None => "Tripwire report".to_string(),
                Some(f) => {
                    let name = f.engine.unwrap_or(engine).display();
                    match f.version() {
                        Some(v) => format!("{name} {v} run"),
                        None => format!("{name} run"),
                    }
                }
            });
        let summary = Summary::build(engine, i.pair, i.series);
        let rejected = i
            .logs
            .first()
            .map(|l| l.classification.rejections)
            .filter(|&k| k > 0);
        let cache = cache::compute(engine, facts, &summary, i.bench, i.requested);
        // Seconds since the first sample: one pass over a possibly long recording.
        let times = i.series.map(Series::times).unwrap_or_default();
        let limits = limits::build(&LimitInputs {
            engine,
            checks: &i.checks,
            summary: &summary,
            cache: cache.as_ref(),
            facts,
            bench: i.bench,
            series: i.series,
            times: &times,
            requested: i.requested,
            rejected,
        });
        let charts = charts::build(&ChartInputs {
            engine,
            series: i.series,
            cache: cache.as_ref(),
            logs: i.logs,
            requested: i.requested,
            usable_blocks: i.usable_blocks,
            times: &times,
        });
        let input = i.input;
        let made_from: Vec<String> = input
            .boot_logs
            .iter()
            .chain(
                [&input.before, &input.after, &input.series]
                    .into_iter()
                    .flatten(),
            )
            .chain(input.bench.iter().map(|b| &b.file))
            .chain(
                [&input.manifest, &input.gate, &input.probe, &input.teardown]
                    .into_iter()
                    .flatten(),
            )
            .map(|f| crate::text::base_name(&f.name).to_string())
            .collect();
        let mut meta = Vec::new();
        if let Some(f) = facts {
            meta.push(match f.version() {
                Some(v) => format!("{} {v}", f.engine.unwrap_or(engine).display()),
                None => f.engine.unwrap_or(engine).display().to_string(),
            });
            if let Some(m) = f.model() {
                meta.push(crate::text::base_name(m).to_string());
            }
            if let Some(p) = f.kv_pool_tokens {
                meta.push(format!("{}-token KV pool", thousands(p as f64)));
            }
        } else if let Some(e) = i.engine {
            meta.push(e.display().to_string());
        }
        if let Some(r) = i.requested {
            meta.push(format!("concurrency asked for: {r}"));
        }
        let banner = i.manifest.and_then(|m| {
            let state = m.outcome_state.clone()?;
            (state != "completed").then(|| Banner {
                state,
                stage: m.outcome_stage.clone(),
                problem: m.outcome_problem.clone(),
            })
        });
        let account = account::account(engine, &summary, i.requested, rejected);
        let tiles = account::tiles(&account::TileInputs {
            engine,
            summary: &summary,
            checks: &i.checks,
            requested: i.requested,
            rejected,
            bench: i.bench,
            has_series: i.series.is_some(),
            attention_block: facts.and_then(|f| f.attention_block_size),
        });
        let test = account::test_facts(
            &summary,
            facts.and_then(|f| f.boot_seconds),
            i.utc_offset_min,
        );
        let setup = setup_facts(&i, &summary, &made_from, engine);
        let status_note = account::status_note(&i.checks, &summary);
        Report {
            engine: i.engine,
            title,
            meta,
            version_note: facts.and_then(|f| f.untested_version_note()),
            banner,
            facts: facts.map(|f| f.to_json()),
            server: facts
                .map(|f| server::facts_table(f, f.engine.unwrap_or(engine)))
                .unwrap_or_default(),
            limits,
            account,
            tiles,
            test,
            setup,
            status_note,
            glossary: crate::catalog::glossary(engine)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            charts,
            summary,
            requested: i.requested,
            rejected,
            checks: i.checks,
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
        let facts_json = |v: &[Fact]| {
            Json::Arr(
                v.iter()
                    .map(|f| {
                        obj([
                            ("label", Json::from(f.label.as_str())),
                            ("value", Json::from(f.value.as_str())),
                        ])
                    })
                    .collect(),
            )
        };
        let engine = self.engine.unwrap_or(Engine::Vllm);
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
            ("meta", Json::from(self.meta.clone())),
            ("version_note", Json::from(self.version_note.clone())),
            (
                "banner",
                self.banner.as_ref().map_or(Json::Null, |b| {
                    obj([
                        ("state", Json::from(b.state.as_str())),
                        ("stage", Json::from(b.stage.clone())),
                        ("problem", Json::from(b.problem.clone())),
                    ])
                }),
            ),
            ("account", Json::from(self.account.clone())),
            (
                "tiles",
                Json::Arr(
                    self.tiles
                        .iter()
                        .map(|t| {
                            obj([
                                ("key", Json::from(t.key.as_str())),
                                ("label", Json::from(t.label.as_str())),
                                ("value", Json::from(t.value.as_str())),
                                ("sub", Json::from(t.sub.as_str())),
                                ("status", Json::from(t.status.map(Status::as_str))),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("test", facts_json(&self.test)),
            ("setup", facts_json(&self.setup)),
            ("summary", self.summary_json()),
            (
                "counts",
                Json::Obj(
                    self.counts()
                        .into_iter()
                        .map(|(st, n)| (st.as_str().to_string(), Json::from(n)))
                        .collect(),
                ),
            ),
            ("status_note", Json::from(self.status_note.clone())),
            ("charts", self.charts.to_json()),
            ("server", facts_json(&self.server)),
            (
                "glossary",
                Json::Arr(
                    self.glossary
                        .iter()
                        .map(|(k, v)| {
                            obj([
                                ("term", Json::from(k.as_str())),
                                ("text", Json::from(v.as_str())),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "guide",
                Json::Arr(
                    crate::catalog::all()
                        .iter()
                        .map(|t| {
                            obj([
                                ("id", Json::from(t.id())),
                                ("name", Json::from(t.slug)),
                                ("title", Json::from(t.title)),
                                ("catches", Json::from(t.catches)),
                                ("why", Json::from(t.why)),
                                ("reproduce", Json::from(t.reproduce)),
                                ("note", Json::from(t.engine_note(engine))),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("made_from", Json::from(self.made_from.clone())),
        ])
    }

    /// The headline figures as numbers, for machines.
    fn summary_json(&self) -> Json {
        let s = &self.summary;
        let f = |v: Option<f64>| v.map_or(Json::Null, Json::Float);
        obj([
            ("restarted", Json::Bool(s.restart.is_some())),
            ("span_s", f(s.span)),
            ("start_wall", f(s.start_wall)),
            ("end_wall", f(s.end_wall)),
            ("requested", Json::from(self.requested)),
            ("rejected", Json::from(self.rejected)),
            ("finished", f(s.done)),
            (
                "finished_by_reason",
                Json::Obj(
                    s.reasons
                        .iter()
                        .map(|(r, v)| (r.to_string(), Json::Float(*v)))
                        .collect(),
                ),
            ),
            ("output_tokens", f(s.output_tokens)),
            ("prompt_tokens", f(s.prompt_tokens)),
            ("evictions", f(s.evictions)),
            ("mean_latency_s", f(s.mean_latency_s)),
            ("mean_ttft_s", f(s.mean_ttft_s)),
            ("mean_queue_s", f(s.mean_queue_s)),
            ("peak_running", Json::from(s.peak_running)),
            ("interval_s", f(s.interval_s)),
            ("samples", Json::from(s.samples)),
            ("url", Json::from(s.url.clone())),
        ])
    }
}

/// "The setup" (report.md §4.4).
fn setup_facts(
    i: &ReportInputs<'_>,
    s: &Summary,
    made_from: &[String],
    engine: Engine,
) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(r) = i.requested {
        out.push(Fact::new(
            "Concurrency asked for",
            format!("{r} requests at once"),
        ));
    }
    if i.series.is_some() || i.pair.is_some() {
        let mut v =
            "the load tool. inferlint sends none during the load: it only reads the server's \
                     counters."
                .to_string();
        if i.input.probe.is_some() {
            v.push_str(
                " The recorder's probe sent its requests before the first reading, outside                  every count.",
            );
        }
        out.push(Fact::new("Requests sent by", v));
    }
    if let Some(series) = i.series {
        let every = series
            .interval_s
            .map(|x| format!("every {} s, ", crate::num::shortest(x)))
            .unwrap_or_default();
        out.push(Fact::new(
            "Recording",
            format!("the server read {every}{} readings", series.rows.len()),
        ));
    }
    if let Some(u) = &s.url {
        out.push(Fact::new("Server address", u.clone()));
    }
    if !made_from.is_empty() {
        out.push(Fact::new("Made from", made_from.join(", ")));
    }
    let (checked, missing) = account::unchecked(&i.checks, engine);
    let mut v = format!("{checked} of 15");
    if !missing.is_empty() {
        v.push_str(&format!(". Not here: {}", missing.join("; ")));
    }
    out.push(Fact::new("Tripwires checked", v));
    out
}

impl Report {
    /// The line the passes and not-applicables are folded under (report.md §5): "n passed",
    /// or "All n checks passed" when no other result is shown, plus "; k does/do not apply
    /// to <engine>"; `None` when there is nothing to fold.
    pub fn folded_line(&self) -> Option<String> {
        folded_line(&self.counts(), self.engine.unwrap_or(Engine::Vllm))
    }
}

fn folded_line(counts: &[(Status, usize)], engine: Engine) -> Option<String> {
    let count = |s: Status| counts.iter().find(|(c, _)| *c == s).map_or(0, |(_, n)| *n);
    let (passed, na) = (count(Status::Pass), count(Status::NotApplicable));
    if passed + na == 0 {
        return None;
    }
    let shown = count(Status::Fail) + count(Status::Warn) + count(Status::Unknown);
    let mut line = if shown == 0 {
        format!("All {passed} checks passed")
    } else {
        format!("{passed} passed")
    };
    if na > 0 {
        let verb = if na == 1 { "does" } else { "do" };
        line.push_str(&format!("; {na} {verb} not apply to {}", engine.display()));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(fail: usize, pass: usize, na: usize) -> Vec<(Status, usize)> {
        vec![
            (Status::Fail, fail),
            (Status::Warn, 0),
            (Status::Unknown, 0),
            (Status::Pass, pass),
            (Status::NotApplicable, na),
        ]
    }

    #[test]
    fn the_folded_line_counts_passes_and_not_applicables() {
        let line = |c: Vec<(Status, usize)>| folded_line(&c, Engine::Sglang);
        assert_eq!(
            line(counts(0, 9, 0)).as_deref(),
            Some("All 9 checks passed")
        );
        assert_eq!(line(counts(2, 7, 0)).as_deref(), Some("7 passed"));
        assert_eq!(
            line(counts(1, 7, 1)).as_deref(),
            Some("7 passed; 1 does not apply to SGLang")
        );
        assert_eq!(
            line(counts(0, 6, 2)).as_deref(),
            Some("All 6 checks passed; 2 do not apply to SGLang")
        );
        assert_eq!(line(counts(3, 0, 0)), None);
    }
}
