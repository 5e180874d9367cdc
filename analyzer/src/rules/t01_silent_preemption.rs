//! T1: requests evicted from the KV cache and recomputed, counted or logged per engine
//! (docs/tripwires.md#t1).

use serde::Serialize;

use crate::bench::aiperf_server::{Reading, Seen};
use crate::bootlog::BootFacts;
use crate::counters::{Pair, RestartEvidence};
use crate::engine::Engine;
use crate::json::Number;
use crate::num::{plural, shortest};
use crate::plausible::{self, Implausible};
use crate::rules::absent::Judged;
use crate::rules::scope::window::Edges;
use crate::rules::scope::{FleetScope, PhaseScope, ReplicaScope, RunScope, ScrapeScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

const T1: Tripwire = Tripwire::SilentPreemption;

/// What one server's evictions were read from, and how many there were.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evictions {
    /// The engine's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<&'static str>,
    /// The counter (or TensorRT-LLM's paused gauge) read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// A refused value that stopped the count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// TensorRT-LLM: pauses the server log counted, and the requests it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_in_log: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_in_log: Option<i64>,
    /// Evictions during the run, when counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<Number>,
    /// TensorRT-LLM without its log: the paused gauge's readings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readings: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readings_with_paused: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_scheduler_policy: Option<&'static str>,
}

/// Evictions a phase's bracketing readings show but its inner readings do not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtPhaseEdge {
    pub preemptions_at_edge: f64,
}

/// A fleet's evictions, replica by replica.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetEvictions {
    pub replicas: usize,
    /// The replicas that preempted, with their counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preempted: Option<String>,
    /// The fleet's total, when none preempted and every replica is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<f64>,
    /// The replicas that can't tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// The evictions a T1 result counted (a single server's or a fleet's total), when it
/// counted them.
pub fn preemptions(r: &CheckResult) -> Option<f64> {
    if r.tripwire != T1 {
        return None;
    }
    r.finding::<Evictions>()
        .and_then(|e| e.preemptions.map(Number::as_f64))
        .or_else(|| r.finding::<FleetEvictions>().and_then(|f| f.preemptions))
}

/// Whether a T1 result stopped at a restart of the server between its readings.
pub fn restarted(r: &CheckResult) -> bool {
    r.finding::<RestartEvidence>().is_some()
}

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
    if r.status != Status::Fail || restarted(&r) {
        return Ok(r);
    }
    let inner = w
        .inner_ends()
        .map(|(a, b)| check(engine, &Edges::new(engine, &a, &b).pair(), None, None));
    if let Some(i) = inner.filter(|i| i.status == Status::Fail) {
        return Ok(i);
    }
    let n = preemptions(&r).unwrap_or(0.0);
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
    .found(AtPhaseEdge {
        preemptions_at_edge: n,
    }))
}

