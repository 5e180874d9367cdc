//! T8: the load tool kept N requests open, but the server may have run far fewer (docs/tripwires.md#t8).

use super::load_figures::{self, DECIDE_WITH, REQUESTED_FLAG};
use super::server_down::ServerDown;
use crate::bench::aiperf_server::Seen;
use crate::bench::BenchResult;
use crate::bootlog::{BootFacts, RunningCap};
use crate::engine::Engine;
use crate::json::Json;
use crate::num::shortest;
use crate::rules::absent::{unusable, Absent, Input, Judged};
use crate::rules::scope::{FleetScope, PhaseScope, ReplicaScope, RunScope, ScrapeScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::align::{sum_running, Aligned};
use crate::series::{column, Series};

const T8: Tripwire = Tripwire::ConcurrencyNotReached;

/// The whole run: the running gauge's peak against the concurrency asked for. A server
/// down before the load, or a load that asked for no concurrency, says so.
pub fn run(cx: &RunScope<'_>) -> Judged {
    match &cx.series {
        Input::Present(s) => on_series(cx, s),
        // An unusable recording matters only when a load ran.
        Input::Unusable(_) if cx.requested.is_none() && !cx.load_ran => Err(Absent::NotGiven),
        Input::Unusable(_) | Input::Missing(_) => {
            Err(cx.series.need().err().unwrap_or(Absent::NotGiven))
        }
        Input::NotGiven => match (cx.down, cx.requested) {
            (Some(d), Some(req)) => Ok(server_down(req, d)),
            _ => Err(Absent::NotGiven),
        },
    }
}

fn on_series(cx: &RunScope<'_>, s: &Series) -> Judged {
    match (cx.requested, cx.down) {
        (Some(req), Some(d)) => Ok(server_down(req, d)),
        (Some(req), None) => {
            let mut r = check(s, req, cx.facts);
            load_figures::note_sweep(&mut r, cx.bench_ok());
            Ok(r)
        }
        (None, _) if cx.load_ran => Ok(match &cx.bench {
            Input::Unusable(e) => {
                unusable(T8, e).with(load_figures::DECIDE_WITH, load_figures::REQUESTED_FLAG)
            }
            _ => load_figures::t8(s, cx.bench_ok(), cx.manifest),
        }),
        (None, _) => Err(Absent::NotGiven),
    }
}

/// One phase: the concurrency it asked for against the running gauge inside it; a
/// rate-based phase asks for none.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let w = cx.window.need()?;
    let peak = w.inner.peak_running();
    if let Some(c) = cx.phase.concurrency.filter(|&c| c > 0) {
        return Ok(check(&w.inner, c, cx.facts));
    }
    let reached = peak.map_or_else(
        || "the phase's readings have no running-requests value".to_string(),
        |p| format!("the server ran up to {} at once", shortest(p)),
    );
    Ok(match cx.phase.rate {
        Some(rate) => CheckResult::new(
            T8,
            Status::NotApplicable,
            format!(
                "a rate-based phase ({} requests/s) asks for no concurrency; {reached}",
                shortest(rate)
            ),
        )
        .with("request_rate", rate),
        None => CheckResult::new(
            T8,
            Status::Unknown,
            format!(
                "{}'s result does not say what this phase asked for; {reached}",
                cx.tool
            ),
        ),
    }
    .with("peak_running", peak))
}

/// One replica: its recording against its even share of the concurrency asked for; a
/// fail says a peak shorter than a scrape may not show.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    let s = cx.series.need()?;
    let Some(share) = cx.share else {
        return Ok(CheckResult::new(
            T8,
            Status::Unknown,
            "the concurrency asked for is not known, so this replica's share of it can't be \
             told (give --requested)",
        ));
    };
    let mut r = check(s, share.of(), None);
    r.message = format!(
        "its even share of the {} requested across {} replicas: {}",
        share.requested, share.replicas, r.message
    );
    r.set("fleet_requested", share.requested);
    r.set("replicas", share.replicas);
    if let Some(scrape) = cx.scrape_s {
        r.set("scrape_interval_s", scrape);
        if r.status == Status::Fail {
            r.message.push_str(&format!(
                "; Prometheus scraped every {} s, so a peak shorter than that may not show",
                shortest(scrape)
            ));
        }
    }
    Ok(r)
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

