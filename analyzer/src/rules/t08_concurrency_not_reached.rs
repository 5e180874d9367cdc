//! T8: the load tool kept N requests open, but the server may have run far fewer (docs/tripwires.md#t8).
//! A failure the readings were too sparse to decide, against the load tool's own timeline,
//! is "can't tell" instead (`t24_coarse_recording::unseen`).

use super::load_figures::{self, REQUESTED_FLAG};
use super::server_down::ServerDown;
use crate::bench::aiperf_server::Seen;
use serde::Serialize;

use crate::bench::BenchResult;
use crate::bootlog::{BootFacts, RunningCap};
use crate::engine::Engine;
use crate::json::Json;
use crate::num::shortest;
use crate::rules::absent::{Absent, Input, Judged};
use crate::rules::load_failed::LoadFailed;
use crate::rules::scope::{FleetScope, PhaseScope, ReplicaScope, RunScope, ScrapeScope};
use crate::rules::t20_load_generator_bound::ClientLimit;
use crate::rules::t24_coarse_recording as t24;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::align::{sum_running, Aligned, PeakSum};
use crate::series::{column, Series};

const T8: Tripwire = Tripwire::ConcurrencyNotReached;

/// The running gauge's peak against the concurrency asked for, with the boot log's
/// limits that explain a shortfall.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Concurrency {
    pub requested: i64,
    pub peak_running: Option<f64>,
    /// Running plus waiting: what admission control let in.
    pub peak_in_flight: Option<f64>,
    /// The boot log's "maximum concurrency for N tokens per request" line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_line_max_concurrency: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_line_request_len: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_queued_reqs: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_queued_tokens: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// The engine's gauges move only when a request completes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gauges_lag: Option<bool>,
    /// The engine's own limit on running requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_cap: Option<i64>,
}

/// The server was down before the load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Down {
    pub requested: i64,
    pub server_down: String,
}

/// A phase that asked for no concurrency, or did not say what it asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseLoad {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    pub peak_running: Option<f64>,
}

/// The replicas' running requests summed on one time axis.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetConcurrency {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scrape_interval_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instants: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_running: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_at_s: Option<f64>,
    /// Each replica's running at the peak ("a: 3, b: 5").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_each: Option<String>,
    /// The replicas without a recording.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gauges_lag: Option<bool>,
}

/// The running gauge's peak a load tool scraped.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScrapedConcurrency {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decide_with: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gauges_lag: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<i64>,
    pub peak_running: Option<f64>,
    pub peak_waiting: Option<f64>,
}

/// The most requests a T8 result saw running at once (a fleet's: summed).
pub fn peak_running(r: &CheckResult) -> Option<f64> {
    if r.tripwire != T8 {
        return None;
    }
    r.finding::<Concurrency>()
        .and_then(|e| e.peak_running)
        .or_else(|| r.finding::<FleetConcurrency>().and_then(|e| e.peak_running))
        .or_else(|| r.finding::<PhaseLoad>().and_then(|e| e.peak_running))
        .or_else(|| {
            r.finding::<ScrapedConcurrency>()
                .and_then(|e| e.peak_running)
        })
        .or_else(|| {
            r.finding::<load_figures::Undecided>()
                .and_then(|e| e.peak_running)
        })
}

/// A fleet's T8: each replica's running at the peak.
pub fn peak_each(r: &CheckResult) -> Option<&str> {
    r.finding::<FleetConcurrency>()?.peak_each.as_deref()
}

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
            if let Some(f) = cx.load_failed {
                say_failed(&mut r, f, req);
            }
            if let Some(b) = cx.bench_ok().filter(|_| r.status == Status::Fail) {
                let seen =
                    t24::unseen(t24::run_sampling(cx), b.requests.as_ref(), peak_running(&r));
                if let Some(u) = seen {
                    u.apply(&mut r, b.tool_name());
                }
            }
            if let Some(limit) = cx
                .client_limit
                .as_ref()
                .filter(|_| r.status != Status::Pass)
            {
                say_whose_limit(&mut r, limit);
            }
            Ok(r)
        }
        (None, _) if cx.load_ran => Ok(match &cx.bench {
            Input::Unusable(e) => load_figures::unusable_result(T8, e),
            _ => load_figures::t8(s, cx.bench_ok(), cx.manifest),
        }),
        (None, _) => Err(Absent::NotGiven),
    }
}

/// A load whose every request failed: a server that ran none had nothing to run, so the
/// shortfall is the requests', not the server's; a peak above 0 is kept, with the note.
fn say_failed(r: &mut CheckResult, f: &LoadFailed, requested: i64) {
    let peak = r.finding::<Concurrency>().and_then(|c| c.peak_running);
    if r.status == Status::Fail && peak.is_none_or(|p| p <= 0.0) {
        r.message = f.never_reached(requested);
    } else {
        r.message.push_str(&format!("; {}", f.clause()));
    }
    r.set("requests_failed", f.sent);
}

