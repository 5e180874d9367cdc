//! Sweeps are phases: a load-tool result holding several benchmarks (a GuideLLM sweep, a
//! list of concurrencies) is cut into phases by each benchmark's own start and end against
//! the series clock, and each phase gets its own T1, T8, T9, T10 and T15 (`rules`) and a
//! row of the phase table. A phase the series does not cover is "can't tell" with the
//! reason, never a pass. A result of one benchmark has no phases.

mod rules;
mod window;

use serde::Serialize;

use crate::bench::{BenchResult, Phase};
use crate::verdict::{CheckResult, Status};

pub use rules::Context;

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

/// What the phases are read against.
pub struct PhaseInputs<'a> {
    pub bench: &'a BenchResult,
    pub series: Option<&'a crate::series::Series>,
    /// Why there is no series to read, when there is none (its input error, the server
    /// down before the load).
    pub no_series: Option<String>,
    pub cx: Context<'a>,
}

/// One verdict per phase of a sweep; empty when the result holds one benchmark.
pub fn judge_all(inputs: &PhaseInputs<'_>) -> Vec<PhaseVerdict> {
    if !inputs.bench.is_sweep() {
        return Vec::new();
    }
    let t0 = inputs.series.and_then(|s| s.rows.first()).map(|r| r.t_wall);
    inputs
        .bench
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| judge_one(i + 1, p, inputs, t0))
        .collect()
}

fn judge_one(
    index: usize,
    phase: &Phase,
    inputs: &PhaseInputs<'_>,
    t0: Option<f64>,
) -> PhaseVerdict {
    let on_axis = |t: Option<f64>| Some(t? - t0?);
    let mut ran = None;
    let checks = match (inputs.series, phase.start_wall.zip(phase.end_wall)) {
        (None, _) => rules::unknown_all(&format!(
            "the phase's window can't be read: {}",
            inputs
                .no_series
                .as_deref()
                .unwrap_or("the folder has no gauge series")
        )),
        (Some(_), None) => rules::unknown_all(&format!(
            "{}'s result gives no start and end time for this phase, so its window on the \
             series is unknown",
            inputs.cx.tool
        )),
        (Some(series), Some((start, end))) => match window::cut(series, start, end) {
            Err(why) => rules::unknown_all(&why),
            Ok(w) => {
                ran = w.inner.peak_running();
                rules::judge(phase, &w, &inputs.cx)
            }
        },
    };
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
