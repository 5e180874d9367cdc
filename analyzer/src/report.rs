//! The Report (`results.json`, `analyze --json`; docs/run-folder.md#results-json): every verdict of the run
//! and what the report page shows.

use serde::{Serialize, Serializer};

use crate::bench::BenchResult;
use crate::bootlog::{BootFacts, BootLog};
use crate::counters::Pair;
use crate::engine::Engine;
use crate::inputs::RunInput;
use crate::insights::charts::{self, ChartInputs, Charts};
use crate::insights::limits::{self, LimitInputs};
use crate::insights::replay::{self, Replay, ReplayInputs};
use crate::insights::summary::Summary;
use crate::insights::{account, cache, server};
use crate::json::ordered_map;
use crate::manifest::Manifest;
use crate::num::thousands;
use crate::phases::PhaseVerdict;
use crate::rules::registry::{self, GuideEntry};
use crate::rules::verdict::{CheckResult, Status};
use crate::series::Series;

// The Report's parts are made where they are computed; named from here too.
pub use crate::fleet::ReplicaReport;
pub use crate::insights::{account::Tile, fact::Fact, limits::Limit};

pub const SCHEMA: &str = "inferlint.report/1";

/// The recording did not complete (the manifest's outcome).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Banner {
    pub state: String,
    pub stage: Option<String>,
    pub problem: Option<String>,
    /// What broke, a sentence each (`rules::outcome`); left out when nothing did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub what_broke: Vec<String>,
}

impl Banner {
    /// The banner of a recording that did not complete, from its manifest.
    fn of(m: &Manifest) -> Option<Banner> {
        let state = m.outcome_state.clone()?;
        (state != "completed").then(|| Banner {
            state,
            stage: m.outcome_stage.clone(),
            problem: m.outcome_problem.clone(),
            what_broke: Vec::new(),
        })
    }
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
    /// The first boot log's facts (written as its facts record), and the same as the
    /// report lists them.
    pub facts: Option<BootFacts>,
    pub server: Vec<Fact>,
    pub checks: Vec<CheckResult>,
    /// A sweep's phases, each with its own checks (`phases`); empty for one benchmark.
    pub phases: Vec<PhaseVerdict>,
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
    /// The load tool's own figures, when its result file was read (for comparing runs;
    /// not written to `results.json`, whose layout is fixed).
    pub bench: Option<BenchResult>,
    /// Entries of the run folder not read, and why (`RunInput::skipped`).
    pub skipped: Vec<crate::inputs::Skipped>,
    /// Where the load started on the charts' time axis, found from every reading before
    /// the charts were reduced (for comparing runs; not written to `results.json`).
    pub load_start: (Option<f64>, crate::insights::load_start::Alignment),
    /// A fleet's replicas, each with its own verdicts (empty for a single server).
    pub replicas: Vec<ReplicaReport>,
    /// The page's replay of the KV cache over time (`insights::replay`).
    pub replay: Option<Replay>,
}

/// What [`Report::build`] draws on.
pub struct ReportInputs<'a> {
    pub engine: Option<Engine>,
    pub title: Option<String>,
    pub manifest: Option<&'a Manifest>,
    pub logs: &'a [BootLog],
    pub checks: Vec<CheckResult>,
    pub phases: Vec<PhaseVerdict>,
    pub requested: Option<i64>,
    pub usable_blocks: Option<u64>,
    pub pair: Option<&'a Pair<'a>>,
    pub series: Option<&'a Series>,
    pub bench: Option<&'a BenchResult>,
    /// The recorder's GPU samples (T16's chart).
    pub gpu: Option<&'a crate::gpu_samples::GpuSamples>,
    pub input: &'a RunInput,
    /// Minutes east of UTC for clock times (the front end knows the reader's zone).
    pub utc_offset_min: i32,
}

/// The report's title: the one given, the recorder's, else the engine and its version.
fn title(inputs: &ReportInputs<'_>, engine: Engine) -> String {
    let facts = inputs.logs.first().map(|l| &l.facts);
    inputs
        .title
        .clone()
        .or_else(|| inputs.manifest.and_then(|m| m.title.clone()))
        .unwrap_or_else(|| match facts {
            None => "Tripwire report".to_string(),
            Some(f) => {
                let name = f.engine.unwrap_or(engine).display();
                match f.version() {
                    Some(v) => format!("{name} {v} run"),
                    None => format!("{name} run"),
                }
            }
        })
}

