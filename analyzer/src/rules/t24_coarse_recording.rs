//! T24: the recording is too coarse for the load it read (docs/tripwires.md#t24).
//!
//! The series rules (T8's peak, T9's ceiling, T14's steps, T1 from the paused gauge) read
//! the gauges only at the readings. Three things make those readings unable to carry a
//! verdict, each measured over the load's own stretch:
//! - too few readings inside the load: under [`FEW`] fails, under [`ENOUGH`] warns;
//! - readings much later than the interval asked: their median gap over [`LATE`] times
//!   it warns (the recorder fell behind, usually on a busy machine);
//! - requests shorter than the gap between readings: the load tool's median request
//!   shorter than the median gap warns (a request can start and end unseen).
//!
//! Where the readings stop before the load ends, `readings_end.rs` already turns the
//! series verdicts into "can't tell" naming where and why; T24 warns at least and points
//! there rather than saying it again. T8 asks [`unseen`] whether the load tool's own
//! timeline shows more requests open at once than the gauge's peak for less time than the
//! readings' longest gap: then it can't tell instead of failing.

use serde::Serialize;

use crate::bench::timeline::Timeline;
use crate::bench::Requests;
use crate::num::{fixed, plural, shortest};
use crate::rules::absent::{Absent, Gap, Judged};
use crate::rules::scope::{PhaseScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::coverage::{coverage, Coverage, LoadWindow};

const T24: Tripwire = Tripwire::CoarseRecording;

/// Fewer readings inside the load than this fails: two readings make one span, from
/// which no peak, trend or rate inside the load can be told apart from its edges.
pub const FEW: usize = 3;
/// Fewer than this warns: a peak or a step shorter than a tenth of the load may fall
/// between two readings, and T9's ceiling rests on a handful of points.
pub const ENOUGH: usize = 10;
/// Readings whose median gap is more than this many times the interval asked were taken
/// at under half the rate the verdicts assume: the recorder fell behind.
pub const LATE: f64 = 2.0;

/// How densely the readings cover the load: T24's evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sampling {
    pub readings_in_load: usize,
    pub load_s: f64,
    /// The interval the recording asked for (the series' header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    /// The median gap between consecutive readings inside the load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_gap_s: Option<f64>,
    /// The longest stretch of the load with no reading, its edges included.
    pub longest_unread_s: f64,
    /// Requests on the load tool's own timeline, and the median one's length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_request_s: Option<f64>,
    /// The readings stop before the load's end (`series::coverage`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub readings_end_early: bool,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

impl Sampling {
    /// The readings at `walls` (unix seconds) over the load `[from, to]`, with the
    /// interval asked and the load tool's timeline where there is one.
    pub fn of(walls: &[f64], (from, to): (f64, f64), interval_s: Option<f64>) -> Sampling {
        let inside: Vec<f64> = walls
            .iter()
            .copied()
            .filter(|t| (from..=to).contains(t))
            .collect();
        let gaps: Vec<f64> = inside.windows(2).map(|w| w[1] - w[0]).collect();
        let mut edges = vec![from];
        edges.extend(&inside);
        edges.push(to);
        let longest_unread_s = edges.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
        Sampling {
            readings_in_load: inside.len(),
            load_s: to - from,
            interval_s: interval_s.filter(|i| i.is_finite() && *i > 0.0),
            median_gap_s: median(gaps),
            longest_unread_s,
            ..Sampling::default()
        }
    }

    /// Adds the load tool's requests: how many, and the median one's length.
    pub fn with_requests(mut self, t: Option<&Timeline>) -> Sampling {
        if let Some(t) = t {
            self.requests = Some(t.len());
            self.median_request_s = median(
                t.spans
                    .iter()
                    .map(|(s, e)| e - s)
                    .filter(|l| *l > 0.0)
                    .collect(),
            );
        }
        self
    }

    /// "4 readings in the 2.3 s load, 0.6 s apart (0.25 s asked)".
    fn facts(&self) -> String {
        let mut s = format!(
            "{} in the {} s load",
            plural(self.readings_in_load as f64, "reading"),
            fixed(self.load_s, 1)
        );
        if let Some(g) = self.median_gap_s {
            s.push_str(&format!(", {} s apart", fixed(g, 2)));
        }
        if let Some(i) = self.interval_s {
            s.push_str(&format!(" ({} s asked)", shortest(i)));
        }
        s
    }

    /// What the readings cannot carry, each with its status, worst first.
    fn problems(&self) -> Vec<(Status, String)> {
        let mut out = Vec::new();
        let n = self.readings_in_load;
        if n < FEW {
            out.push((
                Status::Fail,
                format!(
                    "fewer than {FEW} readings inside the load, so no peak, ceiling or rate \
                     inside it can be told from its edges"
                ),
            ));
        } else if n < ENOUGH {
            out.push((
                Status::Warn,
                format!(
                    "fewer than {ENOUGH} readings inside the load, so anything shorter than \
                     {} s may fall between two of them",
                    fixed(self.longest_unread_s, 2)
                ),
            ));
        }
        if let (Some(g), Some(i)) = (self.median_gap_s, self.interval_s) {
            if g > LATE * i {
                out.push((
                    Status::Warn,
                    format!(
                        "the readings came {} times later than the {} s asked (the recorder \
                         fell behind, often on a busy machine)",
                        fixed(g / i, 1),
                        shortest(i)
                    ),
                ));
            }
        }
        let gap = self.median_gap_s.unwrap_or(self.longest_unread_s);
        if let Some(q) = self.median_request_s.filter(|q| *q < gap) {
            out.push((
                Status::Warn,
                format!(
                    "the median request took {} s, less than the {} s between readings, so a \
                     request can start and end unseen",
                    fixed(q, 2),
                    fixed(gap, 2)
                ),
            ));
        }
        if self.readings_end_early {
            out.push((
                Status::Warn,
                "the readings stop before the load ends (the series checks say where and why)"
                    .to_string(),
            ));
        }
        out
    }

    /// Whether a stretch of `held_s` seconds could have fallen between two readings.
    pub fn could_miss(&self, held_s: f64) -> bool {
        held_s > 0.0 && held_s < self.longest_unread_s
    }
}

/// T24 on the readings' sampling.
pub fn judge(e: Sampling) -> CheckResult {
    let problems = e.problems();
    let facts = e.facts();
    // `Status` orders the worst first.
    let (status, message) = match problems.iter().map(|p| p.0).min() {
        None => {
            let requests = e
                .median_request_s
                .map(|q| format!(", the median request {} s", fixed(q, 2)))
                .unwrap_or_default();
            (
                Status::Pass,
                format!("{facts}{requests}: the readings are dense enough for the load"),
            )
        }
        Some(worst) => {
            let why: Vec<String> = problems.into_iter().map(|p| p.1).collect();
            (
                worst,
                format!(
                    "{facts}: {}; the series checks (T8's peak, T9's ceiling) read too few \
                     readings to hold (read at a finer --interval, or run a longer load)",
                    why.join("; ")
                ),
            )
        }
    };
    CheckResult::new(T24, status, message).found(e)
}

/// The load tool's timeline, from its result's per-request times.
fn timeline(q: Option<&Requests>) -> Option<Timeline> {
    q.and_then(Timeline::of)
}

/// The run's sampling over the load the manifest marks; none where no load was marked.
pub fn run_sampling(cx: &RunScope<'_>) -> Option<Sampling> {
    let s = cx.series.present()?;
    let load = LoadWindow::of(cx.manifest?)?;
    let mut e = Sampling::of(
        s.rows.t_wall(),
        (load.started_wall, load.ended_wall),
        s.interval_s,
    )
    .with_requests(timeline(cx.bench_ok().and_then(|b| b.requests.as_ref())).as_ref());
    e.readings_end_early = matches!(coverage(s, load), Coverage::EndsEarly { .. });
    Some(e)
}

/// The whole run, over the load the recorder marked. A folder the recorder did not make
/// records no load window: T24 is left out there (the reference's folders).
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.load_measured() || !cx.recorded_by_inferlint() {
        return Err(Absent::NotGiven);
    }
    cx.series.need()?;
    match run_sampling(cx) {
        Some(e) => Ok(judge(e)),
        None if cx.load_ran => Err(Gap::Run(
            "the manifest does not record when the load started and ended, so the readings \
             inside it can't be counted"
                .into(),
        )
        .into()),
        None => Err(Absent::NotGiven),
    }
}

