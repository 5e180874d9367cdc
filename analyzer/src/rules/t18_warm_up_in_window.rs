//! T18: warm-up inside the measured window. The first requests of a run pay one-time
//! costs (CUDA-graph capture for a new batch size, compilation, lazy allocation, kernel
//! JIT) that the rest do not, so a short run's throughput and latency include them.
//!
//! The rule (spelled out in docs/tripwires.md#t18), from two kinds of evidence:
//! - **per-request times** from the load tool (`vllm bench serve --save-detailed`:
//!   `ttfts`, `start_times`, `latencies`; GuideLLM's request records of its measured
//!   window, `bench/guidellm.rs`). The *first wave* is the requests that started
//!   before any request finished (without start times: the first *c* requests, *c* the
//!   concurrency asked for); the *rest* are the later ones. The effect is the median time
//!   to first token of the first wave over that of the rest. It **warns** when the effect
//!   is at least [`RATIO`] and the first wave's median exceeds the rest's by at least
//!   [`EXCESS_S`], while the recording shows no request waiting in the queue around the
//!   first wave; when requests did wait there, queueing may explain the slow start, so
//!   it **can't tell**. A smaller effect **passes**.
//! - **the boot log** written while the load ran (between the byte lengths the recorder
//!   noted at the load's start and end): lines of compilation or graph capture
//!   (`Engine::warm_up_markers`). Without per-request times they **warn**, unless the load
//!   tool ran its own warm-up phase then (its lines could be from that: can't tell).
//!
//! Without either kind of evidence: **can't tell**, never a pass; and when the
//! plausibility gate refused a per-request time (or, for a first wave that stands out,
//! a `waiting` reading of the series or the result's `duration`), naming it. Evidence: `engine`,
//! `first_requests`, `later_requests`, `first_ttft_s`, `later_ttft_s`, `ratio`,
//! `excess_s`, `waiting_max`, `log_lines`, `first_log_line`.

use serde::Serialize;

use crate::bench::key::DURATION;
use crate::bench::Requests;
use crate::engine::Engine;
use crate::load_tool::LoadTool;
use crate::num::{fixed, round_dp};
use crate::plausible::{self, Implausible};
use crate::rules::absent::{Absent, Judged};
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

const T18: Tripwire = Tripwire::WarmUpInWindow;

/// The first wave's median time to first token over the rest's, from which it is flagged.
pub const RATIO: f64 = 3.0;
/// …and by at least this many seconds (a one-time cost worth the name).
pub const EXCESS_S: f64 = 0.25;
/// Later requests needed for a comparison.
pub const MIN_REST: usize = 4;
/// Seconds around the first wave in which the queue is looked at (the run's start is
/// known only from the load's end and the result's duration).
pub const PAD_S: f64 = 1.0;

/// What T18 draws on.
pub struct WarmUpInputs<'a> {
    pub engine: Engine,
    pub requests: Option<&'a Requests>,
    /// The concurrency asked for (the first wave without start times).
    pub requested: Option<i64>,
    /// The result's measured duration.
    pub duration_s: Option<f64>,
    /// The result's duration when the plausibility gate refused it.
    pub duration_refused: Option<&'a Implausible>,
    pub series: Option<&'a Series>,
    /// When the load command ended (the manifest).
    pub load_ended_wall: Option<f64>,
    /// The boot log written while the load ran; none without the recorder's offsets.
    pub log_during_load: Option<&'a str>,
    /// The load tool ran a warm-up phase of its own (its `load.log` says so).
    pub client_warm_up: bool,
    /// The load tool that ran: the hints name its own flags.
    pub tool: LoadTool,
}

/// What T18 drew on: the log's warm-up lines and the first wave against the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WarmUp {
    /// The engine's key.
    pub engine: &'static str,
    /// Lines of compilation or graph capture in the log written while the load ran (when
    /// that stretch of the log is known), and the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_lines: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_log_line: Option<String>,
    /// The first wave's and the later requests' counts and median times to first token
    /// (seconds, to 3 places), and the first's over the later's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_requests: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub later_requests: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_ttft_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub later_ttft_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excess_s: Option<f64>,
    /// A refused value: a per-request time, or a queue reading or the result's duration
    /// read for a first wave that stands out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// The most requests waiting around the first wave, when it stands out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
}

