//! Sweeps are phases: a load-tool result holding several benchmarks (a GuideLLM sweep, a
//! list of concurrencies) is cut into phases by each benchmark's own start and end against
//! the series clock, and each phase gets its own T1, T8, T9, T10 and T15 (`rules`) and a
//! row of the phase table. A phase the series does not cover is "can't tell" with the
//! reason, never a pass. A result of one benchmark has no phases.

use serde::Serialize;

use crate::bench::{BenchResult, Phase};
use crate::rules::absent::{Gap, Input};
use crate::rules::runner;
use crate::rules::scope::window;
use crate::rules::scope::{PhaseScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::series::Series;

/// One phase's row: what it asked for, what the server ran, its checks and the worst.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseVerdict {
    /// 1-based, in the load tool's order.
    pub index: usize,
    /// "16 at once", "4 requests/s".
    pub asked: String,
    pub concurrency: Option<i64>,
    pub rate: Option<f64>,
    /// The most requests the running gauge showed inside the phase.
    pub ran: Option<f64>,
    /// The phase's start and end on the charts' time axis (seconds since the first
    /// reading), when the load tool gave them and the series has readings.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// The load tool's own counts for the phase.
    pub completed: Option<i64>,
    pub failed: Option<i64>,
    pub output_tokens: Option<i64>,
    pub checks: Vec<CheckResult>,
    /// The worst status among `checks`.
    pub status: Status,
}

/// One verdict per phase of a sweep; empty when the result holds one benchmark.
pub fn judge_all(run: &RunScope<'_>) -> Vec<PhaseVerdict> {
    let Some(bench) = run.bench_ok().filter(|b| b.is_sweep()) else {
        return Vec::new();
    };
    // Why there is no series to read, when there is none to read.
    let no_series = match (run.down, &run.series) {
        (Some(d), _) => Some(format!(
            "the server was down before the load started: {}",
            d.reason
        )),
        (None, Input::Unusable(e)) => Some(format!("unusable input: {e}")),
        (None, _) => None,
    };
    let series = run.series.present().filter(|_| no_series.is_none());
    let t0 = series.and_then(|s| s.rows.first()).map(|r| r.t_wall);
    bench
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| judge_one(i + 1, p, run, bench, series, no_series.as_deref(), t0))
        .collect()
}

fn judge_one(
    index: usize,
    phase: &Phase,
    run: &RunScope<'_>,
    bench: &BenchResult,
    series: Option<&Series>,
    no_series: Option<&str>,
    t0: Option<f64>,
) -> PhaseVerdict {
    let on_axis = |t: Option<f64>| Some(t? - t0?);
    let cut = match (series, phase.start_wall.zip(phase.end_wall)) {
        (None, _) => Err(format!(
            "the phase's window can't be read: {}",
            no_series.unwrap_or("the folder has no gauge series")
        )),
        (Some(_), None) => Err(format!(
            "{}'s result gives no start and end time for this phase, so its window on the \
             series is unknown",
            bench.tool_name()
        )),
        (Some(series), Some((start, end))) => window::cut(series, start, end),
    };
    let ran = cut.as_ref().ok().and_then(|w| w.inner.peak_running());
    let cx = PhaseScope {
        phase,
        window: match &cut {
            Ok(w) => Input::Present(w),
            Err(why) => Input::Missing(Gap::Phase(why.clone())),
        },
        engine: series.map_or(run.snapshot_engine, Series::engine),
        facts: run.facts,
        usable_blocks: run.usable_blocks(),
        tool: bench.tool_name(),
        load_cpu: run.load_cpu.present(),
        recorded: run.recorded_by_inferlint(),
    };
    let mut checks = runner::phase(&cx);
    if let Some(timing) = &phase.timing {
        for c in &mut checks {
            c.message = format!("{} ({timing})", c.message);
        }
    }
    let status = worst(&checks);
    PhaseVerdict {
        index,
        asked: phase.asked(),
        concurrency: phase.concurrency,
        rate: phase.rate,
        ran,
        start_s: on_axis(phase.start_wall),
        end_s: on_axis(phase.end_wall),
        completed: phase.completed,
        failed: phase.failed,
        output_tokens: phase.output_tokens,
        checks,
        status,
    }
}

