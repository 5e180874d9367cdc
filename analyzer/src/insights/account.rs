//! "What happened": the plain account, the headline tiles, the test and setup facts; and
//! the results' status note.

use crate::rules::Tripwire;
use crate::rules::{
    t01_silent_preemption as t01, t10_integer_second_timer as t10, t14_null_block as t14,
};
use serde::Serialize;

use crate::engine::Engine;
use crate::num::{fixed, shortest, thousands};
use crate::rules::verdict::{CheckResult, Status};

use super::fact::Fact;
use super::format::{clock_span, duration, wait_ms};
use super::summary::Summary;

/// A headline tile.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

fn find(checks: &[CheckResult], n: Tripwire) -> Option<&CheckResult> {
    checks
        .iter()
        .find(|c| c.tripwire == n && c.source.is_none())
}

/// The plain account: a short paragraph of what the run did.
pub fn account(
    engine: Engine,
    s: &Summary,
    requested: Option<i64>,
    rejected: Option<usize>,
) -> Option<String> {
    if s.restart.is_some() {
        return Some(
            "The server restarted between the before and after readings, so the counts \
             between them mean nothing; only the recording is summarised."
                .into(),
        );
    }
    let mut parts = Vec::new();
    if let Some(d) = s.span {
        parts.push(match requested {
            Some(r) => {
                let rej = match rejected {
                    Some(k) if k > 0 => format!(" (admission control rejected {k} of them)"),
                    _ => String::new(),
                };
                format!(
                    "The load tool kept {r} requests open for {}{rej}.",
                    duration(d)
                )
            }
            None => format!("The test ran for {}.", duration(d)),
        });
    }
    if let (Some(done), Some(out)) = (s.done, s.output_tokens) {
        let errors = match s.errors() {
            Some(0.0) => " with no errors".to_string(),
            Some(e) => format!(" ({} of them with an error)", shortest(e)),
            None => String::new(),
        };
        parts.push(format!(
            "The server finished {} requests{errors} and generated {} output tokens.",
            shortest(done),
            thousands(out)
        ));
    }
    if let (Some(peak), Some(r)) = (s.peak_running, requested) {
        if peak < r {
            let mut t =
                format!("It never worked on more than {peak} at once; the rest waited in a queue");
            if let Some(q) = s.mean_queue_s.filter(|&q| q.round_ties_even() > 0.0) {
                t.push_str(&format!(
                    ", {} s on average before a request started",
                    fixed(q, 0)
                ));
            }
            t.push('.');
            parts.push(t);
        }
    }
    if let Some(e) = s.evictions.filter(|&e| e > 0.0) {
        let verb = if engine == Engine::Sglang {
            "retracted"
        } else {
            "preempted"
        };
        let times = if e == 1.0 {
            "once".to_string()
        } else {
            format!("{} times", shortest(e))
        };
        let mut t = format!(
            "It {verb} a running request {times} to free KV cache; each went back to the \
             queue and recomputed its prompt and its output so far."
        );
        t.push_str(match engine {
            Engine::Sglang => " SGLang logs a warning for each.",
            _ => " The server log does not mention it.",
        });
        parts.push(t);
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// What the headline tiles draw on.
pub struct TileInputs<'a> {
    pub engine: Engine,
    pub summary: &'a Summary,
    pub checks: &'a [CheckResult],
    pub requested: Option<i64>,
    pub rejected: Option<usize>,
    pub bench: Option<&'a crate::bench::BenchResult>,
    pub has_series: bool,
    pub attention_block: Option<i64>,
}

/// The headline tiles, in order, each when its source exists.
pub fn tiles(inputs: &TileInputs<'_>) -> Vec<Tile> {
    let (engine, s, checks, requested, rejected, bench) = (
        inputs.engine,
        inputs.summary,
        inputs.checks,
        inputs.requested,
        inputs.rejected,
        inputs.bench,
    );
    let (has_series, attention_block) = (inputs.has_series, inputs.attention_block);
    let mut out = Vec::new();
    let badge = |c: Option<&CheckResult>| c.map(|c| c.status).filter(|&st| st != Status::Pass);
    if has_series {
        let t8 = find(checks, Tripwire::ConcurrencyNotReached);
        let value = match (s.peak_running, requested) {
            (Some(p), Some(r)) => format!("{p} of {r}"),
            (Some(p), None) => p.to_string(),
            (None, _) => "–".into(),
        };
        let sub = match requested {
            Some(r) => {
                let rej = match rejected {
                    Some(k) if k > 0 => format!(" ({k} rejected)"),
                    _ => String::new(),
                };
                format!("the load kept {r} requests open{rej}")
            }
            None => "the most the server ran at once".into(),
        };
        out.push(Tile::new(
            "ran_at_once",
            "Ran at once",
            value,
            sub,
            badge(t8),
        ));
    }
    let t1 = find(checks, Tripwire::SilentPreemption);
    if let Some(k) = t1.and_then(t01::preemptions) {
        let label = match engine {
            Engine::Sglang => "Retractions",
            _ => "Preemptions",
        };
        let sub = match engine {
            Engine::Vllm => "requests evicted and recomputed; the server log mentions none",
            _ => "requests evicted and recomputed; the engine logs each one",
        };
        out.push(Tile::new(
            "preemptions",
            label,
            shortest(k),
            sub.into(),
            badge(t1),
        ));
    }
    out.extend(rate_tile(checks, bench));
    if let Some((med, p99)) = bench.and_then(|b| Some((b.median_ttft_ms?, b.p99_ttft_ms?))) {
        out.push(Tile::new(
            "ttft",
            "Time to first token, median",
            wait_ms(med),
            format!(
                "p99 {}, as the load tool measured it, queueing included",
                wait_ms(p99)
            ),
            None,
        ));
    }
    out.extend(blocks_tile(checks, attention_block));
    out
}

/// The server's output tokens per second (T10), beside the load tool's own figure.
fn rate_tile(checks: &[CheckResult], bench: Option<&crate::bench::BenchResult>) -> Option<Tile> {
    let t10 = find(checks, Tripwire::IntegerSecondTimer);
    let rate = t10.and_then(t10::rate);
    let r = rate.filter(|r| r.rate_per_s.is_some_and(f64::is_finite))?;
    let (rate, span) = (r.rate_per_s.unwrap_or(0.0), r.span_s.unwrap_or(0.0));
    let sub = match bench.and_then(|b| Some((b.output_throughput?, b.duration?))) {
        Some((tp, dur)) => format!(
            "the server's count over {} s, idle time included; the load tool measured {} over {} s",
            fixed(span, 1),
            fixed(tp, 1),
            fixed(dur, 1)
        ),
        None => {
            let mut t = format!("over {} s", fixed(span, 1));
            if let Some(e) = r.integer_second_error.filter(|e| e.is_finite()) {
                t.push_str(&format!(
                    "; a whole-second timer reads {}{}%",
                    if e >= 0.0 { "+" } else { "" },
                    fixed(e * 100.0, 2)
                ));
            }
            t
        }
    };
    Some(Tile::new(
        "tokens_per_s",
        "Output tokens per second",
        fixed(rate, 1),
        sub,
        None,
    ))
}

/// The usable KV blocks the gauge's steps show (T14).
fn blocks_tile(checks: &[CheckResult], attention_block: Option<i64>) -> Option<Tile> {
    let t14 = find(checks, Tripwire::NullBlock);
    let steps = t14.and_then(|c| c.finding::<t14::NullBlock>());
    let inferred = steps.and_then(|e| e.inferred_usable_blocks.flatten());
    let n = inferred.filter(|&n| n != 0).map(|n| n as f64)?;
    let mut sub = match steps.and_then(|e| e.reported_num_gpu_blocks) {
        Some(b) => format!("{} reported, one held back", shortest(b as f64)),
        None => String::new(),
    };
    if let Some(b) = attention_block {
        sub.push_str(&format!("; {b} tokens per block"));
    }
    Some(Tile::new(
        "usable_blocks",
        "Usable KV blocks",
        shortest(n),
        sub,
        None,
    ))
}

/// "The test": what the load asked for and what the load tool measured.
pub fn test_facts(summary: &Summary, boot_seconds: Option<f64>, utc_offset_min: i32) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(d) = summary.span {
        let mut v = duration(d);
        if d >= 60.0 {
            v.push_str(&format!(" ({} s)", fixed(d, 1)));
        }
        v.push_str(", from the before to the after reading");
        out.push(Fact::new("Measured time", v));
    }
    if let (Some(a), Some(b)) = (summary.start_wall, summary.end_wall) {
        out.push(Fact::new("Clock time", clock_span(a, b, utc_offset_min)));
    }
    if let Some(b) = boot_seconds {
        out.push(Fact::new(
            "Server start-up",
            format!("{}, before the test (from the boot log)", duration(b)),
        ));
    }
    if let Some(done) = summary.done {
        let mut v = shortest(done);
        if !summary.reasons.is_empty() {
            let words = [
                ("length", "reached their token limit"),
                ("stop", "were ended by the model"),
                ("repetition", "stopped for repeating"),
                ("abort", "were cancelled"),
            ];
            let mut bits: Vec<String> = words
                .iter()
                .filter_map(|(r, w)| {
                    let n = summary.reasons.iter().find(|(k, _)| k == r)?.1;
                    (n > 0.0).then(|| format!("{} {w}", shortest(n)))
                })
                .collect();
            match summary.errors() {
                Some(e) if e > 0.0 => bits.push(format!("{} ended with an error", shortest(e))),
                _ => bits.push("no errors".into()),
            }
            v.push_str(&format!(": {}", bits.join(", ")));
        }
        out.push(Fact::new("Requests finished", v));
    }
    let per = |x: f64| match summary.done {
        Some(d) if d > 0.0 => format!(" ({} per request)", thousands(x / d)),
        _ => String::new(),
    };
    if let Some(o) = summary.output_tokens {
        out.push(Fact::new(
            "Output tokens generated",
            format!("{}{}", thousands(o), per(o)),
        ));
    }
    if let Some(p) = summary.prompt_tokens {
        out.push(Fact::new(
            "Prompt tokens read",
            format!("{}{}", thousands(p), per(p)),
        ));
    }
    if let Some(l) = summary.mean_latency_s {
        out.push(Fact::new(
            "Average time per request",
            format!("{} s", fixed(l, 1)),
        ));
    }
    if let Some(t) = summary.mean_ttft_s {
        let mut v = format!("{} s", fixed(t, 1));
        if let Some(q) = summary.mean_queue_s {
            v.push_str(&format!(", {} s of it waiting in the queue", fixed(q, 1)));
        }
        out.push(Fact::new("Average wait for the first token", v));
    }
    out
}

