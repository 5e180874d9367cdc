//! T1, T8 and T15 from AIPerf's own scrape of the server's `/metrics`
//! (`bench/aiperf_server.rs`), for a folder with no recording: an AIPerf artifact
//! directory alone. Each says it is at the resolution AIPerf sampled, and a value AIPerf
//! did not provide (or the gate refused) is "can't tell", never a pass.

use super::load_figures::{DECIDE_WITH, REQUESTED_FLAG};
use super::{
    t01_silent_preemption as t01_preemption, t15_client_server_mismatch as t15_client_server,
};
use crate::bench::aiperf_server::{AiperfServer, Reading, Seen};
use crate::bench::BenchResult;
use crate::engine::Engine;
use crate::num::shortest;
use crate::plausible::cannot_tell;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// The evidence key naming the scrape file.
pub const SCRAPE_FILE: &str = "scrape_file";

/// Where a result came from, in its message and evidence.
fn sourced(mut r: CheckResult, s: &AiperfServer, file: &str, seen: Seen) -> CheckResult {
    r.message = format!("{}, {}", r.message, s.resolution(seen));
    r.with(SCRAPE_FILE, file)
        .with("sampled_every_ms", s.interval_ms)
}

/// Why a reading decides nothing, or its value.
fn value_or<'a>(reading: Reading<'a>, name: &str, s: &AiperfServer) -> Result<f64, String> {
    match reading {
        Reading::Value(v) => Ok(v),
        Reading::Missing => Err(format!("{}'s scrape has no {name}", s.tool)),
        Reading::SeveralEndpoints(n) => Err(format!(
            "{}'s scrape has {name} from {n} endpoints, whose highest samples do not add up",
            s.tool
        )),
        Reading::Refused(bad) => Err(cannot_tell(bad)),
    }
}

/// T1 from the eviction counter AIPerf scraped (TensorRT-LLM, which counts none: its
/// paused gauge).
pub fn t1(engine: Engine, s: &AiperfServer, file: &str) -> CheckResult {
    let m = engine.metrics();
    let Some(counter) = m.evictions else {
        let gauge = m.paused.unwrap_or("trtllm_num_paused_requests");
        let r = match value_or(s.gauge_max(gauge), gauge, s) {
            Ok(max) if max > 0.0 => CheckResult::new(
                Tripwire::SilentPreemption,
                Status::Fail,
                format!(
                    "paused requests seen in AIPerf's samples, up to {} at once; the exact count \
                     is unknown without the server log",
                    shortest(max)
                ),
            )
            .with("paused_max", max),
            _ => CheckResult::new(
                Tripwire::SilentPreemption,
                Status::Unknown,
                "TensorRT-LLM counts no pauses and its paused gauge moves only when a request \
                 completes: the server log saved until after the run is needed to tell"
                    .to_string(),
            ),
        };
        return sourced(
            r.with("engine", engine.key()).with("series", gauge),
            s,
            file,
            Seen::Gauge,
        );
    };
    // The warm-up is part of the run: its preemptions count too.
    let (reading, seen) = if s.has_warmup() {
        (s.counter_with_warmup(counter), Seen::CountersWithWarmup)
    } else {
        (s.counter(counter), Seen::Counters)
    };
    let r = match reading {
        Reading::Refused(bad) => CheckResult::new(
            Tripwire::SilentPreemption,
            Status::Unknown,
            cannot_tell(bad),
        )
        .with("engine", engine.key())
        .with("series", counter)
        .with("implausible", bad.to_string()),
        Reading::Value(n) => t01_preemption::from_count(engine, counter, Some(n), ""),
        // SGLang exports its counter only after the first retraction; the gauge beside it
        // says it reads 0 (formats.md §4.5).
        _ if m.evictions_witness.is_some_and(|w| s.has_gauge(w)) => {
            t01_preemption::from_count(engine, counter, Some(0.0), "")
        }
        _ => t01_preemption::from_count(engine, counter, None, &format!("{}'s scrape", s.tool)),
    };
    sourced(r, s, file, seen)
}