/// One phase: the concurrency it asked for against the running gauge inside it; a
/// rate-based phase asks for none.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let w = cx.window.need()?;
    let peak = w.inner.peak_running();
    if let Some(c) = cx.phase.concurrency.filter(|&c| c > 0) {
        let mut r = check(&w.inner, c, cx.facts);
        if let Some(f) = LoadFailed::of_phase(cx.phase, cx.tool) {
            say_failed(&mut r, &f, c);
        }
        if r.status == Status::Fail {
            let seen = t24::unseen(
                t24::phase_sampling(cx),
                cx.phase.requests.as_ref(),
                peak_running(&r),
            );
            if let Some(u) = seen {
                u.apply(&mut r, cx.tool);
            }
        }
        return Ok(r);
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
        ),
        None => CheckResult::new(
            T8,
            Status::Unknown,
            format!(
                "{}'s result does not say what this phase asked for; {reached}",
                cx.tool
            ),
        ),
    }
    .found(PhaseLoad {
        request_rate: cx.phase.rate,
        peak_running: peak,
    }))
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
    let mut e = FleetConcurrency {
        requested,
        scrape_interval_s: scrape_s,
        ..FleetConcurrency::default()
    };
    let Some(requested) = requested else {
        r.message = "the concurrency asked for is not known (give --requested, or record the \
                     load's command)"
            .into();
        return Ok(r.found(e));
    };
    let series: Vec<&Series> = runs.iter().filter_map(|x| x.series.present()).collect();
    if let Some(bad) = series
        .iter()
        .find_map(|s| s.implausible_in(&[column::RUNNING]))
    {
        r.message = crate::plausible::cannot_tell(bad);
        e.implausible = Some(bad.to_string());
        return Ok(r.found(e));
    }
    let Some(step) = step(step_s, &series) else {
        r.message = "no recording says its interval, so the replicas' readings can't be put \
                     on one time axis"
            .into();
        return Ok(r.found(e));
    };
    e.step_s = Some(step);
    let Aligned { peak, instants } = sum_running(&series, step);
    e.instants = Some(instants);
    let Some(peak) = peak else {
        r.message = if series.is_empty() {
            "no replica has a usable recording".to_string()
        } else {
            "the replicas' recordings share no instant, so their running requests can't be \
             summed"
                .to_string()
        };
        return Ok(r.found(e));
    };
    e.peak_running = Some(peak.running);
    e.peak_at_s = Some(peak.at_s);
    let (status, message) = judge_fleet_peak(cx, requested, &peak, &series, &mut e);
    r.status = status;
    r.message = message;
    Ok(r.found(e))
}

/// The replicas' summed peak against the concurrency asked for.
fn judge_fleet_peak(
    cx: &FleetScope<'_>,
    requested: i64,
    peak: &PeakSum,
    series: &[&Series],
    e: &mut FleetConcurrency,
) -> (Status, String) {
    let runs = cx.replicas;
    let missing: Vec<&str> = runs
        .iter()
        .filter(|x| x.series.present().is_none())
        .map(|x| x.id)
        .collect();
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
    e.peak_each = Some(each.join(", "));
    if peak.running >= requested as f64 {
        return (
            Status::Pass,
            format!(
                "the replicas together ran up to {} requests at once ({}), as many as the \
                 {requested} asked for",
                shortest(peak.running),
                each.join(", ")
            ),
        );
    }
    if !missing.is_empty() {
        e.missing = Some(missing.join(", "));
        return (
            Status::Unknown,
            format!(
                "{requested} requested; the replicas with a recording ran up to {} at once, but \
                 {} has none, so the fleet's sum can't be told",
                shortest(peak.running),
                missing.join(", ")
            ),
        );
    }
    if let Some(lagging) = series.iter().map(|s| s.engine()).find(|e| e.gauges_lag()) {
        e.gauges_lag = Some(true);
        return (
            Status::Unknown,
            format!(
                "{requested} requested; the replicas' recordings never showed more than {} \
                 running together, but {}'s gauge moves only when a request completes",
                shortest(peak.running),
                lagging.display()
            ),
        );
    }
    let mut message = format!(
        "{requested} requested, but the replicas together never ran more than {} at once ({})",
        shortest(peak.running),
        each.join(", ")
    );
    if let Some(s) = cx.scrape_s {
        // A peak shorter than a scrape can fall between two; say so, it bounds the claim.
        message.push_str(&format!(
            "; Prometheus scraped every {} s, so a peak shorter than that may not show",
            shortest(s)
        ));
    }
    (Status::Fail, message)
}