/// The base names of the files read, in the order the report lists them.
fn made_from(run_input: &RunInput) -> Vec<String> {
    run_input
        .boot_logs
        .iter()
        .chain(
            [&run_input.before, &run_input.after, &run_input.series]
                .into_iter()
                .flatten(),
        )
        .chain(run_input.bench.iter().map(|b| &b.file))
        .chain(
            [
                &run_input.manifest,
                &run_input.gate,
                &run_input.probe,
                &run_input.teardown,
                &run_input.gpu,
                &run_input.aiperf_server,
            ]
            .into_iter()
            .flatten(),
        )
        .map(|f| crate::text::base_name(&f.name).to_string())
        .collect()
}

/// The page's replay of the recording, when there is one (`insights::replay`).
fn replay_of(inputs: &ReportInputs<'_>, engine: Engine, times: &[f64]) -> Option<Replay> {
    replay::build(&ReplayInputs {
        engine,
        series: inputs.series?,
        times,
        facts: inputs.logs.first().map(|l| &l.facts),
        usable_blocks: inputs.usable_blocks,
        bench: inputs.bench,
        load_started_wall: inputs.manifest.and_then(|m| m.load_started_wall),
    })
}

/// The meta line's parts: engine and version, model, pool, concurrency asked for.
fn meta(inputs: &ReportInputs<'_>, engine: Engine) -> Vec<String> {
    let mut meta = Vec::new();
    if let Some(f) = inputs.logs.first().map(|l| &l.facts) {
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
    } else if let Some(e) = inputs.engine {
        meta.push(e.display().to_string());
    }
    if let Some(r) = inputs.requested {
        meta.push(format!("concurrency asked for: {r}"));
    }
    meta
}

impl Report {
    pub fn build(inputs: ReportInputs<'_>) -> Report {
        let facts = inputs.logs.first().map(|l| &l.facts);
        let engine = inputs.engine.unwrap_or(Engine::Vllm);
        let title = title(&inputs, engine);
        let summary = Summary::build(engine, inputs.pair, inputs.series);
        let rejected = inputs
            .logs
            .first()
            .map(|l| l.classification.rejections)
            .filter(|&k| k > 0);
        let cache = cache::compute(engine, facts, &summary, inputs.bench, inputs.requested);
        // Seconds since the first sample: one pass over a possibly long recording.
        let times = inputs.series.map(Series::times).unwrap_or_default();
        let limits = limits::build(&LimitInputs {
            engine,
            checks: &inputs.checks,
            summary: &summary,
            cache: cache.as_ref(),
            facts,
            bench: inputs.bench,
            series: inputs.series,
            times: &times,
            requested: inputs.requested,
            rejected,
        });
        let mut charts = charts::build(&ChartInputs {
            engine,
            series: inputs.series,
            cache: cache.as_ref(),
            logs: inputs.logs,
            requested: inputs.requested,
            usable_blocks: inputs.usable_blocks,
            times: &times,
            gpu: inputs.gpu,
        });
        let replay = replay_of(&inputs, engine, &times);
        let load_start = crate::insights::load_start::find_load_start(
            &charts,
            inputs.engine,
            inputs.bench.and_then(|b| b.duration),
        );
        // The Report keeps what a screen shows, never every sample of a long recording.
        charts.reduce(engine);
        let made_from = made_from(inputs.input);
        let meta = meta(&inputs, engine);
        let banner = inputs.manifest.and_then(Banner::of);
        let account = account::account(engine, &summary, inputs.requested, rejected);
        let tiles = account::tiles(&account::TileInputs {
            engine,
            summary: &summary,
            checks: &inputs.checks,
            requested: inputs.requested,
            rejected,
            bench: inputs.bench,
            has_series: inputs.series.is_some(),
            attention_block: facts.and_then(|f| f.attention_block_size),
        });
        let test = account::test_facts(
            &summary,
            facts.and_then(|f| f.boot_seconds),
            inputs.utc_offset_min,
        );
        let setup = setup_facts(&inputs, &summary, &made_from, engine);
        let status_note = account::status_note(&inputs.checks, &summary);
        Report {
            engine: inputs.engine,
            title,
            meta,
            version_note: facts.and_then(|f| f.untested_version_note()),
            banner,
            facts: facts.cloned(),
            server: facts
                .map(|f| server::facts_table(f, f.engine.unwrap_or(engine)))
                .unwrap_or_default(),
            limits,
            account,
            tiles,
            test,
            setup,
            status_note,
            glossary: crate::glossary::glossary(engine)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            charts,
            summary,
            requested: inputs.requested,
            rejected,
            checks: inputs.checks,
            phases: inputs.phases,
            made_from,
            bench: inputs.bench.cloned(),
            skipped: inputs.input.skipped.clone(),
            load_start,
            replicas: Vec::new(),
            replay,
        }
    }