/// The fleet: the concurrency asked for against the most the replicas ran together at
/// one instant (a server down before the load gave the run's T8 already).
pub fn fleet(cx: &FleetScope<'_>) -> Judged {
    if cx.down {
        return Err(Absent::NotGiven);
    }
    let (runs, requested, step_s, scrape_s) = (cx.replicas, cx.requested, cx.step_s, cx.scrape_s);
    let mut r = CheckResult::new(T8, Status::Unknown, String::new());
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
        return Ok(r);
    };
    let missing: Vec<&str> = runs
        .iter()
        .filter(|x| x.series.present().is_none())
        .map(|x| x.id)
        .collect();
    let series: Vec<&Series> = runs.iter().filter_map(|x| x.series.present()).collect();
    if let Some(bad) = series
        .iter()
        .find_map(|s| s.implausible_in(&[column::RUNNING]))
    {
        r.message = crate::plausible::cannot_tell(bad);
        r.set("implausible", bad.to_string());
        return Ok(r);
    }
    let Some(step) = step(step_s, &series) else {
        r.message = "no recording says its interval, so the replicas' readings can't be put \
                     on one time axis"
            .into();
        return Ok(r);
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
        return Ok(r);
    };
    r.set("peak_running", peak.running);
    r.set("peak_at_s", peak.at_s);
    let ids: Vec<&str> = runs
        .iter()
        .filter(|x| x.series.present().is_some())
        .map(|x| x.id)
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
        return Ok(r);
    }
    if !missing.is_empty() {
        r.message = format!(
            "{requested} requested; the replicas with a recording ran up to {} at once, but \
             {} has none, so the fleet's sum can't be told",
            shortest(peak.running),
            missing.join(", ")
        );
        r.set("missing", missing.join(", "));
        return Ok(r);
    }
    if let Some(e) = series.iter().map(|s| s.engine()).find(|e| e.gauges_lag()) {
        r.set("gauges_lag", true);
        r.message = format!(
            "{requested} requested; the replicas' recordings never showed more than {} \
             running together, but {}'s gauge moves only when a request completes",
            shortest(peak.running),
            e.display()
        );
        return Ok(r);
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
    Ok(r)
}

/// From the running gauge's highest sample a load tool scraped, against the
/// concurrency asked for.
pub fn scrape(cx: &ScrapeScope<'_>) -> Judged {
    let (engine, s, requested, bench) = (cx.engine, cx.scrape, cx.requested, cx.bench.present());
    let m = engine.metrics();
    let peak = cx.value_or(s.gauge_max(m.running), m.running);
    let waiting = cx.value_or(s.gauge_max(m.waiting), m.waiting).ok();
    let reached = match &peak {
        Ok(p) => format!("the server ran up to {} at once", shortest(*p)),
        Err(why) => why.clone(),
    };
    let mut r = match (requested, bench.and_then(|b| b.request_rate)) {
        (None, Some(rate)) => CheckResult::new(
            T8,
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
            T8,
            Status::Unknown,
            format!(
                "how many requests the load kept open at once is unknown; {reached}; \
                 `inferlint analyze RUN {REQUESTED_FLAG}` decides it"
            ),
        )
        .with(DECIDE_WITH, REQUESTED_FLAG),
        (Some(req), _) => judge_scraped(engine, req, &peak).with("requested", req),
    };
    r.set("peak_running", peak.ok());
    r.set("peak_waiting", waiting);
    Ok(cx.sourced(r, Seen::Gauge))
}