/// The worst status of a list (fail, warn, can't tell, pass, does not apply); "does not
/// apply" for an empty one.
pub fn worst(checks: &[CheckResult]) -> Status {
    checks
        .iter()
        .map(|c| c.status)
        .min()
        .unwrap_or(Status::NotApplicable)
}

/// The worst status over every phase, when there are phases.
pub fn worst_phase(phases: &[PhaseVerdict]) -> Option<Status> {
    phases.iter().map(|p| p.status).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::RunInput;
    use crate::rules::outcome::RunOutcome;
    use crate::series::{Row, Series};

    /// A reading every second from t = 100: running, and cumulative preemptions and
    /// generated tokens.
    fn series(readings: &[(f64, f64, f64)]) -> Series {
        let rows: Vec<Row> = readings
            .iter()
            .enumerate()
            .map(|(i, &(running, preempt, tokens))| Row {
                t_wall: 100.0 + i as f64,
                running: Some(running),
                waiting: Some(0.0),
                kv_usage: Some(0.1),
                preemptions: Some(preempt),
                generation_tokens: Some(tokens),
                ..Row::default()
            })
            .collect();
        Series {
            interval_s: Some(1.0),
            row_lines: (2..2 + rows.len() as u32).collect(),
            rows: rows.into(),
            ..Series::default()
        }
    }

    fn phase(
        concurrency: Option<i64>,
        rate: Option<f64>,
        from: f64,
        to: f64,
        tokens: i64,
    ) -> Phase {
        Phase {
            concurrency,
            rate,
            completed: Some(4),
            failed: Some(0),
            output_tokens: Some(tokens),
            start_wall: Some(from),
            end_wall: Some(to),
            duration: Some(to - from),
            timing: None,
            requests: None,
            asked_output: None,
        }
    }

    fn judge(b: &BenchResult, s: Option<&Series>) -> Vec<PhaseVerdict> {
        let (input, outcome) = (RunInput::default(), RunOutcome::default());
        let mut cx = RunScope::empty(&input, &outcome);
        cx.bench = Input::Present(b);
        cx.series = s.map_or(Input::NotGiven, Input::Present);
        judge_all(&cx)
    }

    fn statuses(p: &PhaseVerdict) -> Vec<(String, &'static str)> {
        p.checks
            .iter()
            .map(|c| (c.id(), c.status.as_str()))
            .collect()
    }

    fn status_of(p: &PhaseVerdict, id: &str) -> Status {
        p.checks.iter().find(|c| c.id() == id).unwrap().status
    }

    fn sweep(phases: Vec<Phase>) -> BenchResult {
        BenchResult {
            phases,
            ..BenchResult::default()
        }
    }

    #[test]
    fn each_phase_is_judged_on_its_own_window() {
        // Phase 1 (2 at once) from 100.5 to 103.5; phase 2 (16 at once) from 104.5 to 107.5.
        let s = series(&[
            (0.0, 0.0, 0.0),
            (2.0, 0.0, 50.0),
            (2.0, 0.0, 100.0),
            (2.0, 0.0, 150.0),
            (0.0, 0.0, 200.0),
            (10.0, 0.0, 300.0),
            (10.0, 0.0, 500.0),
            (10.0, 0.0, 700.0),
            (0.0, 0.0, 800.0),
        ]);
        let b = sweep(vec![
            phase(Some(2), None, 100.5, 103.5, 180),
            phase(Some(16), None, 104.5, 107.5, 600),
        ]);
        let p = judge(&b, Some(&s));
        assert_eq!(p.len(), 2);
        assert_eq!(status_of(&p[0], "T8"), Status::Pass);
        assert_eq!(status_of(&p[1], "T8"), Status::Fail);
        assert_eq!((p[0].ran, p[1].ran), (Some(2.0), Some(10.0)));
        assert_eq!(p[1].status, Status::Fail);
        assert_eq!(worst_phase(&p), Some(Status::Fail));
        // On the charts' axis: seconds since the first reading.
        assert_eq!((p[1].start_s, p[1].end_s), (Some(4.5), Some(7.5)));
        // Tokens: 150 to 200 between the readings for phase 1; 180 lies in it.
        assert_eq!(status_of(&p[0], "T15"), Status::Pass);
        // Phase 2: 400 to 600 between the readings; 600 lies in it.
        assert_eq!(status_of(&p[1], "T15"), Status::Pass);
        assert_eq!(status_of(&p[0], "T1"), Status::Pass);
        assert!(p[0].checks[0].message.contains("during the phase"));
        assert_eq!(status_of(&p[0], "T10"), Status::Pass);
        assert_eq!(
            statuses(&p[0])
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>(),
            ["T1", "T8", "T24", "T9", "T10", "T15", "T22", "T20"]
        );
        // The phases keep no per-request times: T20 can't tell.
        assert_eq!(status_of(&p[0], "T20"), Status::Unknown);
        // The load tool's own counts: nothing failed.
        assert_eq!(status_of(&p[0], "T22"), Status::Pass);
    }

    #[test]
    fn a_single_benchmark_has_no_phases() {
        let s = series(&[(0.0, 0.0, 0.0), (2.0, 0.0, 10.0)]);
        let b = sweep(vec![phase(Some(2), None, 100.0, 101.0, 10)]);
        assert!(judge(&b, Some(&s)).is_empty());
    }

    #[test]
    fn what_the_series_cannot_tell_is_never_a_pass() {
        let s = series(&[(0.0, 0.0, 0.0), (2.0, 0.0, 10.0), (2.0, 0.0, 20.0)]);
        let b = sweep(vec![
            // Outside the recording.
            phase(Some(2), None, 90.0, 95.0, 10),
            // No times in the result.
            Phase {
                start_wall: None,
                ..phase(Some(2), None, 100.0, 101.0, 10)
            },
        ]);
        let p = judge(&b, Some(&s));
        // T22 reads the load tool's counts, not the series.
        for v in &p {
            assert!(
                v.checks
                    .iter()
                    .filter(|c| c.id() != "T22")
                    .all(|c| c.status == Status::Unknown),
                "{v:?}"
            );
            assert_eq!(v.status, Status::Unknown);
        }
        assert!(p[0].checks[0].message.contains("does not cover the phase"));
        assert!(p[1].checks[0].message.contains("no start and end time"));
        // No series at all: each check says why.
        let (input, outcome) = (RunInput::default(), RunOutcome::default());
        let damaged = crate::input::InputError::new("run.series.jsonl", None, "damaged");
        let mut cx = RunScope::empty(&input, &outcome);
        cx.bench = Input::Present(&b);
        cx.series = Input::Unusable(&damaged);
        let p = judge_all(&cx);
        assert!(p[0].checks[3].message.contains("run.series.jsonl: damaged"));
        assert_eq!(p[0].checks[3].status, Status::Unknown);
    }

    #[test]
    fn preemptions_at_an_edge_cannot_be_placed_and_inside_fail() {
        // A preemption between 102 and 103: at the edge of a phase from 102.5 to 104.5,
        // inside one from 101.5 to 104.5.
        let s = series(&[
            (1.0, 0.0, 0.0),
            (1.0, 0.0, 10.0),
            (1.0, 0.0, 20.0),
            (1.0, 1.0, 30.0),
            (1.0, 1.0, 40.0),
            (1.0, 1.0, 50.0),
        ]);
        let b = sweep(vec![
            phase(Some(1), None, 102.5, 104.5, 20),
            phase(Some(1), None, 101.5, 104.5, 30),
        ]);
        let p = judge(&b, Some(&s));
        assert_eq!(status_of(&p[0], "T1"), Status::Unknown);
        assert!(
            p[0].checks[0].message.contains("at the phase's edge"),
            "{}",
            p[0].checks[0].message
        );
        assert_eq!(status_of(&p[1], "T1"), Status::Fail);
    }

    #[test]
    fn a_rate_phase_asks_for_no_concurrency_and_tokens_outside_the_bracket_warn() {
        let s = series(&[
            (0.0, 0.0, 0.0),
            (3.0, 0.0, 10.0),
            (3.0, 0.0, 20.0),
            (0.0, 0.0, 30.0),
        ]);
        let b = sweep(vec![
            phase(None, Some(4.0), 100.5, 102.5, 20),
            phase(None, Some(8.0), 100.5, 102.5, 500),
        ]);
        let p = judge(&b, Some(&s));
        assert_eq!(status_of(&p[0], "T8"), Status::NotApplicable);
        assert!(p[0].checks[1].message.contains("4 requests/s"));
        assert_eq!(status_of(&p[0], "T15"), Status::Pass);
        assert_eq!(status_of(&p[1], "T15"), Status::Warn);
        assert_eq!(p[1].asked, "8 requests/s");
    }
}