/// The first wave against the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub first: usize,
    pub rest: usize,
    pub first_ttft_s: f64,
    pub rest_ttft_s: f64,
    /// Seconds from the first wave's first start to its last first token.
    pub span_s: f64,
}

impl Effect {
    pub fn ratio(&self) -> f64 {
        self.first_ttft_s / self.rest_ttft_s
    }
    pub fn excess_s(&self) -> f64 {
        self.first_ttft_s - self.rest_ttft_s
    }
    fn flagged(&self) -> bool {
        self.ratio() >= RATIO && self.excess_s() >= EXCESS_S
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The requests with a time to first token, split into the first wave and the rest, and
/// the first wave's first start; none when the wave cannot be told.
fn split(requests: &Requests, requested: Option<i64>) -> Option<(Vec<usize>, Vec<usize>, f64)> {
    let ok: Vec<usize> = (0..requests.ttft_s.len())
        .filter(|&i| requests.ttft_s[i].is_some())
        .collect();
    let at = |v: &Option<Vec<Option<f64>>>, i: usize| {
        v.as_ref().and_then(|v| v.get(i).copied().flatten())
    };
    let timed = ok
        .iter()
        .all(|&i| at(&requests.start_s, i).is_some() && at(&requests.latency_s, i).is_some());
    let (wave, start0): (Vec<usize>, f64) = if timed && !ok.is_empty() {
        let first_done = ok
            .iter()
            .map(|&i| {
                at(&requests.start_s, i).unwrap_or(0.0) + at(&requests.latency_s, i).unwrap_or(0.0)
            })
            .fold(f64::INFINITY, f64::min);
        let start0 = ok
            .iter()
            .filter_map(|&i| at(&requests.start_s, i))
            .fold(f64::INFINITY, f64::min);
        (
            ok.iter()
                .copied()
                .filter(|&i| at(&requests.start_s, i).is_some_and(|s| s < first_done))
                .collect(),
            start0,
        )
    } else {
        let c = usize::try_from(requested?).ok().filter(|&c| c > 0)?;
        (ok.iter().copied().take(c).collect(), 0.0)
    };
    let rest: Vec<usize> = ok.iter().copied().filter(|i| !wave.contains(i)).collect();
    Some((wave, rest, start0))
}

/// The first wave and the rest, from per-request times; none when they cannot be told
/// apart or there are too few later requests.
pub fn effect(requests: &Requests, requested: Option<i64>) -> Option<Effect> {
    let (wave, rest, start0) = split(requests, requested)?;
    if wave.is_empty() || rest.len() < MIN_REST {
        return None;
    }
    let at = |v: &Option<Vec<Option<f64>>>, i: usize| {
        v.as_ref().and_then(|v| v.get(i).copied().flatten())
    };
    let ttft = |i: usize| requests.ttft_s[i].unwrap_or(0.0);
    let span_s = wave
        .iter()
        .map(|&i| at(&requests.start_s, i).map_or(0.0, |s| s - start0) + ttft(i))
        .fold(0.0, f64::max);
    Some(Effect {
        first: wave.len(),
        rest: rest.len(),
        first_ttft_s: median(wave.iter().map(|&i| ttft(i)).collect()),
        rest_ttft_s: median(rest.iter().map(|&i| ttft(i)).collect()),
        span_s,
    })
}

/// The most requests seen waiting around the first wave: from the load's end back by the
/// result's duration when both are known, else over the whole recording. None without
/// readings of the queue there.
pub fn waiting_around(inputs: &WarmUpInputs<'_>, span_s: f64) -> Option<f64> {
    let series = inputs.series?;
    let window = match (inputs.load_ended_wall, inputs.duration_s) {
        (Some(end), Some(d)) => Some((end - d - PAD_S, end - d + span_s + PAD_S)),
        _ => None,
    };
    let walls = series.rows.t_wall().iter();
    walls
        .zip(series.rows.values(Field::Waiting))
        .filter(|(&t, _)| window.is_none_or(|(a, b)| t >= a && t <= b))
        .filter_map(|(_, w)| w)
        .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))))
}