fn judge_scraped(engine: Engine, requested: i64, peak: &Result<f64, String>) -> CheckResult {
    let peak = match peak {
        Ok(p) => *p,
        Err(why) => return CheckResult::new(T8, Status::Unknown, why.clone()),
    };
    if peak >= requested as f64 {
        return CheckResult::new(
            T8,
            Status::Pass,
            format!(
                "the server ran up to {} requests at once, as many as the {requested} asked for",
                shortest(peak)
            ),
        );
    }
    if engine.gauges_lag() {
        return CheckResult::new(
            T8,
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
        T8,
        Status::Fail,
        format!(
            "{requested} requested, but the server never ran more than {} at once",
            shortest(peak)
        ),
    )
}

pub fn check(series: &Series, requested: i64, facts: Option<&BootFacts>) -> CheckResult {
    let engine = series.engine();
    let peak = series.peak_running();
    let in_flight = series.peak_in_flight();
    let mut r = CheckResult::new(T8, Status::Unknown, String::new())
        .with("requested", requested)
        .with("peak_running", peak)
        .with("peak_in_flight", in_flight);
    let queued_limit = facts.and_then(BootFacts::max_num_queued_reqs);
    if let Some(f) = facts {
        if let (Some(x), Some(len)) = (f.max_concurrency, f.max_concurrency_request_len) {
            r.set("boot_line_max_concurrency", x);
            r.set("boot_line_request_len", len);
        }
        if let Some(l) = queued_limit {
            r.set("max_num_queued_reqs", l);
        }
        if let Some(t) = f.max_num_queued_tokens() {
            r.set("max_num_queued_tokens", t);
        }
    }
    // A refused reading could have been the peak: can't tell (plausible.rs).
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::WAITING]) {
        r.message = crate::plausible::cannot_tell(bad);
        r.set("implausible", bad.to_string());
        return r;
    }
    let Some(peak) = peak else {
        r.message = "the recording has no running-requests readings".into();
        if let Some(hint) = engine.missing_gauges_hint() {
            r.message.push_str(&format!("; {hint}"));
        }
        return r;
    };
    if engine.gauges_lag() {
        r.set("gauges_lag", true);
    }
    let req = requested as f64;
    if peak >= req {
        r.status = Status::Pass;
        r.message = format!(
            "the server ran up to {} requests at once, as many as the {requested} asked for",
            shortest(peak)
        );
        return r;
    }
    if engine.gauges_lag() {
        r.message = format!(
            "{requested} requested; the recording never showed more than {} running, but {}'s \
             gauge moves only when a request completes, so more may have run between readings",
            shortest(peak),
            engine.display()
        );
        return r;
    }
    r.status = Status::Fail;
    r.message = format!(
        "{requested} requested, but the server never ran more than {} at once",
        shortest(peak)
    );
    if let (Some(l), Some(f)) = (queued_limit, in_flight) {
        if l < requested && f >= l as f64 {
            r.message.push_str(&format!(
                "; admission control (--max-num-queued-reqs {l}) kept at most {l} in flight, so \
                 the other {} were rejected rather than queued",
                requested - l
            ));
        }
    }
    if let Some(cap) = facts.and_then(BootFacts::running_cap_info) {
        r.set("running_cap", Json::Int(cap.cap));
        if peak >= cap.cap as f64 && cap.cap < requested {
            r.message.push_str(&format!("; {}", explain_cap(&cap)));
        }
    }
    r
}

/// T8 when the server was down before the load: can't tell, and why (not "ran at most 0").
pub fn server_down(requested: i64, down: &ServerDown) -> CheckResult {
    CheckResult::new(
        T8,
        Status::Unknown,
        format!(
            "{requested} requested, but the server was down before the load started: {}; \
             nothing the load sent reached a running server, so how many it runs at once \
             can't be told",
            down.reason
        ),
    )
    .with("requested", requested)
    .with("server_down", down.reason.as_str())
}

/// Why the server ran at most `cap` at once, naming the engine and its own setting
/// (`BootFacts::running_cap_info`).
pub fn explain_cap(cap: &RunningCap) -> String {
    let setting = |n: i64| match cap.engine {
        Engine::Trtllm => format!("max_batch_size {n}"),
        Engine::Sglang => format!("--max-running-requests {n}"),
        Engine::Vllm => format!("--max-num-seqs {n}"),
    };
    let name = cap.engine.display();
    if cap.from_max_num_seqs {
        return format!(
            "the server runs at most {} at once ({})",
            cap.cap,
            setting(cap.cap)
        );
    }
    match cap.requested_running {
        Some(asked) if asked > cap.cap => {
            let why = cap
                .reason
                .as_deref()
                .map(|r| format!(" because of the {r}"))
                .unwrap_or_default();
            let settled = if cap.engine == Engine::Trtllm {
                format!(
                    " (its log reports the limit it settled on as max_num_requests {})",
                    cap.cap
                )
            } else {
                String::new()
            };
            format!(
                "{name} lowered its running limit to {}{why} although it was started with {}{settled}",
                cap.cap,
                setting(asked)
            )
        }
        _ => format!(
            "the server runs at most {} at once ({})",
            cap.cap,
            setting(cap.cap)
        ),
    }
}
