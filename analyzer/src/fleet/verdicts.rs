//! The fleet's own verdicts, from every replica together: T1 (did any replica preempt),
//! T8 (the concurrency asked for against the replicas' running summed at each instant)
//! and T15 (the load tool against the replicas' counters summed).

use super::align::{sum_running, Aligned};
use super::replica::ReplicaRun;
use crate::bench::BenchResult;
use crate::engine::Engine;
use crate::num::{shortest, thousands};
use crate::rules::t15_client_server_mismatch as t15_client_server;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Series};

/// Fleet T1 from each replica's own T1: a fail names every replica that preempted.
pub fn t1(ids: &[&str], each: &[Option<&CheckResult>]) -> CheckResult {
    let mut preempted = Vec::new();
    let mut unknown = Vec::new();
    let mut total = 0.0;
    for (id, r) in ids.iter().zip(each) {
        match r.map(|r| (r.status, r.evidence("preemptions").and_then(|v| v.as_f64()))) {
            Some((Status::Fail, n)) => {
                total += n.unwrap_or(0.0);
                preempted.push(match n {
                    Some(n) => format!("{id} ({})", shortest(n)),
                    None => (*id).to_string(),
                });
            }
            Some((Status::Pass, n)) => total += n.unwrap_or(0.0),
            _ => unknown.push(*id),
        }
    }
    let mut r = CheckResult::new(Tripwire::SilentPreemption, Status::Pass, String::new())
        .with("replicas", ids.len());
    if !preempted.is_empty() {
        r.status = Status::Fail;
        r.message = format!(
            "{} of {} replicas preempted during the run: {}",
            preempted.len(),
            ids.len(),
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
        r.message = format!("no preemptions on any of the {} replicas", ids.len());
        r.set("preemptions", total);
    }
    if !unknown.is_empty() {
        r.set("unknown", unknown.join(", "));
    }
    r
}

/// The grid step for aligning the replicas: the range queries' step, else the longest
/// interval any recording was read at.
fn step(step_s: Option<f64>, series: &[&Series]) -> Option<f64> {
    step_s.or_else(|| {
        series
            .iter()
            .filter_map(|s| s.interval_s)
            .filter(|x| *x > 0.0)
            .reduce(f64::max)
    })
}

/// Fleet T8: `requested` against the most the replicas ran together at one instant.
pub fn t8(
    runs: &[ReplicaRun],
    requested: Option<i64>,
    step_s: Option<f64>,
    scrape_s: Option<f64>,
) -> CheckResult {
    let mut r = CheckResult::new(
        Tripwire::ConcurrencyNotReached,
        Status::Unknown,
        String::new(),
    );
    if let Some(q) = requested {
        r.set("requested", q);
    }
    if let Some(s) = scrape_s {
        r.set("scrape_interval_s", s);
    }
    let Some(requested) = requested else {
        r.message = "the concurrency asked for is not known (give --requested, or record the \
                     load's command)"
            .into();
        return r;
    };
    let missing: Vec<&str> = runs
        .iter()
        .filter(|x| x.series().is_none())
        .map(|x| x.id.as_str())
        .collect();
    let series: Vec<&Series> = runs.iter().filter_map(ReplicaRun::series).collect();
    if let Some(bad) = series
        .iter()
        .find_map(|s| s.implausible_in(&[column::RUNNING]))
    {
        r.message = crate::plausible::cannot_tell(bad);
        r.set("implausible", bad.to_string());
        return r;
    }
    let Some(step) = step(step_s, &series) else {
        r.message = "no recording says its interval, so the replicas' readings can't be put \
                     on one time axis"
            .into();
        return r;
    };
    r.set("step_s", step);
    let Aligned { peak, instants } = sum_running(&series, step);
    r.set("instants", instants);
    let Some(peak) = peak else {
        r.message = if series.is_empty() {
            "no replica has a usable recording".to_string()
        } else {
            "the replicas' recordings share no instant, so their running requests can't be \
             summed"
                .to_string()
        };
        return r;
    };
    r.set("peak_running", peak.running);
    r.set("peak_at_s", peak.at_s);
    let ids: Vec<&str> = runs
        .iter()
        .filter(|x| x.series().is_some())
        .map(|x| x.id.as_str())
        .collect();
    let each: Vec<String> = ids
        .iter()
        .zip(&peak.each)
        .map(|(id, v)| format!("{id}: {}", shortest(*v)))
        .collect();
    r.set("peak_each", each.join(", "));
    let req = requested as f64;
    if peak.running >= req {
        r.status = Status::Pass;
        r.message = format!(
            "the replicas together ran up to {} requests at once ({}), as many as the \
             {requested} asked for",
            shortest(peak.running),
            each.join(", ")
        );
        return r;
    }
    if !missing.is_empty() {
        r.message = format!(
            "{requested} requested; the replicas with a recording ran up to {} at once, but \
             {} has none, so the fleet's sum can't be told",
            shortest(peak.running),
            missing.join(", ")
        );
        r.set("missing", missing.join(", "));
        return r;
    }
    if let Some(e) = series.iter().map(|s| s.engine()).find(|e| e.gauges_lag()) {
        r.set("gauges_lag", true);
        r.message = format!(
            "{requested} requested; the replicas' recordings never showed more than {} \
             running together, but {}'s gauge moves only when a request completes",
            shortest(peak.running),
            e.display()
        );
        return r;
    }
    r.status = Status::Fail;
    r.message = format!(
        "{requested} requested, but the replicas together never ran more than {} at once ({})",
        shortest(peak.running),
        each.join(", ")
    );
    if let Some(s) = scrape_s {
        // A peak shorter than a scrape can fall between two; say so, it bounds the claim.
        r.message.push_str(&format!(
            "; Prometheus scraped every {} s, so a peak shorter than that may not show",
            shortest(s)
        ));
    }
    r
}

/// Fleet T15: the load tool's counts against the replicas' counters summed.
pub fn t15(
    runs: &[ReplicaRun],
    result: &BenchResult,
    result_file: &str,
    expected_extra: i64,
) -> CheckResult {
    let mut done = Some(0.0);
    let mut tokens = Some(0.0);
    let mut blind = Vec::new();
    let mut counters = ("", "");
    for run in runs {
        let engine = run.engine().unwrap_or(Engine::Vllm);
        let m = engine.metrics();
        counters = (m.requests_finished, m.generation_tokens);
        let Some(pair) = run.pair() else {
            blind.push(run.id.as_str());
            continue;
        };
        if let Some(bad) = pair.implausible(&[m.requests_finished, m.generation_tokens]) {
            return CheckResult::new(
                Tripwire::ClientServerMismatch,
                Status::Unknown,
                crate::plausible::cannot_tell(bad),
            )
            .with("implausible", bad.to_string())
            .with("result_file", result_file);
        }
        match (
            pair.delta(m.requests_finished, &[], None),
            pair.delta(m.generation_tokens, &[], None),
        ) {
            (Ok(d), Ok(t)) => {
                done = done.zip(d).map(|(a, b)| a + b);
                tokens = tokens.zip(t).map(|(a, b)| a + b);
            }
            (Err(restart), _) | (_, Err(restart)) => {
                let mut r = CheckResult::new(
                    Tripwire::ClientServerMismatch,
                    Status::Unknown,
                    format!("replica {}: {}", run.id, restart.describe()),
                );
                r.evidence = restart.evidence();
                return r;
            }
        }
    }
    if !blind.is_empty() {
        return CheckResult::new(
            Tripwire::ClientServerMismatch,
            Status::Unknown,
            format!(
                "{} has no usable before and after readings, so the replicas' sum can't be \
                 compared with the load tool's {} completed requests",
                blind.join(", "),
                result.completed.map_or("?".into(), |c| thousands(c as f64))
            ),
        )
        .with("unknown", blind.join(", "))
        .with("result_file", result_file);
    }
    let missing = format!(
        "a server counter ({} or {}) is missing from a snapshot",
        counters.0, counters.1
    );
    let mut r =
        t15_client_server::compare(done, tokens, missing, result, result_file, expected_extra);
    r.message = format!("summed over {} replicas: {}", runs.len(), r.message);
    r.set("replicas", runs.len());
    r
}