/// From the running gauge's highest sample a load tool scraped, against the
/// concurrency asked for.
pub fn scrape(cx: &ScrapeScope<'_>) -> Judged {
    let (engine, s, requested, bench) = (cx.engine, cx.scrape, cx.requested, cx.bench.present());
    let m = engine.metrics();
    let peak = cx.value_or(s.gauge_max(m.running), m.running);
    let mut e = ScrapedConcurrency {
        requested,
        peak_running: peak.as_ref().ok().copied(),
        peak_waiting: cx.value_or(s.gauge_max(m.waiting), m.waiting).ok(),
        ..ScrapedConcurrency::default()
    };
    let reached = match &peak {
        Ok(p) => format!("the server ran up to {} at once", shortest(*p)),
        Err(why) => why.clone(),
    };
    let (status, message) = match (requested, bench.and_then(|b| b.request_rate)) {
        (None, Some(rate)) => {
            e.request_rate = Some(rate);
            (
                Status::NotApplicable,
                format!(
                    "{} sent a rate-based load ({} requests/s), which asks for no concurrency; \
                     {reached}",
                    bench.map_or("the load tool", BenchResult::tool_name),
                    shortest(rate)
                ),
            )
        }
        (None, None) => {
            e.decide_with = Some(REQUESTED_FLAG);
            (
                Status::Unknown,
                format!(
                    "how many requests the load kept open at once is unknown; {reached}; \
                     `inferlint analyze RUN {REQUESTED_FLAG}` decides it"
                ),
            )
        }
        (Some(req), _) => judge_scraped(engine, req, &peak, &mut e),
    };
    Ok(cx.sourced(CheckResult::new(T8, status, message).found(e), Seen::Gauge))
}

/// The scraped peak against the concurrency asked for.
fn judge_scraped(
    engine: Engine,
    requested: i64,
    peak: &Result<f64, String>,
    e: &mut ScrapedConcurrency,
) -> (Status, String) {
    let peak = match peak {
        Ok(p) => *p,
        Err(why) => return (Status::Unknown, why.clone()),
    };
    if peak >= requested as f64 {
        return (
            Status::Pass,
            format!(
                "the server ran up to {} requests at once, as many as the {requested} asked for",
                shortest(peak)
            ),
        );
    }
    if engine.gauges_lag() {
        e.gauges_lag = Some(true);
        return (
            Status::Unknown,
            format!(
                "{requested} requested; AIPerf's samples never showed more than {} running, but \
                 {}'s gauge moves only when a request completes, so more may have run between \
                 samples",
                shortest(peak),
                engine.display()
            ),
        );
    }
    (
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
    let queued_limit = facts.and_then(BootFacts::max_num_queued_reqs);
    let boot_line = facts.and_then(|f| f.max_concurrency.zip(f.max_concurrency_request_len));
    let mut e = Concurrency {
        requested,
        peak_running: peak,
        peak_in_flight: series.peak_in_flight(),
        boot_line_max_concurrency: boot_line.map(|(x, _)| x),
        boot_line_request_len: boot_line.map(|(_, len)| len),
        max_num_queued_reqs: queued_limit,
        max_num_queued_tokens: facts.and_then(BootFacts::max_num_queued_tokens),
        ..Concurrency::default()
    };
    // A refused reading could have been the peak: can't tell (plausible.rs).
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::WAITING]) {
        e.implausible = Some(bad.to_string());
        return CheckResult::new(T8, Status::Unknown, crate::plausible::cannot_tell(bad)).found(e);
    }
    let Some(peak) = peak else {
        let mut msg = "the recording has no running-requests readings".to_string();
        if let Some(hint) = engine.missing_gauges_hint() {
            msg.push_str(&format!("; {hint}"));
        }
        return CheckResult::new(T8, Status::Unknown, msg).found(e);
    };
    if engine.gauges_lag() {
        e.gauges_lag = Some(true);
    }
    if peak >= requested as f64 {
        let msg = format!(
            "the server ran up to {} requests at once, as many as the {requested} asked for",
            shortest(peak)
        );
        return CheckResult::new(T8, Status::Pass, msg).found(e);
    }
    if engine.gauges_lag() {
        let msg = format!(
            "{requested} requested; the recording never showed more than {} running, but {}'s \
             gauge moves only when a request completes, so more may have run between readings",
            shortest(peak),
            engine.display()
        );
        return CheckResult::new(T8, Status::Unknown, msg).found(e);
    }
    let mut msg = format!(
        "{requested} requested, but the server never ran more than {} at once",
        shortest(peak)
    );
    if let (Some(l), Some(f)) = (queued_limit, e.peak_in_flight) {
        if l < requested && f >= l as f64 {
            msg.push_str(&format!(
                "; admission control (--max-num-queued-reqs {l}) kept at most {l} in flight, so \
                 the other {} were rejected rather than queued",
                requested - l
            ));
        }
    }
    if let Some(cap) = facts.and_then(BootFacts::running_cap_info) {
        e.running_cap = Some(cap.cap);
        if peak >= cap.cap as f64 && cap.cap < requested {
            msg.push_str(&format!("; {}", explain_cap(&cap)));
        }
    }
    CheckResult::new(T8, Status::Fail, msg).found(e)
}