/// One phase's sampling over its own start and end.
pub fn phase_sampling(cx: &PhaseScope<'_>) -> Option<Sampling> {
    let w = cx.window.present()?;
    let (from, to) = cx.phase.start_wall.zip(cx.phase.end_wall)?;
    (to >= from).then(|| {
        Sampling::of(w.inner.rows.t_wall(), (from, to), w.inner.interval_s)
            .with_requests(timeline(cx.phase.requests.as_ref()).as_ref())
    })
}

/// One phase, on its own readings.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    cx.window.need()?;
    phase_sampling(cx).map(judge).ok_or_else(|| {
        Gap::Phase(format!(
            "{}'s result gives no start and end for this phase, so the readings inside it \
             can't be counted",
            cx.tool
        ))
        .into()
    })
}

/// The load tool's timeline shows more requests open at once than the gauge ever read,
/// for less time than the readings' longest gap: what T8 says instead of failing.
#[derive(Debug, Clone, PartialEq)]
pub struct Unseen {
    pub open_at_once: usize,
    /// The longest stretch with more open than the gauge's peak.
    pub held_s: f64,
    pub sampling: Sampling,
}

/// Some when the timeline of `requests` shows more open at once than `peak_running` and
/// the readings of `sampling` could have missed it.
pub fn unseen(
    sampling: Option<Sampling>,
    requests: Option<&Requests>,
    peak_running: Option<f64>,
) -> Option<Unseen> {
    let (sampling, t) = (sampling?, timeline(requests)?);
    let peak = peak_running.unwrap_or(0.0).max(0.0);
    let open_at_once = t.peak_open();
    if (open_at_once as f64) <= peak {
        return None;
    }
    let held_s = t.longest_at_least(peak.floor() as usize + 1);
    sampling.could_miss(held_s).then_some(Unseen {
        open_at_once,
        held_s,
        sampling,
    })
}

