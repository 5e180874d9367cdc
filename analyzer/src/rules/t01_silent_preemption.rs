//! T1: requests evicted from the KV cache and recomputed, counted or logged per engine
//! (checks.md §2).

use crate::bootlog::BootFacts;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::plural;
use crate::plausible;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

pub fn check(
    engine: Engine,
    pair: &Pair<'_>,
    series: Option<&Series>,
    facts: Option<&BootFacts>,
) -> CheckResult {
    let m = engine.metrics();
    match m.evictions {
        Some(counter) => with_counter(engine, counter, m.evictions_witness, pair),
        None => trtllm(engine, series, facts),
    }
}

fn with_counter(
    engine: Engine,
    counter: &str,
    witness: Option<&str>,
    pair: &Pair<'_>,
) -> CheckResult {
    let base = |status, msg: String| {
        CheckResult::new(Tripwire::SilentPreemption, status, msg)
            .with("engine", engine.key())
            .with("series", counter)
    };
    if let Some(bad) = pair.implausible(&[counter]) {
        return base(Status::Unknown, plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    match pair.delta(counter, &[], witness) {
        Err(restart) => {
            let mut r =
                CheckResult::new(Tripwire::SilentPreemption, Status::Fail, restart.describe());
            r.evidence = restart.evidence();
            r
        }
        Ok(n) => from_count(engine, counter, n, "a snapshot"),
    }
}

/// T1 from the eviction counter's increase over the run; `None` when `missing_from` (a
/// snapshot, AIPerf's scrape) lacks the counter.
pub fn from_count(
    engine: Engine,
    counter: &str,
    n: Option<f64>,
    missing_from: &str,
) -> CheckResult {
    let word = engine.eviction_word();
    let base = |status, msg: String| {
        CheckResult::new(Tripwire::SilentPreemption, status, msg)
            .with("engine", engine.key())
            .with("series", counter)
    };
    match n {
        None => base(
            Status::Unknown,
            format!(
                "{counter} is missing from {missing_from}, so {word}s during the run cannot \
                 be ruled out"
            ),
        ),
        Some(n) if n > 0.0 => {
            let mut msg = format!("{} during the run", plural(n, word));
            match engine {
                Engine::Sglang => msg.push_str(
                    " (SGLang also logs a warning for each: \"KV cache pool is full. Retract requests.\")",
                ),
                Engine::Vllm => msg.push_str(" (vLLM writes no log line for them)"),
                Engine::Trtllm => {}
            }
            base(Status::Fail, msg).with("preemptions", n)
        }
        Some(_) => base(Status::Pass, format!("no {word}s during the run")).with("preemptions", 0),
    }
}

/// TensorRT-LLM counts no pauses; read them from its log, else from the paused gauge.
fn trtllm(engine: Engine, series: Option<&Series>, facts: Option<&BootFacts>) -> CheckResult {
    let gauge = engine
        .metrics()
        .paused
        .unwrap_or("trtllm_num_paused_requests");
    let base = |status, msg: String| {
        CheckResult::new(Tripwire::SilentPreemption, status, msg)
            .with("engine", engine.key())
            .with("series", gauge)
    };
    if let Some(f) = facts {
        if let Some(pauses) = f.pauses {
            let served = f.served_in_log.unwrap_or(0);
            let r = if pauses > 0 {
                base(
                    Status::Fail,
                    format!(
                        "{} paused for recompute, counted from the server log ({served} \
                         answered requests in it); TensorRT-LLM's metrics count none",
                        if pauses == 1 {
                            "1 request was".to_string()
                        } else {
                            format!("{pauses} requests were")
                        }
                    ),
                )
            } else {
                base(
                    Status::Pass,
                    format!("no pause in the server log, which covers {served} answered requests"),
                )
            };
            return r
                .with("paused_in_log", pauses)
                .with("served_in_log", served)
                .with("preemptions", pauses);
        }
    }
    if let Some(bad) = series.and_then(|s| s.implausible_in(&[column::PAUSED])) {
        return base(Status::Unknown, plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    let seen: Vec<f64> = series
        .map(|s| s.rows.values(Field::Paused).flatten().collect())
        .unwrap_or_default();
    if seen.is_empty() {
        return base(
            Status::Unknown,
            "TensorRT-LLM counts no pauses and logs each one at INFO: the server log saved \
             until after the run is needed to tell"
                .into(),
        );
    }
    let with_paused = seen.iter().filter(|&&v| v > 0.0).count();
    let max = seen.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let n = seen.len();
    let add = |r: CheckResult| {
        r.with("readings", n)
            .with("readings_with_paused", with_paused)
            .with("paused_max", max)
    };
    if with_paused > 0 {
        return add(base(
            Status::Fail,
            format!(
                "paused requests seen in {with_paused} of {n} readings, up to {} at once; the \
                 exact count is unknown without the server log",
                crate::num::shortest(max)
            ),
        ));
    }
    let policy = facts.and_then(BootFacts::capacity_scheduler_policy);
    if policy == Some("GUARANTEED_NO_EVICT") {
        return add(base(
            Status::Pass,
            format!(
                "no paused request in {n} readings, and the GUARANTEED_NO_EVICT policy admits a \
                 request only when its whole output fits"
            ),
        ))
        .with("capacity_scheduler_policy", "GUARANTEED_NO_EVICT");
    }
    add(base(
        Status::Unknown,
        format!(
            "no paused request in {n} readings, but the gauge moves only when a request \
             completes, so a pause between readings cannot be ruled out without the server log"
        ),
    ))
}