/// Lines of the log that mark warm-up work, per the engine's markers.
pub fn warm_up_lines(engine: Engine, log: &str) -> Vec<String> {
    let markers = engine.warm_up_markers();
    log.lines()
        .filter(|l| {
            let lower = l.to_lowercase();
            markers.iter().any(|m| lower.contains(m))
        })
        .map(|l| {
            let t = l.trim();
            match t.char_indices().nth(160) {
                Some((i, _)) => format!("{}…", &t[..i]),
                None => t.to_string(),
            }
        })
        .collect()
}

/// The bytes of a log between two lengths, as text (to the end when `to` is unknown).
pub fn log_between(bytes: &[u8], from: u64, to: Option<u64>) -> String {
    let len = bytes.len();
    let a = usize::try_from(from).unwrap_or(len).min(len);
    let b = to
        .and_then(|t| usize::try_from(t).ok())
        .unwrap_or(len)
        .clamp(a, len);
    String::from_utf8_lossy(&bytes[a..b]).into_owned()
}

/// How to keep warm-up out of the measurement, with the tool's own flag.
fn exclude(tool: &LoadTool) -> String {
    format!(
        "run a warm-up phase at the load's concurrency before measuring ({}, N at least the \
         concurrency); the recorder's probe counts as one only if it reached the load's batch \
         sizes",
        tool.warm_up_hint()
    )
}

/// T18 on a run.
/// The whole run: the load tool's per-request times and the log the server wrote while
/// the load ran. On a folder the recorder did not make, a "can't tell" that only its
/// captures could decide is left out (its exit status stays what its own inputs give).
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.load_measured() {
        return Err(Absent::NotGiven);
    }
    let bench = cx.bench_ok();
    let log_during_load = cx
        .manifest
        .and_then(|mf| mf.boot_log_at)
        .and_then(|at| Some((at.load_start?, at.load_end)))
        .and_then(|(from, to)| {
            let log = cx.input.boot_logs.first()?.bytes.as_ref().ok()?;
            Some(log_between(log, from, to))
        });
    let client_warm_up = cx
        .input
        .load_log
        .as_ref()
        .and_then(|f| f.bytes.as_ref().ok())
        .is_some_and(|b| crate::bench::client_warm_up(&String::from_utf8_lossy(b)));
    let r = check(&WarmUpInputs {
        engine: cx.engine,
        requests: bench.and_then(|b| b.requests.as_ref()),
        requested: cx.requested,
        duration_s: bench.and_then(|b| b.duration),
        duration_refused: bench.and_then(|b| plausible::first(&b.implausible, &[DURATION])),
        series: cx.series.present(),
        load_ended_wall: cx.manifest.and_then(|mf| mf.load_ended_wall),
        log_during_load: log_during_load.as_deref(),
        client_warm_up,
        tool: crate::load_tool::of(cx.manifest, bench),
    });
    // A refused number in the result is always shown: it is the input's fault, not a
    // capture the folder never had.
    let refused = bench.is_some_and(|b| !b.implausible.is_empty());
    if cx.recorded_by_inferlint() || refused || r.status != Status::Unknown {
        Ok(r)
    } else {
        Err(Absent::NotGiven)
    }
}

pub fn check(inputs: &WarmUpInputs<'_>) -> CheckResult {
    let lines = inputs
        .log_during_load
        .map(|log| warm_up_lines(inputs.engine, log));
    let mut e = WarmUp {
        engine: inputs.engine.key(),
        log_lines: lines.as_ref().map(Vec::len),
        first_log_line: lines.as_ref().and_then(|l| l.first().cloned()),
        ..WarmUp::default()
    };
    let (status, message) = judge(inputs, lines.as_deref(), &mut e);
    CheckResult::new(T18, status, message).found(e)
}