impl Unseen {
    /// T8's "can't tell", keeping what the readings alone said.
    pub fn apply(&self, r: &mut CheckResult, tool: &str) {
        let s = &self.sampling;
        let seen = std::mem::replace(
            &mut r.message,
            format!(
                "can't tell: {tool}'s own timeline shows {} requests open at once, more than \
                 the gauge's peak for at most {} s, but the server was read {} in the {} s \
                 load, up to {} s apart: too sparse to have seen it (T24)",
                self.open_at_once,
                fixed(self.held_s, 2),
                plural(s.readings_in_load as f64, "time"),
                fixed(s.load_s, 1),
                fixed(s.longest_unread_s, 2)
            ),
        );
        r.status = Status::Unknown;
        r.set("on_the_readings_recorded", seen);
        r.set("timeline_open_at_once", self.open_at_once as i64);
        r.set("timeline_held_s", self.held_s);
        r.set("readings_in_load", s.readings_in_load as i64);
        r.set("longest_unread_s", s.longest_unread_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{BenchResult, Phase};
    use crate::engine::Engine;
    use crate::inputs::{BenchInput, InputFile};
    use crate::manifest::Manifest;
    use crate::rules::absent::{settle, Input};
    use crate::rules::scope::window;
    use crate::rules::t08_concurrency_not_reached as t08;
    use crate::rules::testing::{gauges, said, Folder};
    use crate::series::{Row, Series};

    /// Readings of `running` every `every` s from t = 100.
    fn readings(every: f64, running: &[f64]) -> Series {
        let rows: Vec<Row> = running
            .iter()
            .enumerate()
            .map(|(k, &r)| Row {
                t_wall: 100.0 + k as f64 * every,
                ..gauges(r, 0.0, 0.1)
            })
            .collect();
        Series {
            interval_s: Some(every),
            engine_named: Some(Engine::Vllm),
            row_lines: (2..2 + rows.len() as u32).collect(),
            rows: rows.into(),
            ..Series::default()
        }
    }

    /// The case: 6 requests sent at once, each `latency` s long, on a clock whose
    /// zero is the load's start.
    fn six_at_once(latency: f64) -> crate::bench::Requests {
        crate::bench::Requests {
            ttft_s: vec![Some(0.1); 6],
            start_s: Some(vec![Some(100.05); 6]),
            latency_s: Some(vec![Some(latency); 6]),
            output_tokens: None,
            input_tokens: None,
            implausible: Vec::new(),
        }
    }

    #[test]
    fn dense_readings_of_long_requests_pass() {
        let e = Sampling::of(
            readings(0.25, &[1.0; 41]).rows.t_wall(),
            (100.0, 110.0),
            Some(0.25),
        )
        .with_requests(Timeline::of(&six_at_once(2.0)).as_ref());
        assert_eq!(e.readings_in_load, 41);
        assert_eq!(e.median_gap_s, Some(0.25));
        let r = judge(e);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "41 readings in the 10.0 s load, 0.25 s apart (0.25 s asked), the median request \
                 2.00 s: the readings are dense enough for the load"
            )
        );
    }