/// A shortfall the load tool caused (T20): the message and the evidence say so.
fn say_whose_limit(r: &mut CheckResult, limit: &ClientLimit) {
    r.message.push_str(&format!("; {}", limit.clause()));
    r.set("limited_by", "load tool");
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
    .found(Down {
        requested,
        server_down: down.reason.clone(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::absent::settle;
    use crate::rules::testing::{gauges, said, series, Folder};

    fn ran(peaks: &[f64]) -> Series {
        series(
            Engine::Vllm,
            peaks.iter().map(|&r| gauges(r, 0.0, 0.5)).collect(),
        )
    }

    #[test]
    fn reaching_the_concurrency_asked_for_passes() {
        let r = check(&ran(&[2.0, 8.0, 6.0]), 8, None);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "the server ran up to 8 requests at once, as many as the 8 asked for"
            )
        );
        assert_eq!(peak_running(&r), Some(8.0));
        assert_eq!(r.finding::<Concurrency>().unwrap().requested, 8);
    }

    #[test]
    fn running_fewer_fails() {
        let r = check(&ran(&[2.0, 10.0, 6.0]), 32, None);
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "32 requested, but the server never ran more than 10 at once"
            )
        );
        assert_eq!(peak_running(&r), Some(10.0));
    }

    #[test]
    fn no_running_readings_cannot_tell() {
        let s = series(Engine::Vllm, vec![crate::series::Row::default(); 3]);
        let r = check(&s, 8, None);
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .starts_with("the recording has no running-requests readings"));
        assert_eq!(peak_running(&r), None);
    }

    #[test]
    fn a_lagging_gauge_never_fails() {
        let s = series(Engine::Trtllm, vec![gauges(3.0, 0.0, 0.2)]);
        let r = check(&s, 8, None);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert_eq!(r.finding::<Concurrency>().unwrap().gauges_lag, Some(true));
    }

    #[test]
    fn the_run_scope_without_a_recording_or_with_the_server_down() {
        let folder = Folder::default();
        let mut cx = folder.scope();
        cx.requested = Some(8);
        assert_eq!(settle(T8, run(&cx)), None, "no recording: no result");
        let down = ServerDown {
            reason: "it did not answer its health check after the probe".into(),
        };
        cx.down = Some(&down);
        let r = settle(T8, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .contains("the server was down before the load started"));
        // A recording but no concurrency asked for: can't tell, and the flag that decides.
        let s = ran(&[4.0]);
        cx.down = None;
        cx.requested = None;
        cx.series = crate::rules::absent::Input::Present(&s);
        let r = settle(T8, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert_eq!(load_figures::decide_with(&r), Some(REQUESTED_FLAG));
        assert_eq!(peak_running(&r), Some(4.0));
    }

    /// A load whose every request failed: the server ran none because none reached it.
    #[test]
    fn a_load_that_failed_whole_never_reached_the_server() {
        let failed = crate::rules::load_failed::LoadFailed {
            sent: 24,
            tool: "GuideLLM 0.8.1".into(),
        };
        let folder = Folder::default();
        let mut cx = folder.scope();
        let s = ran(&[0.0, 0.0]);
        cx.series = crate::rules::absent::Input::Present(&s);
        cx.requested = Some(8);
        cx.load_failed = Some(&failed);
        let r = settle(T8, run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "8 requested, but the requests never reached the server's engine: every one \
                 of the 24 requests GuideLLM 0.8.1 sent failed (T22), so the server had \
                 nothing to run, not too little room"
            )
        );
        // Some ran before failing: the gauge's verdict stands, with the note.
        let s = ran(&[3.0]);
        cx.series = crate::rules::absent::Input::Present(&s);
        let r = settle(T8, run(&cx)).unwrap();
        assert!(r
            .message
            .starts_with("8 requested, but the server never ran more than 3"));
        assert!(r.message.ends_with("sent failed (T22)"), "{}", r.message);
    }
}