/// What each missing tripwire needs (docs/tripwires.md#left-out), grouped in T-order.
pub fn unchecked(checks: &[CheckResult], engine: Engine) -> (usize, Vec<String>) {
    let has = |n: u8| {
        checks
            .iter()
            .any(|c| c.tripwire.number() == n && c.status != Status::NotApplicable)
    };
    let numbers: Vec<u8> = crate::rules::registry::single_server()
        .map(|e| e.tripwire.number())
        .collect();
    let checked = numbers.iter().filter(|&&n| has(n)).count();
    let t14_na = checks
        .iter()
        .any(|c| c.tripwire == Tripwire::NullBlock && c.status == Status::NotApplicable)
        || engine.metrics().cache_info.is_none();
    // With a measured load, a missing T16 or T18 lacks the recorder's own captures.
    let load_measured = [1, 8, 9, 10, 15]
        .iter()
        .any(|&n| checks.iter().any(|c| c.tripwire.number() == n));
    let why = Missing {
        checks,
        engine,
        load_measured,
        t14_na,
    };
    let mut groups: Vec<((String, String), Vec<u8>)> = Vec::new();
    for n in numbers.iter().copied().filter(|&n| !has(n)) {
        let r = why.needs(n);
        match groups.iter_mut().find(|(k, _)| *k == r) {
            Some((_, members)) => members.push(n),
            None => groups.push((r, vec![n])),
        }
    }
    let lines = groups
        .into_iter()
        .map(|((plural, single), members)| {
            let names: Vec<String> = members.iter().map(|n| format!("T{n}")).collect();
            match names.len() {
                1 => format!("{} {single}", names[0]),
                k => format!(
                    "{} and {} {plural}",
                    names[..k - 1].join(", "),
                    names[k - 1]
                ),
            }
        })
        .collect();
    (checked, lines)
}

