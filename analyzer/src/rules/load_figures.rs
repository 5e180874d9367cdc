//! T8 and T15 when the load's own figures are missing: the load tool is not one inferlint
//! reads, or its result file is not there, or it asked for a rate rather than a
//! concurrency. Never left out: each says "can't tell" and names the flag of
//! `inferlint analyze` that decides it (`--requested N`, `--bench-result FILE`).

use serde::Serialize;

use crate::bench::BenchResult;
use crate::input::InputError;
use crate::manifest::Manifest;
use crate::num::shortest;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::Series;

/// The flag that gives T8 its requested concurrency.
pub const REQUESTED_FLAG: &str = "--requested N";
/// The flag that gives T15 the load tool's counts.
pub const BENCH_RESULT_FLAG: &str = "--bench-result FILE";
/// The result files inferlint reads, for messages.
pub const RESULT_FORMATS: &str = "vllm bench serve's, SGLang's or TensorRT-LLM's result, \
     GuideLLM's JSON report (benchmarks.json) or AIPerf's profile_export_aiperf.json";

/// T8 without the concurrency asked for: what the server reached, and what decides it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Undecided {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    pub peak_running: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decide_with: Option<&'static str>,
}

/// T15 without the load tool's counts: the flag that decides it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecideWith {
    pub decide_with: &'static str,
}

/// The load tool's result could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnusableResult {
    pub input_error: String,
    pub decide_with: &'static str,
}

/// Why the folder holds no load-tool result, from the recorder's manifest.
fn why_no_result(manifest: Option<&Manifest>) -> String {
    match manifest {
        Some(m) if m.load_unrecognised && m.load_given => format!(
            "the load command ({}) is not a client inferlint recognises",
            m.load_program.as_deref().unwrap_or("?")
        ),
        Some(m) if m.load_given => "the load tool left no result file in the folder".into(),
        _ => "the folder holds no load-tool result".into(),
    }
}

/// T8 with no requested concurrency. A rate-based load asked for none: "does not apply",
/// with the concurrency the server reached against the rate. Otherwise "can't tell".
pub fn t8(
    series: &Series,
    bench: Option<&BenchResult>,
    manifest: Option<&Manifest>,
) -> CheckResult {
    let peak = series.peak_running();
    let reached = peak
        .map(|p| format!("the server ran up to {} at once", shortest(p)))
        .unwrap_or_else(|| "the recording has no running-requests readings".into());
    if let Some(b) = bench {
        if let Some(rate) = b.request_rate {
            let sweep = b
                .sweep_phrase()
                .map(|s| format!(", {s}"))
                .unwrap_or_default();
            return CheckResult::new(
                Tripwire::ConcurrencyNotReached,
                Status::NotApplicable,
                format!(
                    "{} sent a rate-based load ({} requests/s{sweep}), which asks for no \
                     concurrency; {reached}",
                    b.tool_name(),
                    shortest(rate)
                ),
            )
            .found(Undecided {
                request_rate: Some(rate),
                peak_running: peak,
                decide_with: None,
            });
        }
    }
    let why = match bench {
        Some(b) => match b.sweep_phrase() {
            Some(s) => format!("{} ran {s} that mixes concurrency and rates", b.tool_name()),
            None => format!("{}'s result does not say", b.tool_name()),
        },
        None => why_no_result(manifest),
    };
    CheckResult::new(
        Tripwire::ConcurrencyNotReached,
        Status::Unknown,
        format!(
            "how many requests the load kept open at once is unknown ({why}); {reached}; \
             `inferlint analyze RUN {REQUESTED_FLAG}` decides it"
        ),
    )
    .found(Undecided {
        request_rate: None,
        peak_running: peak,
        decide_with: Some(REQUESTED_FLAG),
    })
}

/// T15 with no load-tool result to compare the server's counters with.
pub fn t15(manifest: Option<&Manifest>) -> CheckResult {
    CheckResult::new(
        Tripwire::ClientServerMismatch,
        Status::Unknown,
        format!(
            "no load-tool counts to compare with the server's ({}); \
             `inferlint analyze RUN {BENCH_RESULT_FLAG}` decides it with {RESULT_FORMATS}",
            why_no_result(manifest)
        ),
    )
    .found(DecideWith {
        decide_with: BENCH_RESULT_FLAG,
    })
}

/// T8 when the load tool's result is unusable: can't tell, and the flag that decides it.
pub fn unusable_result(tripwire: Tripwire, e: &InputError) -> CheckResult {
    CheckResult::new(tripwire, Status::Unknown, format!("unusable input: {e}")).found(
        UnusableResult {
            input_error: e.to_string(),
            decide_with: REQUESTED_FLAG,
        },
    )
}

/// The flag of `inferlint analyze` that decides a T8 or T15 that can't tell for want of
/// the load's own figures.
pub fn decide_with(r: &CheckResult) -> Option<&'static str> {
    r.finding::<Undecided>()
        .and_then(|u| u.decide_with)
        .or_else(|| r.finding::<DecideWith>().map(|d| d.decide_with))
        .or_else(|| r.finding::<UnusableResult>().map(|u| u.decide_with))
}

/// A sweep judged against its highest concurrency says so; each phase is judged on its
/// own in the phase table (`phases`).
pub fn note_sweep(r: &mut CheckResult, bench: Option<&BenchResult>) {
    if let Some(s) = bench.and_then(BenchResult::sweep_phrase) {
        r.message.push_str(&format!(
            "; the load was {s}, judged here against the highest and phase by phase in \
             the phase table"
        ));
        r.set("phases", bench.map_or(0, |b| b.phases.len()) as i64);
    }
}
