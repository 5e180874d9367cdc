//! T1: requests evicted from the KV cache and recomputed, counted or logged per engine
//! (docs/tripwires.md#t1).

use crate::bench::aiperf_server::{Reading, Seen};
use crate::bootlog::BootFacts;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::{plural, shortest};
use crate::plausible;
use crate::rules::absent::Judged;
use crate::rules::scope::{FleetScope, PhaseScope, ReplicaScope, RunScope, ScrapeScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::window::Edges;
use crate::series::{column, Field, Series};

const T1: Tripwire = Tripwire::SilentPreemption;

/// The whole run: the eviction counter between the snapshots (TensorRT-LLM: the log, else
/// the paused gauge).
pub fn run(cx: &RunScope<'_>) -> Judged {
    Ok(check(
        cx.snapshot_engine,
        cx.pair.need()?,
        cx.series.present(),
        cx.facts,
    ))
}

/// One replica, on its own snapshots.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    Ok(check(cx.engine, cx.pair.need()?, cx.series.present(), None))
}

/// One phase: evictions between the readings bracketing it; when there are some, between
/// the readings inside it too, since only those are surely this phase's.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let w = cx.window.need()?;
    let engine = cx.engine;
    if engine.metrics().evictions.is_none() {
        // TensorRT-LLM: its paused gauge over the phase's own readings.
        return Ok(check(
            engine,
            &Edges::new(engine, &w.before, &w.after).pair(),
            Some(&w.inner),
            None,
        ));
    }
    let outer = Edges::new(engine, &w.before, &w.after);
    let r = check(engine, &outer.pair(), None, None);
    if r.status != Status::Fail || r.evidence("restarted").is_some() {
        return Ok(r);
    }
    let inner = w
        .inner_ends()
        .map(|(a, b)| check(engine, &Edges::new(engine, &a, &b).pair(), None, None));
    if let Some(i) = inner.filter(|i| i.status == Status::Fail) {
        return Ok(i);
    }
    let n = r
        .evidence("preemptions")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    Ok(CheckResult::new(
        T1,
        Status::Unknown,
        format!(
            "{} in the sampling interval at the phase's edge, none between the readings inside \
             it: the series, read {}, can't tell whether they fell in this phase or beside it",
            plural(n, engine.eviction_word()),
            PhaseScope::resolution(&w.inner)
        ),
    )
    .with("preemptions_at_edge", n))
}

/// The fleet: from each replica's own T1, a fail naming every replica that preempted.
pub fn fleet(cx: &FleetScope<'_>) -> Judged {
    let mut preempted = Vec::new();
    let mut unknown = Vec::new();
    let mut total = 0.0;
    for (rep, results) in cx.replicas.iter().zip(cx.replica_results) {
        let own = results.iter().find(|c| c.tripwire == T1);
        let id = rep.id;
        match own.map(|r| (r.status, r.evidence("preemptions").and_then(|v| v.as_f64()))) {
            Some((Status::Fail, n)) => {
                total += n.unwrap_or(0.0);
                preempted.push(match n {
                    Some(n) => format!("{id} ({})", shortest(n)),
                    None => id.to_string(),
                });
            }
            Some((Status::Pass, n)) => total += n.unwrap_or(0.0),
            _ => unknown.push(id),
        }
    }
    let count = cx.replicas.len();
    let mut r = CheckResult::new(T1, Status::Pass, String::new()).with("replicas", count);
    if !preempted.is_empty() {
        r.status = Status::Fail;
        r.message = format!(
            "{} of {count} replicas preempted during the run: {}",
            preempted.len(),
            preempted.join(", ")
        );
        r.set("preempted", preempted.join(", "));
    } else if !unknown.is_empty() {
        r.status = Status::Unknown;
        r.message = format!(
            "no replica is known to have preempted, but {} can't tell: {}",
            if unknown.len() == 1 { "one" } else { "some" },
            unknown.join(", ")
        );
    } else {
        r.message = format!("no preemptions on any of the {count} replicas");
        r.set("preemptions", total);
    }
    if !unknown.is_empty() {
        r.set("unknown", unknown.join(", "));
    }
    Ok(r)
}

/// From the eviction counter a load tool scraped (TensorRT-LLM, which counts none: its
/// paused gauge).
pub fn scrape(cx: &ScrapeScope<'_>) -> Judged {
    let (engine, s) = (cx.engine, cx.scrape);
    let m = engine.metrics();
    let Some(counter) = m.evictions else {
        let gauge = m.paused.unwrap_or("trtllm_num_paused_requests");
        let r = match cx.value_or(s.gauge_max(gauge), gauge) {
            Ok(max) if max > 0.0 => CheckResult::new(
                T1,
                Status::Fail,
                format!(
                    "paused requests seen in AIPerf's samples, up to {} at once; the exact count \
                     is unknown without the server log",
                    shortest(max)
                ),
            )
            .with("paused_max", max),
            _ => CheckResult::new(
                T1,
                Status::Unknown,
                "TensorRT-LLM counts no pauses and its paused gauge moves only when a request \
                 completes: the server log saved until after the run is needed to tell"
                    .to_string(),
            ),
        };
        return Ok(cx.sourced(
            r.with("engine", engine.key()).with("series", gauge),
            Seen::Gauge,
        ));
    };
    // The warm-up is part of the run: its preemptions count too.
    let (reading, seen) = if s.has_warmup() {
        (s.counter_with_warmup(counter), Seen::CountersWithWarmup)
    } else {
        (s.counter(counter), Seen::Counters)
    };
    let r = match reading {
        Reading::Refused(bad) => CheckResult::new(T1, Status::Unknown, plausible::cannot_tell(bad))
            .with("engine", engine.key())
            .with("series", counter)
            .with("implausible", bad.to_string()),
        Reading::Value(n) => from_count(engine, counter, Some(n), ""),
        // SGLang exports its counter only after the first retraction; the gauge beside it
        // says it reads 0.
        _ if m.evictions_witness.is_some_and(|w| s.has_gauge(w)) => {
            from_count(engine, counter, Some(0.0), "")
        }
        _ => from_count(engine, counter, None, &format!("{}'s scrape", s.tool)),
    };
    Ok(cx.sourced(r, seen))
}

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
        CheckResult::new(T1, status, msg)
            .with("engine", engine.key())
            .with("series", counter)
    };
    if let Some(bad) = pair.implausible(&[counter]) {
        return base(Status::Unknown, plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    match pair.delta(counter, &[], witness) {
        Err(restart) => {
            let mut r = CheckResult::new(T1, Status::Fail, restart.describe());
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
        CheckResult::new(T1, status, msg)
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
        CheckResult::new(T1, status, msg)
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