/// What a tripwire left out of the results needs, said for the run at hand.
struct Missing<'a> {
    checks: &'a [CheckResult],
    engine: Engine,
    /// A load was measured: a missing T16, T18 or T20 lacks the recorder's own captures.
    load_measured: bool,
    t14_na: bool,
}

impl Missing<'_> {
    /// (for several members, for one member)
    fn needs(&self, n: u8) -> (String, String) {
        let pair = |p: &str, s: &str| (p.to_string(), s.to_string());
        match n {
            17 if self.checks.iter().any(|c| {
                c.tripwire == Tripwire::PrefixCacheHits && c.status == Status::NotApplicable
            }) =>
            {
                pair(
                    "do not apply: no prefix-cache counter was exported",
                    "does not apply: no prefix-cache counter was exported",
                )
            }
            1 | 10 | 17 => pair(
                "need before and after readings",
                "needs before and after readings",
            ),
            2 | 3 => pair("are decided at clean-up", "is decided at clean-up"),
            4 | 11 => pair("need two or more boot logs", "needs two or more boot logs"),
            5 | 6 | 12 => pair("need a boot log", "needs a boot log"),
            7 => pair("need a live server", "needs a live server"),
            8 => pair(
                "need a recording and the concurrency asked for",
                "needs a recording and the concurrency asked for",
            ),
            16 if self.load_measured => pair(
                "need GPU samples, which inferlint-recorder record takes",
                "needs GPU samples, which inferlint-recorder record takes",
            ),
            18 if self.load_measured => pair(
                "need per-request times or the recorder's marks of the load in the boot log",
                "needs per-request times or the recorder's marks of the load in the boot log",
            ),
            20 if self.load_measured => pair(
                "need the load tool's per-request times, which inferlint-recorder record asks for",
                "needs the load tool's per-request times, which inferlint-recorder record asks for",
            ),
            24 => pair(
                "need a recording and the recorder's marks of the load's start and end",
                "needs a recording and the recorder's marks of the load's start and end",
            ),
            23 => pair(
                "need the load tool's result and before and after readings",
                "needs the load tool's result and before and after readings",
            ),
            9 | 16 | 18 => pair("need a recording", "needs a recording"),
            13 => pair("are rules for test scripts", "is a rule for test scripts"),
            21 => pair(
                "need the output length the load asked for (the recorder keeps the load command)",
                "needs the output length the load asked for (the recorder keeps the load command)",
            ),
            14 if self.t14_na => {
                let t = format!("not apply to {}", self.engine.display());
                (format!("do {t}"), format!("does {t}"))
            }
            14 => pair(
                "need a recording and an after reading",
                "needs a recording and an after reading",
            ),
            _ => pair(
                "need the load tool's result file",
                "needs the load tool's result file",
            ),
        }
    }
}

/// The results' status note, only when something failed.
pub fn status_note(checks: &[CheckResult], summary: &Summary) -> Option<String> {
    let failed: Vec<&CheckResult> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    if failed.is_empty() {
        return None;
    }
    let server: Vec<String> = {
        let mut ids: Vec<String> = failed
            .iter()
            .filter(|c| {
                c.tripwire == Tripwire::CrashAfterReady
                    || c.tripwire == Tripwire::UnexplainedFailure
            })
            .map(|c| c.id())
            .collect();
        ids.dedup();
        ids
    };
    if !server.is_empty() {
        return Some(format!(
            "{} failed: the server itself failed. Any other failure concerns the measurement.",
            server.join(" and ")
        ));
    }
    let mut note = "The server worked; the failures concern the measurement, so some numbers \
                    from this run cannot be taken at face value."
        .to_string();
    if let (Some(done), Some(0.0)) = (summary.done, summary.errors()) {
        note.push_str(&format!(
            " The server finished {} requests with no errors.",
            shortest(done)
        ));
    }
    Some(note)
}