/// T8 from the running gauge's highest sample against the requested concurrency.
pub fn t8(
    engine: Engine,
    s: &AiperfServer,
    file: &str,
    requested: Option<i64>,
    bench: Option<&BenchResult>,
) -> CheckResult {
    let m = engine.metrics();
    let peak = value_or(s.gauge_max(m.running), m.running, s);
    let waiting = value_or(s.gauge_max(m.waiting), m.waiting, s).ok();
    let reached = match &peak {
        Ok(p) => format!("the server ran up to {} at once", shortest(*p)),
        Err(why) => why.clone(),
    };
    let mut r = match (requested, bench.and_then(|b| b.request_rate)) {
        (None, Some(rate)) => CheckResult::new(
            Tripwire::ConcurrencyNotReached,
            Status::NotApplicable,
            format!(
                "{} sent a rate-based load ({} requests/s), which asks for no concurrency; \
                 {reached}",
                bench.map_or("the load tool", BenchResult::tool_name),
                shortest(rate)
            ),
        )
        .with("request_rate", rate),
        (None, None) => CheckResult::new(
            Tripwire::ConcurrencyNotReached,
            Status::Unknown,
            format!(
                "how many requests the load kept open at once is unknown; {reached}; \
                 `inferlint analyze RUN {REQUESTED_FLAG}` decides it"
            ),
        )
        .with(DECIDE_WITH, REQUESTED_FLAG),
        (Some(req), _) => judge_t8(engine, req, &peak).with("requested", req),
    };
    r.set("peak_running", peak.ok());
    r.set("peak_waiting", waiting);
    sourced(r, s, file, Seen::Gauge)
}

fn judge_t8(engine: Engine, requested: i64, peak: &Result<f64, String>) -> CheckResult {
    let peak = match peak {
        Ok(p) => *p,
        Err(why) => {
            return CheckResult::new(
                Tripwire::ConcurrencyNotReached,
                Status::Unknown,
                why.clone(),
            )
        }
    };
    if peak >= requested as f64 {
        return CheckResult::new(
            Tripwire::ConcurrencyNotReached,
            Status::Pass,
            format!(
                "the server ran up to {} requests at once, as many as the {requested} asked for",
                shortest(peak)
            ),
        );
    }
    if engine.gauges_lag() {
        return CheckResult::new(
            Tripwire::ConcurrencyNotReached,
            Status::Unknown,
            format!(
                "{requested} requested; AIPerf's samples never showed more than {} running, but \
                 {}'s gauge moves only when a request completes, so more may have run between \
                 samples",
                shortest(peak),
                engine.display()
            ),
        )
        .with("gauges_lag", true);
    }
    CheckResult::new(
        Tripwire::ConcurrencyNotReached,
        Status::Fail,
        format!(
            "{requested} requested, but the server never ran more than {} at once",
            shortest(peak)
        ),
    )
}

/// T15 from the finished-requests and generated-tokens counters AIPerf scraped, against
/// AIPerf's own counts. Its counters cover its measured window; after a warm-up, whose
/// requests still run as the measured window opens, both windows together against its
/// measured and warm-up counts.
pub fn t15(
    engine: Engine,
    s: &AiperfServer,
    file: &str,
    result: &BenchResult,
    result_file: &str,
) -> CheckResult {
    let m = engine.metrics();
    if let Some(bad) = result.implausible.first() {
        let r = CheckResult::new(
            Tripwire::ClientServerMismatch,
            Status::Unknown,
            cannot_tell(bad),
        )
        .with("implausible", bad.to_string())
        .with("result_file", result_file);
        return sourced(r, s, file, Seen::Counters);
    }
    let warmup = result.untimed.filter(|_| s.has_warmup());
    let counts = [m.requests_finished, m.generation_tokens].map(|name| match warmup {
        Some(_) => s.counter_with_warmup(name),
        None => s.counter(name),
    });
    if let Some(Reading::Refused(bad)) = counts
        .iter()
        .find(|c| matches!(c, Reading::Refused(_)))
        .copied()
    {
        let r = CheckResult::new(
            Tripwire::ClientServerMismatch,
            Status::Unknown,
            cannot_tell(bad),
        )
        .with("implausible", bad.to_string())
        .with("result_file", result_file);
        return sourced(r, s, file, Seen::Counters);
    }
    let [done, tokens] = counts.map(|c| match c {
        Reading::Value(v) => Some(v),
        _ => None,
    });
    let missing = format!(
        "a server counter ({} or {}) is missing from {}'s scrape",
        m.requests_finished, m.generation_tokens, s.tool
    );
    let mut r = t15_client_server::compare(
        done,
        tokens,
        missing,
        result,
        result_file,
        warmup.unwrap_or(0),
    );
    if warmup.is_none() {
        return sourced(r, s, file, Seen::Counters);
    }
    r.set("with_warmup_window", true);
    sourced(r, s, file, Seen::CountersWithWarmup)
}