    /// The run's verdicts, every sweep phase's and every replica's: what the exit status
    /// folds.
    pub fn all_checks(&self) -> Vec<CheckResult> {
        let mut all = self.checks.clone();
        for p in &self.phases {
            all.extend(p.checks.iter().cloned());
        }
        for r in &self.replicas {
            all.extend(r.checks.iter().cloned());
        }
        all
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
        .map(|s| {
            let replicas = self.replicas.iter().flat_map(|r| &r.checks);
            let n = self.checks.iter().chain(replicas).filter(|c| c.status == s);
            (s, n.count())
        })
        .collect()
    }
}

/// Written as docs/run-folder.md#results-json lays it out ([`ReportDocument`]).
impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ReportDocument::of(self).serialize(s)
    }
}

/// The Report's JSON layout (`results.json`), keys in the documented order. The keys
/// computed for machines (`schema`, `summary`, `counts`, `guide`) are filled in here.
#[derive(Serialize)]
struct ReportDocument<'a> {
    schema: &'static str,
    engine: Option<&'static str>,
    title: &'a str,
    facts: Option<&'a BootFacts>,
    checks: &'a [CheckResult],
    /// A sweep's phases; left out for a result of one benchmark.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    phases: &'a [PhaseVerdict],
    limits: &'a [Limit],
    meta: &'a [String],
    version_note: Option<&'a str>,
    banner: Option<&'a Banner>,
    account: Option<&'a str>,
    tiles: &'a [Tile],
    test: &'a [Fact],
    setup: &'a [Fact],
    summary: SummaryFigures<'a>,
    /// Status → how many results have it.
    #[serde(serialize_with = "ordered_map")]
    counts: Vec<(Status, usize)>,
    status_note: Option<&'a str>,
    charts: &'a Charts,
    server: &'a [Fact],
    /// Each entry as `{term, text}`.
    #[serde(serialize_with = "glossary_entries")]
    glossary: &'a [(String, String)],
    guide: Vec<GuideEntry>,
    made_from: &'a [String],
    /// Entries of the run folder not read: `{name, reason}`.
    skipped: &'a [crate::inputs::Skipped],
    /// A fleet's replicas; absent for a single server, whose layout is unchanged.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    replicas: &'a [ReplicaReport],
    /// The replay's frames; written last, and only when there is a recording, so every
    /// key before it stays as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a Replay>,
}

impl<'a> ReportDocument<'a> {
    fn of(report: &'a Report) -> Self {
        let engine = report.engine.unwrap_or(Engine::Vllm);
        ReportDocument {
            schema: SCHEMA,
            engine: report.engine.map(Engine::key),
            title: &report.title,
            facts: report.facts.as_ref(),
            checks: &report.checks,
            phases: &report.phases,
            limits: &report.limits,
            meta: &report.meta,
            version_note: report.version_note.as_deref(),
            banner: report.banner.as_ref(),
            account: report.account.as_deref(),
            tiles: &report.tiles,
            test: &report.test,
            setup: &report.setup,
            summary: SummaryFigures::of(report),
            counts: report.counts(),
            status_note: report.status_note.as_deref(),
            charts: &report.charts,
            server: &report.server,
            glossary: &report.glossary,
            guide: registry::single_server()
                .map(|t| t.guide_entry(engine))
                .collect(),
            made_from: &report.made_from,
            skipped: &report.skipped,
            replicas: &report.replicas,
            replay: report.replay.as_ref(),
        }
    }
}