/// The verdict from the per-request times, else from the log's lines; fills in `e`.
fn judge(inputs: &WarmUpInputs<'_>, lines: Option<&[String]>, e: &mut WarmUp) -> (Status, String) {
    let count = |l: &[String]| format!("{} line{}", l.len(), if l.len() == 1 { "" } else { "s" });
    let logged = match lines {
        Some(l @ [first, ..]) => format!(
            "; the server logged {} of compilation or graph capture while the load ran \
             (\"{first}\")",
            count(l)
        ),
        _ => String::new(),
    };
    // A refused per-request time leaves its request out, which can hide a slow first
    // wave: no verdict from the others (plausible.rs).
    if let Some(bad) = inputs.requests.and_then(|q| q.implausible.first()) {
        e.implausible = Some(bad.to_string());
        return (Status::Unknown, plausible::cannot_tell(bad));
    }
    if let Some(wave) = inputs.requests.and_then(|q| effect(q, inputs.requested)) {
        return first_wave(inputs, &wave, &logged, e);
    }
    let per_request = inputs
        .requests
        .and_then(|q| too_few_later(q, inputs.requested))
        .unwrap_or_else(|| {
            format!(
                "the load tool's result has no per-request times to compare the first requests \
                 with the rest ({})",
                inputs.tool.per_request_hint()
            )
        });
    match lines {
        Some(l @ [first, ..]) if !inputs.client_warm_up => (
            Status::Warn,
            format!(
                "the server logged {} of compilation or graph capture while the load ran \
                 (\"{first}\"): one-time warm-up inside the measured window. To exclude it, \
                 {}",
                count(l),
                exclude(&inputs.tool)
            ),
        ),
        Some([_, ..]) => (
            Status::Unknown,
            format!(
                "the server logged compilation or graph capture while the load ran, but the load \
                 tool also ran its own warm-up phase then, and {per_request}"
            ),
        ),
        Some([]) => (
            Status::Unknown,
            format!(
                "the server logged no compilation or graph capture while the load ran, but \
                 {per_request}, so a silent warm-up cannot be ruled out"
            ),
        ),
        None => (
            Status::Unknown,
            format!(
                "{per_request}, and no boot log with the recorder's marks of the load's start \
                 and end shows what the server did then"
            ),
        ),
    }
}

/// Why per-request times that are there give no comparison: every request, or all but a
/// few, was in the first wave (sent before any answer ended), and what to change. None
/// when the result holds no per-request times to speak of.
fn too_few_later(q: &Requests, requested: Option<i64>) -> Option<String> {
    let (wave, rest, _) = split(q, requested)?;
    if wave.is_empty() || rest.len() >= MIN_REST {
        return None;
    }
    let times = wave.len() + rest.len();
    let later = match rest.len() {
        0 => format!(
            "all {times} of the load tool's per-request times are of its first wave (sent \
             before any answer ended), with nothing later to compare them with"
        ),
        n => format!(
            "{} of the load tool's {times} per-request times are of its first wave (sent \
             before any answer ended), and {} too few to compare them with (at least \
             {MIN_REST} are needed)",
            wave.len(),
            if n == 1 {
                "the one later request is".to_string()
            } else {
                format!("the {n} later requests are")
            }
        ),
    };
    Some(format!(
        "{later} (send more requests than the concurrency: at least {} at this one)",
        wave.len() + MIN_REST
    ))
}