    #[test]
    fn a_short_load_read_late_warns_and_one_read_once_fails() {
        // Asked every 0.25 s, read every 0.6 s; requests of 0.5 s.
        let s = readings(0.6, &[0.0, 4.0, 0.0, 0.0]);
        let e = Sampling::of(s.rows.t_wall(), (100.0, 102.0), Some(0.25))
            .with_requests(Timeline::of(&six_at_once(0.5)).as_ref());
        let r = judge(e);
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        for part in [
            "4 readings in the 2.0 s load, 0.60 s apart (0.25 s asked)",
            "fewer than 10 readings inside the load",
            "the readings came 2.4 times later than the 0.25 s asked",
            "the median request took 0.50 s, less than the 0.60 s between readings",
            "read at a finer --interval, or run a longer load",
        ] {
            assert!(r.message.contains(part), "{part}: {}", r.message);
        }
        // Read every 2 s: one reading inside the load.
        let s = readings(2.0, &[0.0, 0.0]);
        let r = judge(Sampling::of(s.rows.t_wall(), (100.5, 102.5), Some(2.0)));
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(r
            .message
            .starts_with("1 reading in the 2.0 s load (2 s asked): fewer than 3"));
        assert_eq!(r.finding::<Sampling>().unwrap().longest_unread_s, 1.5);
        // With requests shorter than the gap as well, the worst of the two stands.
        let e = Sampling::of(s.rows.t_wall(), (100.5, 102.5), Some(2.0))
            .with_requests(Timeline::of(&six_at_once(0.5)).as_ref());
        let r = judge(e);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.contains("the median request took 0.50 s"),
            "{}",
            r.message
        );
    }

    /// A run the recorder made, with the load marked from 100 to `end`.
    fn recorded(f: &mut Folder) {
        f.input.manifest = Some(InputFile::new("manifest.json", b"{}".to_vec()));
    }

    #[test]
    fn the_run_is_judged_only_on_a_marked_load() {
        let s = readings(0.25, &[1.0; 41]);
        let mut f = Folder::default();
        f.input.series = Some(InputFile::new("run.series.jsonl", Vec::new()));
        // The reference's folders: no manifest, no result.
        let mut cx = f.scope();
        cx.series = Input::Present(&s);
        assert_eq!(run(&cx).err(), Some(Absent::NotGiven));
        recorded(&mut f);
        let unmarked = Manifest::default();
        let mut cx = f.scope();
        cx.series = Input::Present(&s);
        cx.manifest = Some(&unmarked);
        cx.load_ran = true;
        let r = settle(T24, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("does not record when the load started"),
            "{}",
            r.message
        );
        let m = Manifest {
            load_started_wall: Some(100.0),
            load_ended_wall: Some(110.0),
            ..Manifest::default()
        };
        cx.manifest = Some(&m);
        assert_eq!(settle(T24, run(&cx)).unwrap().status, Status::Pass);
        // The readings stop at 105 s: a warning that points at the series checks.
        let short = readings(0.25, &[1.0; 21]);
        cx.series = Input::Present(&short);
        let r = settle(T24, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(r
            .message
            .contains("the readings stop before the load ends (the series checks say"));
    }

    #[test]
    fn t8_cannot_tell_when_the_timeline_saw_more_than_sparse_readings() {
        // 6 requests open at once for 0.5 s; readings 0.6 s apart saw 4 at most.
        let s = readings(0.6, &[0.0, 4.0, 0.0, 0.0]);
        let m = Manifest {
            load_started_wall: Some(100.0),
            load_ended_wall: Some(102.0),
            ..Manifest::default()
        };
        let b = BenchResult {
            tool: Some("vllm bench serve".into()),
            requests: Some(six_at_once(0.5)),
            ..BenchResult::default()
        };
        let mut f = Folder::default();
        recorded(&mut f);
        f.input.series = Some(InputFile::new("run.series.jsonl", Vec::new()));
        f.input.bench = Some(BenchInput {
            evidence_path: "bench.json".into(),
            file: InputFile::new("bench.json", b"{}".to_vec()),
        });
        let mut cx = f.scope();
        cx.series = Input::Present(&s);
        cx.manifest = Some(&m);
        cx.bench = Input::Present(&b);
        cx.requested = Some(6);
        cx.load_ran = true;
        let r = settle(Tripwire::ConcurrencyNotReached, t08::run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message.starts_with(
                "can't tell: vllm bench serve's own timeline shows 6 requests open at once, more \
                 than the gauge's peak for at most 0.50 s, but the server was read 4 times in \
                 the 2.0 s load, up to 0.60 s apart"
            ),
            "{}",
            r.message
        );
        assert_eq!(
            r.evidence_value("timeline_open_at_once"),
            Some(crate::json::Json::from(6i64))
        );
        assert!(r.evidence_value("on_the_readings_recorded").is_some());
        // Read densely, the same gauge peak is a real shortfall: T8 fails.
        let dense = readings(0.1, &[4.0; 21]);
        cx.series = Input::Present(&dense);
        let r = settle(Tripwire::ConcurrencyNotReached, t08::run(&cx)).unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        // Without the load tool's timeline, the readings alone decide.
        let bare = BenchResult::default();
        cx.series = Input::Present(&s);
        cx.bench = Input::Present(&bare);
        let r = settle(Tripwire::ConcurrencyNotReached, t08::run(&cx)).unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
    }

    #[test]
    fn a_phase_is_judged_on_its_own_readings_and_t8_with_it() {
        let s = readings(0.6, &[0.0, 0.0, 4.0, 0.0, 0.0, 0.0]);
        let p = Phase {
            concurrency: Some(6),
            start_wall: Some(100.5),
            end_wall: Some(102.5),
            requests: Some(six_at_once(0.5)),
            ..Phase::default()
        };
        let w = window::cut(&s, 100.5, 102.5).unwrap();
        let mut cx = PhaseScope {
            phase: &p,
            window: Input::Present(&w),
            engine: Engine::Vllm,
            facts: None,
            usable_blocks: None,
            tool: "GuideLLM 0.8.1",
            load_cpu: None,
            recorded: true,
        };
        let r = settle(T24, phase(&cx)).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message.starts_with("4 readings in the 2.0 s load"),
            "{}",
            r.message
        );
        let r = settle(Tripwire::ConcurrencyNotReached, t08::phase(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(r
            .message
            .starts_with("can't tell: GuideLLM 0.8.1's own timeline"));
        // A phase without its own start and end can't be counted.
        let open = Phase {
            start_wall: None,
            ..p.clone()
        };
        cx.phase = &open;
        let r = settle(T24, phase(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("gives no start and end"),
            "{}",
            r.message
        );
    }
}