/// The headline figures as numbers, for machines (the Report's `summary`).
#[derive(Serialize)]
struct SummaryFigures<'a> {
    restarted: bool,
    span_s: Option<f64>,
    start_wall: Option<f64>,
    end_wall: Option<f64>,
    requested: Option<i64>,
    rejected: Option<usize>,
    finished: Option<f64>,
    /// Reason → finished requests.
    #[serde(serialize_with = "ordered_map")]
    finished_by_reason: &'a [(&'static str, f64)],
    output_tokens: Option<f64>,
    prompt_tokens: Option<f64>,
    evictions: Option<f64>,
    mean_latency_s: Option<f64>,
    mean_ttft_s: Option<f64>,
    mean_queue_s: Option<f64>,
    peak_running: Option<i64>,
    interval_s: Option<f64>,
    samples: usize,
    url: Option<&'a str>,
}

impl<'a> SummaryFigures<'a> {
    fn of(report: &'a Report) -> Self {
        let s = &report.summary;
        SummaryFigures {
            restarted: s.restart.is_some(),
            span_s: s.span,
            start_wall: s.start_wall,
            end_wall: s.end_wall,
            requested: report.requested,
            rejected: report.rejected,
            finished: s.done,
            finished_by_reason: &s.reasons,
            output_tokens: s.output_tokens,
            prompt_tokens: s.prompt_tokens,
            evictions: s.evictions,
            mean_latency_s: s.mean_latency_s,
            mean_ttft_s: s.mean_ttft_s,
            mean_queue_s: s.mean_queue_s,
            peak_running: s.peak_running,
            interval_s: s.interval_s,
            samples: s.samples,
            url: s.url.as_deref(),
        }
    }
}

/// A glossary entry as the Report writes it.
#[derive(Serialize)]
struct GlossaryEntry<'a> {
    term: &'a str,
    text: &'a str,
}

fn glossary_entries<S: Serializer>(entries: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        entries
            .iter()
            .map(|(term, text)| GlossaryEntry { term, text }),
    )
}

/// "The setup": the server address, the files read and how many tripwires were checked.
fn setup_facts(
    inputs: &ReportInputs<'_>,
    summary: &Summary,
    made_from: &[String],
    engine: Engine,
) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(r) = inputs.requested {
        out.push(Fact::new(
            "Concurrency asked for",
            format!("{r} requests at once"),
        ));
    }
    if inputs.series.is_some() || inputs.pair.is_some() {
        let mut v =
            "the load tool. inferlint sends none during the load: it only reads the server's \
                     counters."
                .to_string();
        if inputs.input.probe.is_some() {
            v.push_str(
                " The recorder's probe sent its requests before the first reading, outside \
                 every count.",
            );
        }
        out.push(Fact::new("Requests sent by", v));
    }
    if let Some(series) = inputs.series {
        let every = series
            .interval_s
            .map(|x| format!("every {} s, ", crate::num::shortest(x)))
            .unwrap_or_default();
        out.push(Fact::new(
            "Recording",
            format!("the server read {every}{} readings", series.rows.len()),
        ));
    }
    if let Some(u) = &summary.url {
        out.push(Fact::new("Server address", u.clone()));
    }
    if !made_from.is_empty() {
        out.push(Fact::new("Made from", made_from.join(", ")));
    }
    let (checked, missing) = account::unchecked(&inputs.checks, engine);
    let mut v = format!("{checked} of {}", registry::single_server().count());
    if !missing.is_empty() {
        v.push_str(&format!(". Not here: {}", missing.join("; ")));
    }
    out.push(Fact::new("Tripwires checked", v));
    out
}

impl Report {
    /// The line the passes and not-applicables are folded under: "n passed",
    /// or "All n checks passed" when no other result is shown, plus "; k does/do not apply
    /// to <engine>"; `None` when there is nothing to fold.
    /// A sweep whose worst phase is not a pass is never "All n checks passed".
    pub fn folded_line(&self) -> Option<String> {
        let mut counts = self.counts();
        if let Some(w) = crate::phases::worst_phase(&self.phases).filter(|s| s.shown_in_full()) {
            if let Some(c) = counts.iter_mut().find(|(s, _)| *s == w) {
                c.1 += 1;
            }
        }
        folded_line(&counts, self.engine.unwrap_or(Engine::Vllm))
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