/// The first wave against the rest: a pass when it does not stand out, else a warning
/// when the queue was empty then and "can't tell" when it was not or is not known.
fn first_wave(
    inputs: &WarmUpInputs<'_>,
    wave: &Effect,
    logged: &str,
    e: &mut WarmUp,
) -> (Status, String) {
    e.first_requests = Some(wave.first);
    e.later_requests = Some(wave.rest);
    e.first_ttft_s = Some(round_dp(wave.first_ttft_s, 3));
    e.later_ttft_s = Some(round_dp(wave.rest_ttft_s, 3));
    e.ratio = Some(round_dp(wave.ratio(), 2));
    e.excess_s = Some(round_dp(wave.excess_s(), 3));
    let said = format!(
        "the first {} requests waited a median {} s for their first token, {}× the {} s of \
         the {} after them",
        wave.first,
        fixed(wave.first_ttft_s, 2),
        fixed(wave.ratio(), 1),
        fixed(wave.rest_ttft_s, 2),
        wave.rest
    );
    if !wave.flagged() {
        return (
            Status::Pass,
            format!(
                "{said}: no one-time warm-up stands out (flagged from {}× and {} s more)",
                fixed(RATIO, 0),
                fixed(EXCESS_S, 2)
            ),
        );
    }
    let refused = inputs
        .series
        .and_then(|s| s.implausible_in(&[column::WAITING]))
        .or(inputs.duration_refused);
    if let Some(bad) = refused {
        e.implausible = Some(bad.to_string());
        return (Status::Unknown, plausible::cannot_tell(bad));
    }
    let waiting = waiting_around(inputs, wave.span_s);
    e.waiting_max = waiting;
    match waiting {
        Some(w) if w <= 0.0 => (
            Status::Warn,
            format!(
                "{said}, while no request waited in the queue: about {} s of one-time \
                 warm-up inside the measured window{logged}. To exclude it, {}",
                fixed(wave.excess_s(), 2),
                exclude(&inputs.tool)
            ),
        ),
        Some(w) => (
            Status::Unknown,
            format!(
                "{said}, but up to {} requests waited in the queue then, so queueing may \
                 explain the slow start as well as a warm-up{logged}",
                crate::num::shortest(w),
            ),
        ),
        None => (
            Status::Unknown,
            format!(
                "{said}, but without a recording of the queue then, queueing cannot be told \
                 from a warm-up{logged}"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BenchResult;
    use crate::docs::Row;
    use crate::inputs::{InputFile, RunInput};
    use crate::json::Json;
    use crate::rules::absent::{settle, Input};
    use crate::rules::testing::Folder;

    /// The evidence as `results.json` writes it.
    fn written(r: &CheckResult) -> String {
        Json::Obj(r.evidence()).to_compact()
    }

    fn found(r: &CheckResult) -> &WarmUp {
        r.finding::<WarmUp>().expect("T18's evidence")
    }

    const COMPILING: &str = "(EngineCore pid=7) INFO 11-30 10:52:20 [backends.py:400] Compiling a graph for compile range (1, 8) takes 1.52 s\n";

    /// `waves` waves of `c` requests, each wave starting when the last finished: every
    /// request's first token after `ttft` s, the first wave's after `first` s.
    fn closed_loop(c: usize, waves: usize, first: f64, ttft: f64) -> Requests {
        let mut q = Requests {
            start_s: Some(Vec::new()),
            latency_s: Some(Vec::new()),
            ..Requests::default()
        };
        let mut t = 100.0;
        for w in 0..waves {
            let f = if w == 0 { first } else { ttft };
            let latency = f + 2.0;
            for _ in 0..c {
                q.ttft_s.push(Some(f));
                q.start_s.as_mut().unwrap().push(Some(t));
                q.latency_s.as_mut().unwrap().push(Some(latency));
            }
            t += latency + 0.01;
        }
        q
    }

    fn series(waiting: f64) -> Series {
        Series {
            rows: (0..40)
                .map(|k| Row {
                    t_wall: 1000.0 + k as f64 * 0.25,
                    waiting: Some(if k == 5 { waiting } else { 0.0 }),
                    ..Row::default()
                })
                .collect(),
            ..Series::default()
        }
    }

    fn inputs<'a>(q: Option<&'a Requests>, s: Option<&'a Series>) -> WarmUpInputs<'a> {
        WarmUpInputs {
            engine: Engine::Vllm,
            requests: q,
            requested: Some(8),
            // The run took 8.5 s and the load ended at 1009: it began at 1000.5.
            duration_s: Some(8.5),
            duration_refused: None,
            series: s,
            load_ended_wall: Some(1009.0),
            log_during_load: None,
            client_warm_up: false,
            tool: LoadTool::Unknown,
        }
    }

    #[test]
    fn a_slow_first_wave_with_an_empty_queue_warns_and_a_warmed_run_passes() {
        let cold = closed_loop(8, 4, 1.6, 0.2);
        let s = series(0.0);
        let r = check(&inputs(Some(&cold), Some(&s)));
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        let e = found(&r);
        assert_eq!(e.ratio, Some(8.0));
        assert_eq!((e.first_requests, e.later_requests), (Some(8), Some(24)));
        assert_eq!((e.first_ttft_s, e.later_ttft_s), (Some(1.6), Some(0.2)));
        assert_eq!(e.waiting_max, Some(0.0));
        assert!(
            r.message.contains("about 1.40 s of one-time warm-up"),
            "{}",
            r.message
        );
        assert!(r.message.contains("--num-warmups"));
        let warm = closed_loop(8, 4, 0.22, 0.2);
        let r = check(&inputs(Some(&warm), Some(&s)));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn thresholds_are_the_ratio_and_the_excess() {
        let s = series(0.0);
        // 3× but only 0.2 s more: a fast server's ramp, not a warm-up.
        let small = closed_loop(8, 4, 0.3, 0.1);
        assert_eq!(check(&inputs(Some(&small), Some(&s))).status, Status::Pass);
        let just = closed_loop(8, 4, 0.375, 0.125);
        assert_eq!(check(&inputs(Some(&just), Some(&s))).status, Status::Warn);
        let under = closed_loop(8, 4, 0.37, 0.125);
        assert_eq!(check(&inputs(Some(&under), Some(&s))).status, Status::Pass);
    }

    #[test]
    fn queueing_around_the_first_wave_is_cant_tell() {
        let cold = closed_loop(8, 4, 1.6, 0.2);
        // Row 5 is at 1001.25, inside the first wave's window.
        let s = series(3.0);
        let r = check(&inputs(Some(&cold), Some(&s)));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert_eq!(found(&r).waiting_max, Some(3.0));
        // No recording at all: can't tell either.
        assert_eq!(check(&inputs(Some(&cold), None)).status, Status::Unknown);
    }

    #[test]
    fn without_start_times_the_first_wave_is_the_concurrency() {
        let mut cold = closed_loop(8, 4, 1.6, 0.2);
        cold.start_s = None;
        let s = series(0.0);
        let e = effect(&cold, Some(8)).unwrap();
        assert_eq!((e.first, e.rest), (8, 24));
        assert!(effect(&cold, None).is_none());
        assert_eq!(check(&inputs(Some(&cold), Some(&s))).status, Status::Warn);
    }

    #[test]
    fn a_load_all_in_its_first_wave_says_so_and_what_to_change() {
        // 32 sent at once at a concurrency of 32: the demo's own run.
        let q = closed_loop(32, 1, 1.6, 0.2);
        let r = check(&inputs(Some(&q), None));
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with(
                "all 32 of the load tool's per-request times are of its first wave (sent \
                 before any answer ended), with nothing later to compare them with (send more \
                 requests than the concurrency: at least 36 at this one), and no boot log"
            ),
            "{}",
            r.message
        );
        // Two later requests: too few, and said so.
        let mut q = closed_loop(8, 2, 1.6, 0.2);
        for v in [&mut q.start_s, &mut q.latency_s] {
            v.as_mut().unwrap().truncate(10);
        }
        q.ttft_s.truncate(10);
        let r = check(&inputs(Some(&q), None));
        assert!(
            r.message
                .contains("8 of the load tool's 10 per-request times are of its first wave (sent before any answer ended), and the 2 later requests are too few"),
            "{}",
            r.message
        );
    }

    #[test]
    fn failed_requests_and_too_few_later_ones() {
        let mut q = closed_loop(8, 1, 1.6, 0.2);
        assert!(effect(&q, Some(8)).is_none(), "no later requests");
        q.ttft_s[0] = None;
        assert!(effect(&q, Some(8)).is_none());
    }

    #[test]
    fn the_boot_log_decides_without_per_request_times() {
        let log = "(EngineCore pid=7) INFO 11-30 10:52:20 [backends.py:400] Compiling a graph for compile range (1, 8) takes 1.52 s\nINFO:     127.0.0.1 - \"POST /v1/completions\" 200 OK\n";
        let mut i = inputs(None, None);
        i.log_during_load = Some(log);
        let r = check(&i);
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert_eq!(found(&r).log_lines, Some(1));
        assert!(found(&r)
            .first_log_line
            .as_ref()
            .is_some_and(|l| l.contains("Compiling a graph")));
        assert_eq!(found(&r).first_requests, None);
        i.client_warm_up = true;
        assert_eq!(check(&i).status, Status::Unknown);
        i.log_during_load = Some("INFO:     127.0.0.1 - \"POST /v1/completions\" 200 OK\n");
        i.client_warm_up = false;
        assert_eq!(check(&i).status, Status::Unknown);
        i.log_during_load = None;
        assert_eq!(check(&i).status, Status::Unknown);
    }

    /// The requests as `vllm bench serve --save-detailed` writes them, on the second line
    /// of a JSON Lines result (SGLang's shape), with the first wave's times to first token
    /// written as `first`.
    fn result_text(q: &Requests, first: &str) -> String {
        let list = |v: &[Option<f64>]| {
            v.iter()
                .map(|x| x.map_or("null".to_string(), |x| format!("{x:?}")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ttfts: Vec<String> = q
            .ttft_s
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i < 8 {
                    first.to_string()
                } else {
                    format!("{:?}", t.unwrap())
                }
            })
            .collect();
        format!(
            "{{\"completed\": 1}}\n{{\"completed\": {}, \"ttfts\": [{}], \"start_times\": [{}], \"latencies\": [{}]}}\n",
            q.ttft_s.len(),
            ttfts.join(", "),
            list(q.start_s.as_ref().unwrap()),
            list(q.latency_s.as_ref().unwrap()),
        )
    }

    #[test]
    fn an_implausible_request_time_that_would_pass_is_cant_tell_naming_it() {
        let cold = closed_loop(8, 4, 1.6, 0.2);
        let s = series(0.0);
        let read = |first: &str| {
            crate::bench::BenchResult::read("run/bench.jsonl", result_text(&cold, first).as_bytes())
                .unwrap()
                .requests
                .unwrap()
        };
        assert_eq!(
            check(&inputs(Some(&read("1.6")), Some(&s))).status,
            Status::Warn
        );
        for (value, shown) in [("NaN", "NaN"), ("-1.6", "-1.6"), ("Infinity", "inf")] {
            // Taken as written (no gate), the first wave drops out and the rest pass.
            let mut damaged = cold.clone();
            for t in &mut damaged.ttft_s[..8] {
                *t = Some(value.parse::<f64>().unwrap()).filter(|x| x.is_finite() && *x > 0.0);
            }
            assert_eq!(
                check(&inputs(Some(&damaged), Some(&s))).status,
                Status::Pass
            );
            let q = read(value);
            let r = check(&inputs(Some(&q), Some(&s)));
            assert_eq!(r.status, Status::Unknown, "{value}: {}", r.message);
            assert!(
                r.message.starts_with(&format!(
                    "can't tell from an implausible value: run/bench.jsonl:2: ttfts[0] = {shown} "
                )),
                "{}",
                r.message
            );
        }
    }

    #[test]
    fn a_refused_queue_reading_or_duration_is_cant_tell_for_a_slow_first_wave() {
        let cold = closed_loop(8, 4, 1.6, 0.2);
        let mut s = series(0.0);
        let nan = |file: &str, field: &str| {
            Implausible::new(file, Some(7), field, f64::NAN, plausible::Why::NotANumber)
        };
        s.implausible
            .push(nan("run/run.series.jsonl", column::WAITING));
        let r = check(&inputs(Some(&cold), Some(&s)));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(r
            .message
            .ends_with("run/run.series.jsonl:7: waiting = NaN is not a number"));
        let s = series(0.0);
        let bad = nan("run/bench.json", "duration");
        let mut i = inputs(Some(&cold), Some(&s));
        i.duration_refused = Some(&bad);
        assert_eq!(check(&i).status, Status::Unknown);
        // A first wave that does not stand out reads neither: its pass stands.
        let warm = closed_loop(8, 4, 0.22, 0.2);
        i.requests = Some(&warm);
        assert_eq!(check(&i).status, Status::Pass);
    }

    #[test]
    fn log_slices_are_clamped() {
        assert_eq!(log_between(b"abcdef", 2, Some(4)), "cd");
        assert_eq!(log_between(b"abcdef", 4, None), "ef");
        assert_eq!(log_between(b"abc", 9, Some(1)), "");
        assert_eq!(log_between(b"abc", 1, Some(99)), "bc");
    }

    #[test]
    fn the_evidence_of_each_outcome_in_its_order() {
        let cold = closed_loop(8, 4, 1.6, 0.2);
        let quiet = series(0.0);
        let effect = r#""first_requests": 8, "later_requests": 24, "first_ttft_s": 1.6, "later_ttft_s": 0.2, "ratio": 8.0, "excess_s": 1.4"#;
        let r = check(&inputs(Some(&cold), Some(&quiet)));
        assert_eq!(r.status, Status::Warn);
        assert_eq!(
            written(&r),
            format!(r#"{{"engine": "vllm", {effect}, "waiting_max": 0.0}}"#)
        );
        // Without a recording of the queue: can't tell, and no waiting_max.
        let r = check(&inputs(Some(&cold), None));
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("without a recording of the queue"),
            "{}",
            r.message
        );
        assert_eq!(written(&r), format!(r#"{{"engine": "vllm", {effect}}}"#));
        // The log's lines come before the requests' figures.
        let mut i = inputs(Some(&cold), Some(&quiet));
        i.log_during_load = Some(COMPILING);
        let r = check(&i);
        assert_eq!(r.status, Status::Warn);
        assert!(
            r.message
                .contains("the server logged 1 line of compilation"),
            "{}",
            r.message
        );
        assert_eq!(
            written(&r),
            format!(
                r#"{{"engine": "vllm", "log_lines": 1, "first_log_line": "(EngineCore pid=7) INFO 11-30 10:52:20 [backends.py:400] Compiling a graph for compile range (1, 8) takes 1.52 s", {effect}, "waiting_max": 0.0}}"#
            )
        );
        // A refused queue reading after a slow first wave: after its figures.
        let mut s = series(0.0);
        s.implausible.push(Implausible::new(
            "run/run.series.jsonl",
            Some(7),
            column::WAITING,
            f64::NAN,
            plausible::Why::NotANumber,
        ));
        let r = check(&inputs(Some(&cold), Some(&s)));
        assert_eq!(
            written(&r),
            format!(
                r#"{{"engine": "vllm", {effect}, "implausible": "run/run.series.jsonl:7: waiting = NaN is not a number"}}"#
            )
        );
        // A first wave that does not stand out: no queue read.
        let warm = closed_loop(8, 4, 0.22, 0.2);
        let r = check(&inputs(Some(&warm), Some(&quiet)));
        assert_eq!(
            written(&r),
            r#"{"engine": "vllm", "first_requests": 8, "later_requests": 24, "first_ttft_s": 0.22, "later_ttft_s": 0.2, "ratio": 1.1, "excess_s": 0.02}"#
        );
    }

    #[test]
    fn without_per_request_times_the_evidence_is_the_logs() {
        let mut i = inputs(None, None);
        assert_eq!(written(&check(&i)), r#"{"engine": "vllm"}"#);
        i.log_during_load = Some("INFO:     127.0.0.1 - \"POST /v1/completions\" 200 OK\n");
        assert_eq!(written(&check(&i)), r#"{"engine": "vllm", "log_lines": 0}"#);
        i.log_during_load = Some(COMPILING);
        let r = check(&i);
        assert_eq!(r.status, Status::Warn);
        assert_eq!(
            written(&r),
            r#"{"engine": "vllm", "log_lines": 1, "first_log_line": "(EngineCore pid=7) INFO 11-30 10:52:20 [backends.py:400] Compiling a graph for compile range (1, 8) takes 1.52 s"}"#
        );
    }

    /// A folder holding a load tool's result, made by the recorder or not.
    fn folder(recorded: bool) -> Folder {
        let file = |name: &str| Some(InputFile::new(name, Vec::new()));
        Folder {
            input: RunInput {
                series: file("run/run.series.jsonl"),
                manifest: if recorded {
                    file("run/manifest.json")
                } else {
                    None
                },
                ..RunInput::default()
            },
            ..Folder::default()
        }
    }

    #[test]
    fn the_run_leaves_out_a_cant_tell_only_the_recorders_captures_could_decide() {
        // No measured load: no result.
        assert_eq!(settle(T18, run(&Folder::default().scope())), None);
        // Nothing to decide with: can't tell in the recorder's folder, left out elsewhere.
        let f = folder(true);
        let r = settle(T18, run(&f.scope())).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message
                .starts_with("the load tool's result has no per-request times"),
            "{}",
            r.message
        );
        assert_eq!(settle(T18, run(&folder(false).scope())), None);
        // Per-request times decide in either.
        let f = folder(false);
        let mut cx = f.scope();
        let bench = BenchResult {
            requests: Some(closed_loop(8, 4, 0.22, 0.2)),
            ..BenchResult::default()
        };
        cx.bench = Input::Present(&bench);
        let r = settle(T18, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        // An unusable result gives no per-request times: as good as none.
        let e = crate::input::InputError::new("run/bench.json", None, "not JSON");
        cx.bench = Input::Unusable(&e);
        assert_eq!(settle(T18, run(&cx)), None);
    }
}
