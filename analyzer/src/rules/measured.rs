//! When T16–T18 run and what each is given (checks/README.md, "When they run"): all three
//! concern the measured load, so they run when the input holds one (a recording, both
//! readings, GPU samples or a load-tool result) and come after T8, in number order. A
//! missing input makes its check "can't tell", never a pass; on a folder the recorder did
//! not make, a T16 or T18 only its captures could decide is listed as not checked.

use crate::bench::key::{COMPLETED, DURATION, TOTAL_INPUT_TOKENS};
use crate::bench::BenchResult;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::gpu_samples::GpuSamples;
use crate::input::InputError;
use crate::inputs::RunInput;
use crate::manifest::Manifest;
use crate::plausible;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::Series;

use super::t18_warm_up_in_window::{self as t18_warm_up, WarmUpInputs};
use super::{t16_gpu_throttled, t17_prefix_cache_hits as t17_prefix_cache};

/// What the three checks draw on, parsed once by the analysis.
pub struct Measured<'a> {
    pub input: &'a RunInput,
    /// The engine of the snapshots (T17's counters).
    pub snapshot_engine: Engine,
    /// The engine of the report (T18's log markers).
    pub engine: Engine,
    pub gpu: Option<&'a Result<GpuSamples, InputError>>,
    pub pair: Option<&'a Pair<'a>>,
    /// The error that stands in for a missing pair.
    pub pair_error: Option<&'a InputError>,
    /// Why the pair is missing when the run broke before its second snapshot.
    pub pair_missing: Option<&'a str>,
    pub series: Option<&'a Series>,
    pub bench: Option<&'a BenchResult>,
    pub manifest: Option<&'a Manifest>,
    pub requested: Option<i64>,
    /// Requests the load tool sent outside its measurement (from `load.log`, as for T15).
    pub untimed: i64,
}

/// Whether the input holds a measured load.
pub fn applies(input: &RunInput) -> bool {
    input.series.is_some() || input.before.is_some() || input.gpu.is_some() || input.bench.is_some()
}

/// Whether `inferlint-recorder record` made the folder (it always writes a manifest). Only
/// it samples the GPU and marks the load in the boot log, so on a folder from elsewhere
/// (the reference's `xray`, a hand-made folder) a T16 or T18 that those captures alone
/// could decide is left out and listed as not checked, as checks.md §8 does for T2; the
/// folder's exit status then stays what its own inputs give (formats.md §8.3).
fn recorded_by_inferlint(input: &RunInput) -> bool {
    input.manifest.is_some()
}

/// T16, T17 (with both readings) and T18, in that order.
pub fn run(m: &Measured<'_>) -> Vec<CheckResult> {
    let ours = recorded_by_inferlint(m.input);
    let mut out = Vec::new();
    match m.gpu {
        Some(Ok(samples)) => out.push(t16_gpu_throttled::check(samples)),
        Some(Err(e)) => out.push(crate::analysis::unknown_for(Tripwire::GpuThrottled, e)),
        None if ours => out.push(t16_gpu_throttled::without_samples()),
        None => {}
    }
    match (m.pair, m.pair_error) {
        (Some(pair), _) => {
            let untimed = t17_prefix_cache::Untimed {
                requests: m.untimed,
                prompt_tokens: m.bench.and_then(|b| {
                    Some(b.total_input_tokens? as f64 / b.completed.filter(|&c| c > 0)? as f64)
                }),
                refused: m.bench.and_then(|b| {
                    plausible::first(&b.implausible, &[TOTAL_INPUT_TOKENS, COMPLETED])
                }),
            };
            out.push(t17_prefix_cache::check(m.snapshot_engine, pair, untimed));
        }
        (None, Some(e)) => out.push(crate::analysis::unknown_for(Tripwire::PrefixCacheHits, e)),
        (None, None) => out.extend(
            m.pair_missing
                .map(|why| crate::analysis::missing_for(Tripwire::PrefixCacheHits, why)),
        ),
    }
    let log_during_load = m
        .manifest
        .and_then(|mf| mf.boot_log_at)
        .and_then(|at| Some((at.load_start?, at.load_end)))
        .and_then(|(from, to)| {
            let log = m.input.boot_logs.first()?.bytes.as_ref().ok()?;
            Some(t18_warm_up::log_between(log, from, to))
        });
    let client_warm_up = m
        .input
        .load_log
        .as_ref()
        .and_then(|f| f.bytes.as_ref().ok())
        .is_some_and(|b| crate::bench::client_warm_up(&String::from_utf8_lossy(b)));
    let t18 = t18_warm_up::check(&WarmUpInputs {
        engine: m.engine,
        requests: m.bench.and_then(|b| b.requests.as_ref()),
        requested: m.requested,
        duration_s: m.bench.and_then(|b| b.duration),
        duration_refused: m
            .bench
            .and_then(|b| plausible::first(&b.implausible, &[DURATION])),
        series: m.series,
        load_ended_wall: m.manifest.and_then(|mf| mf.load_ended_wall),
        log_during_load: log_during_load.as_deref(),
        client_warm_up,
    });
    // A refused number in the result is always shown: it is the input's fault, not a
    // capture the folder never had.
    let refused = m.bench.is_some_and(|b| !b.implausible.is_empty());
    if ours || refused || t18.status != Status::Unknown {
        out.push(t18);
    }
    out
}