/// The fleet: from each replica's own T1, a fail naming every replica that preempted.
pub fn fleet(cx: &FleetScope<'_>) -> Judged {
    let mut preempted = Vec::new();
    let mut unknown = Vec::new();
    let mut total = 0.0;
    for (rep, results) in cx.replicas.iter().zip(cx.replica_results) {
        let own = results.iter().find(|c| c.tripwire == T1);
        let id = rep.id;
        match own.map(|r| (r.status, preemptions(r))) {
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
    let mut e = FleetEvictions {
        replicas: count,
        unknown: (!unknown.is_empty()).then(|| unknown.join(", ")),
        ..FleetEvictions::default()
    };
    let (status, message) = if !preempted.is_empty() {
        e.preempted = Some(preempted.join(", "));
        (
            Status::Fail,
            format!(
                "{} of {count} replicas preempted during the run: {}",
                preempted.len(),
                preempted.join(", ")
            ),
        )
    } else if !unknown.is_empty() {
        (
            Status::Unknown,
            format!(
                "no replica is known to have preempted, but {} can't tell: {}",
                if unknown.len() == 1 { "one" } else { "some" },
                unknown.join(", ")
            ),
        )
    } else {
        e.preemptions = Some(total);
        (
            Status::Pass,
            format!("no preemptions on any of the {count} replicas"),
        )
    };
    Ok(CheckResult::new(T1, status, message).found(e))
}

/// From the eviction counter a load tool scraped (TensorRT-LLM, which counts none: its
/// paused gauge).
pub fn scrape(cx: &ScrapeScope<'_>) -> Judged {
    let (engine, s) = (cx.engine, cx.scrape);
    let m = engine.metrics();
    let Some(counter) = m.evictions else {
        let gauge = m.paused.unwrap_or("trtllm_num_paused_requests");
        let mut e = Evictions::read_from(engine, gauge);
        let r = match cx.value_or(s.gauge_max(gauge), gauge) {
            Ok(max) if max > 0.0 => {
                e.paused_max = Some(max);
                CheckResult::new(
                    T1,
                    Status::Fail,
                    format!(
                        "paused requests seen in AIPerf's samples, up to {} at once; the exact \
                         count is unknown without the server log",
                        shortest(max)
                    ),
                )
            }
            _ => CheckResult::new(
                T1,
                Status::Unknown,
                "TensorRT-LLM counts no pauses and its paused gauge moves only when a request \
                 completes: the server log saved until after the run is needed to tell"
                    .to_string(),
            ),
        };
        return Ok(cx.sourced(r.found(e), Seen::Gauge));
    };
    // The warm-up is part of the run: its preemptions count too.
    let (reading, seen) = if s.has_warmup() {
        (s.counter_with_warmup(counter), Seen::CountersWithWarmup)
    } else {
        (s.counter(counter), Seen::Counters)
    };
    let r = match reading {
        Reading::Refused(bad) => refused(engine, counter, bad),
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
    if let Some(bad) = pair.implausible(&[counter]) {
        return refused(engine, counter, bad);
    }
    match pair.delta(counter, &[], witness) {
        Err(restart) => {
            CheckResult::new(T1, Status::Fail, restart.describe()).found(restart.evidence())
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
    let read = Evictions::read_from(engine, counter);
    let base = |status, msg: String, preemptions: Option<Number>| {
        CheckResult::new(T1, status, msg).found(Evictions {
            preemptions,
            ..read.clone()
        })
    };
    match n {
        None => base(
            Status::Unknown,
            format!(
                "{counter} is missing from {missing_from}, so {word}s during the run cannot \
                 be ruled out"
            ),
            None,
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
            base(Status::Fail, msg, Some(Number::Float(n)))
        }
        Some(_) => base(
            Status::Pass,
            format!("no {word}s during the run"),
            Some(Number::Int(0)),
        ),
    }
}

/// TensorRT-LLM counts no pauses; read them from its log, else from the paused gauge.
fn trtllm(engine: Engine, series: Option<&Series>, facts: Option<&BootFacts>) -> CheckResult {
    let gauge = engine
        .metrics()
        .paused
        .unwrap_or("trtllm_num_paused_requests");
    let read = Evictions::read_from(engine, gauge);
    if let Some(pauses) = facts.and_then(|f| f.pauses) {
        let served = facts.and_then(|f| f.served_in_log).unwrap_or(0);
        let (status, message) = if pauses > 0 {
            (
                Status::Fail,
                format!(
                    "{} paused for recompute, counted from the server log ({served} answered \
                     requests in it); TensorRT-LLM's metrics count none",
                    if pauses == 1 {
                        "1 request was".to_string()
                    } else {
                        format!("{pauses} requests were")
                    }
                ),
            )
        } else {
            (
                Status::Pass,
                format!("no pause in the server log, which covers {served} answered requests"),
            )
        };
        return CheckResult::new(T1, status, message).found(Evictions {
            paused_in_log: Some(pauses),
            served_in_log: Some(served),
            preemptions: Some(Number::Int(pauses)),
            ..read
        });
    }
    if let Some(bad) = series.and_then(|s| s.implausible_in(&[column::PAUSED])) {
        return refused(engine, gauge, bad);
    }
    let seen: Vec<f64> = series
        .map(|s| s.rows.values(Field::Paused).flatten().collect())
        .unwrap_or_default();
    if seen.is_empty() {
        return CheckResult::new(
            T1,
            Status::Unknown,
            "TensorRT-LLM counts no pauses and logs each one at INFO: the server log saved \
             until after the run is needed to tell",
        )
        .found(read);
    }
    let with_paused = seen.iter().filter(|&&v| v > 0.0).count();
    let max = seen.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let n = seen.len();
    let mut e = Evictions {
        readings: Some(n),
        readings_with_paused: Some(with_paused),
        paused_max: Some(max),
        ..read
    };
    let (status, message) = if with_paused > 0 {
        (
            Status::Fail,
            format!(
                "paused requests seen in {with_paused} of {n} readings, up to {} at once; the \
                 exact count is unknown without the server log",
                crate::num::shortest(max)
            ),
        )
    } else if facts.and_then(BootFacts::capacity_scheduler_policy) == Some("GUARANTEED_NO_EVICT") {
        e.capacity_scheduler_policy = Some("GUARANTEED_NO_EVICT");
        (
            Status::Pass,
            format!(
                "no paused request in {n} readings, and the GUARANTEED_NO_EVICT policy admits a \
                 request only when its whole output fits"
            ),
        )
    } else {
        (
            Status::Unknown,
            format!(
                "no paused request in {n} readings, but the gauge moves only when a request \
                 completes, so a pause between readings cannot be ruled out without the server \
                 log"
            ),
        )
    };
    CheckResult::new(T1, status, message).found(e)
}

/// A refused value in what the count reads: can't tell.
fn refused(engine: Engine, series: &str, bad: &Implausible) -> CheckResult {
    CheckResult::new(T1, Status::Unknown, plausible::cannot_tell(bad)).found(Evictions {
        implausible: Some(bad.to_string()),
        ..Evictions::read_from(engine, series)
    })
}

impl Evictions {
    /// Read from `series` of `engine`, nothing counted yet.
    fn read_from(engine: Engine, series: &str) -> Evictions {
        Evictions {
            engine: Some(engine.key()),
            series: Some(series.to_string()),
            ..Evictions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputError;
    use crate::rules::absent::{settle, Gap, Input};
    use crate::rules::testing::{said, series, snapshot, Folder};
    use crate::series::Row;

    fn vllm(preemptions: Option<f64>, wall: f64) -> crate::snapshot::Snapshot {
        let text = preemptions.map_or(String::new(), |n| {
            format!("vllm:num_preemptions_total{{engine=\"0\"}} {n}\n")
        });
        snapshot(&text, wall)
    }

    #[test]
    fn no_eviction_passes_and_counts_zero() {
        let (b, a) = (vllm(Some(3.0), 10.0), vllm(Some(3.0), 70.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &a), None, None);
        assert_eq!(said(&r), (Status::Pass, "no preemptions during the run"));
        assert_eq!(preemptions(&r), Some(0.0));
        assert_eq!(r.finding::<Evictions>().unwrap().engine, Some("vllm"));
    }

    #[test]
    fn evictions_fail_with_their_count() {
        let (b, a) = (vllm(Some(0.0), 10.0), vllm(Some(22.0), 70.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &a), None, None);
        assert_eq!(r.status, Status::Fail);
        assert!(
            r.message.starts_with("22 preemptions during the run"),
            "{}",
            r.message
        );
        assert!(r.message.contains("no log line"), "{}", r.message);
        assert_eq!(preemptions(&r), Some(22.0));
        assert_eq!(
            r.evidence_value("preemptions"),
            Some(crate::json::Json::Float(22.0))
        );
    }

    #[test]
    fn a_missing_counter_or_a_restart_cannot_pass() {
        let (b, a) = (vllm(None, 10.0), vllm(Some(5.0), 70.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &a), None, None);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("is missing from a snapshot"),
            "{}",
            r.message
        );
        assert_eq!(preemptions(&r), None);
        // A counter that went down: the server restarted between the readings.
        let (b, a) = (vllm(Some(9.0), 10.0), vllm(Some(2.0), 70.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &a), None, None);
        assert!(restarted(&r), "{r:?}");
        assert_ne!(r.status, Status::Pass);
    }

    #[test]
    fn trtllm_reads_its_paused_gauge() {
        let paused = |p: f64| Row {
            paused: Some(p),
            ..Row::default()
        };
        let s = series(Engine::Trtllm, vec![paused(0.0), paused(2.0), paused(0.0)]);
        let (b, a) = (snapshot("", 10.0), snapshot("", 12.0));
        let r = check(Engine::Trtllm, &Pair::new(&b, &a), Some(&s), None);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        let e = r.finding::<Evictions>().unwrap();
        assert_eq!(
            (e.readings, e.readings_with_paused, e.paused_max),
            (Some(3), Some(1), Some(2.0))
        );
        // No readings at all: the log would be needed.
        let r = check(Engine::Trtllm, &Pair::new(&b, &a), None, None);
        assert_eq!(r.status, Status::Unknown);
        assert!(r.message.contains("server log"), "{}", r.message);
    }

    #[test]
    fn the_run_scope_says_an_absent_pair_one_way() {
        let folder = Folder::default();
        let mut cx = folder.scope();
        assert_eq!(settle(T1, run(&cx)), None, "not given: no result");
        cx.pair = Input::Missing(Gap::Run("no snapshot after the load".into()));
        let r = settle(T1, run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (Status::Unknown, "can't tell: no snapshot after the load")
        );
        let e = InputError::new("after.snapshot.json", Some(3), "not JSON");
        cx.pair = Input::Unusable(&e);
        let r = settle(T1, run(&cx)).unwrap();
        assert!(
            r.message
                .starts_with("unusable input: after.snapshot.json:3"),
            "{}",
            r.message
        );
        let (b, a) = (vllm(Some(0.0), 10.0), vllm(Some(4.0), 70.0));
        let pair = Pair::new(&b, &a);
        cx.pair = Input::Present(&pair);
        assert_eq!(settle(T1, run(&cx)).unwrap().status, Status::Fail);
    }
}
