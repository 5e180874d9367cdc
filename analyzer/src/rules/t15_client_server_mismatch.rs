//! T15: the load tool's counts and the server's counters must agree; a difference means
//! other traffic shared the server, or the client counted work the server did not do
//! (docs/tripwires.md#t15).

use serde::Serialize;

use super::load_figures;
use super::server_down::ServerDown;
use crate::bench::aiperf_server::{Reading, Seen};
use crate::bench::BenchResult;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::thousands;
use crate::plausible::{cannot_tell, Implausible};
use crate::rules::absent::{Absent, Gap, Input, Judged};
use crate::rules::scope::window::Edges;
use crate::rules::scope::{FleetScope, PhaseScope, RunScope, ScrapeScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T15: Tripwire = Tripwire::ClientServerMismatch;

/// The load tool's counts against the server's counters over the run (or summed over a
/// fleet's replicas, or as a load tool scraped them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counts {
    /// The load tool's completed and failed requests and output tokens (null when its
    /// result does not say).
    pub client_completed: Option<i64>,
    pub client_failed: Option<i64>,
    pub client_output_tokens: Option<i64>,
    /// The server's finished requests and generated tokens (null when a counter is
    /// missing).
    pub server_finished: Option<f64>,
    pub server_output_tokens: Option<f64>,
    /// Requests the load tool sent outside its measurement (its test request, warm-ups).
    pub expected_extra_requests: i64,
    pub result_file: String,
    /// The server's finished requests less the load tool's completed ones, when both are
    /// known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_requests: Option<i64>,
    /// The server's output tokens less the load tool's, when the requests agree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_output_tokens: Option<f64>,
    /// A fleet: the replicas whose counters were summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<usize>,
    /// A load tool's scrape: its warm-up window was counted with its measured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with_warmup_window: Option<bool>,
}

/// A phase's output tokens against the server's, bounded by the readings inside the
/// phase and those bracketing it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTokens {
    /// The load tool's counts for the phase.
    pub client_completed: Option<i64>,
    pub client_failed: Option<i64>,
    pub client_output_tokens: i64,
    /// Tokens generated between the readings inside the phase (0 with fewer than two).
    pub server_output_tokens_at_least: f64,
    /// Tokens generated between the readings bracketing it.
    pub server_output_tokens_at_most: f64,
}

/// A value the plausibility gate refused among those compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refused {
    /// The refused value, where it was and why.
    pub implausible: String,
    pub result_file: String,
}

/// A fleet whose replicas' sum cannot be made: the replicas without readings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blind {
    /// Their ids, comma-separated.
    pub unknown: String,
    pub result_file: String,
}

/// The server was down before the load: why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DownBefore {
    pub server_down: String,
}

/// The run broke before its second snapshot: what is missing, and what the load tool
/// counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairMissing {
    pub missing_input: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench_completed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench_failed: Option<i64>,
}

/// The whole run: the load tool's counts against the server's counters between the
/// snapshots.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if let Some(d) = cx.down {
        let load = cx.input.bench.is_some() || cx.manifest.is_some_and(|m| m.load_given);
        return if load {
            Ok(server_down(d))
        } else {
            Err(Absent::NotGiven)
        };
    }
    if !cx.bench.is_given() {
        return without_result(cx);
    }
    let result = cx.bench.need()?;
    match &cx.pair {
        Input::Present(pair) => Ok(check(
            cx.snapshot_engine,
            pair,
            result,
            cx.bench_file(),
            cx.expected_extra,
        )),
        Input::Missing(Gap::Run(why)) => Ok(pair_missing(result, why)),
        other => Err(other.need().err().unwrap_or(Absent::NotGiven)),
    }
}

/// No load-tool result: never left out when a load ran and the server was read.
fn without_result(cx: &RunScope<'_>) -> Judged {
    if !cx.load_ran {
        return Err(Absent::NotGiven);
    }
    if let Some(why) = &cx.outcome.after_missing {
        return Err(Gap::Run(why.clone()).into());
    }
    if cx.pair.is_given() || cx.scrape.is_given() {
        return Ok(load_figures::t15(cx.manifest));
    }
    Err(Absent::NotGiven)
}

/// The phase's output tokens against the server's between the readings: at least the
/// inner pair's delta, at most the outer pair's.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let w = cx.window.need()?;
    let phase = cx.phase;
    let base = |status, msg: String| CheckResult::new(T15, status, msg);
    let Some(client) = phase.output_tokens else {
        return Ok(base(
            Status::Unknown,
            format!(
                "{}'s result gives no output-token count for this phase",
                cx.tool
            ),
        ));
    };
    let tokens = |a: &crate::series::Row, b: &crate::series::Row| -> Result<Option<f64>, String> {
        let e = Edges::new(cx.engine, a, b);
        e.pair()
            .delta(cx.engine.metrics().generation_tokens, &[], None)
            .map_err(|restart| restart.describe())
    };
    let outer = match tokens(&w.before, &w.after) {
        Err(why) => return Ok(base(Status::Unknown, why)),
        Ok(None) => {
            return Ok(base(
                Status::Unknown,
                "the series has no generated-tokens reading at the phase's edges".into(),
            ))
        }
        Ok(Some(t)) => t,
    };
    let inner = match w.inner_ends().map(|(a, b)| tokens(&a, &b)) {
        Some(Err(why)) => return Ok(base(Status::Unknown, why)),
        Some(Ok(t)) => t.unwrap_or(0.0),
        None => 0.0,
    };
    let r = |status, msg| {
        base(status, msg).found(PhaseTokens {
            client_completed: phase.completed,
            client_failed: phase.failed,
            client_output_tokens: client,
            server_output_tokens_at_least: inner,
            server_output_tokens_at_most: outer,
        })
    };
    let c = client as f64;
    let range = format!(
        "the server generated between {} and {} over the phase, {}",
        thousands(inner),
        thousands(outer),
        PhaseScope::resolution(&w.inner)
    );
    let requests = "requests are compared for the whole run only (the series holds no \
                    finished-requests counter)";
    Ok(if (inner..=outer).contains(&c) {
        r(
            Status::Pass,
            format!(
                "client and server agree: the load tool counted {} output tokens and {range}; \
                 {requests}",
                thousands(c)
            ),
        )
    } else {
        r(
            Status::Warn,
            format!(
                "the load tool counted {} output tokens, but {range}; {requests}",
                thousands(c)
            ),
        )
    })
}

/// The fleet: the load tool's counts against the replicas' counters summed (a server
/// down before the load gave the run's T15 already).
pub fn fleet(cx: &FleetScope<'_>) -> Judged {
    let Some((result, result_file)) = cx.bench.filter(|_| !cx.down) else {
        return Err(Absent::NotGiven);
    };
    let (runs, expected_extra) = (cx.replicas, cx.expected_extra);
    let mut done = Some(0.0);
    let mut tokens = Some(0.0);
    let mut blind = Vec::new();
    let mut counters = ("", "");
    for run in runs {
        let m = run.engine.metrics();
        counters = (m.requests_finished, m.generation_tokens);
        let Some(pair) = run.pair.present() else {
            blind.push(run.id);
            continue;
        };
        if let Some(bad) = pair.implausible(&[m.requests_finished, m.generation_tokens]) {
            return Ok(refused(bad, result_file));
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
                return Ok(CheckResult::new(
                    T15,
                    Status::Unknown,
                    format!("replica {}: {}", run.id, restart.describe()),
                )
                .found(restart.evidence()));
            }
        }
    }
    if !blind.is_empty() {
        return Ok(CheckResult::new(
            T15,
            Status::Unknown,
            format!(
                "{} has no usable before and after readings, so the replicas' sum can't be \
                 compared with the load tool's {} completed requests",
                blind.join(", "),
                result.completed.map_or("?".into(), |c| thousands(c as f64))
            ),
        )
        .found(Blind {
            unknown: blind.join(", "),
            result_file: result_file.to_string(),
        }));
    }
    let missing = format!(
        "a server counter ({} or {}) is missing from a snapshot",
        counters.0, counters.1
    );
    let (status, message, counts) =
        compare(done, tokens, missing, result, result_file, expected_extra);
    Ok(CheckResult::new(
        T15,
        status,
        format!("summed over {} replicas: {message}", runs.len()),
    )
    .found(Counts {
        replicas: Some(runs.len()),
        ..counts
    }))
}

/// From the finished-requests and generated-tokens counters AIPerf scraped, against
/// AIPerf's own counts. Its counters cover its measured window; after a warm-up, whose
/// requests still run as the measured window opens, both windows together against its
/// measured and warm-up counts.
pub fn scrape(cx: &ScrapeScope<'_>) -> Judged {
    let result = match &cx.bench {
        Input::NotGiven if cx.load_ran => return Ok(load_figures::t15(cx.manifest)),
        bench => bench.need()?,
    };
    let (engine, s, result_file) = (cx.engine, cx.scrape, cx.bench_file);
    let m = engine.metrics();
    if let Some(bad) = result.implausible.first() {
        return Ok(cx.sourced(refused(bad, result_file), Seen::Counters));
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
        return Ok(cx.sourced(refused(bad, result_file), Seen::Counters));
    }
    let [done, tokens] = counts.map(|c| match c {
        Reading::Value(v) => Some(v),
        _ => None,
    });
    let missing = format!(
        "a server counter ({} or {}) is missing from {}'s scrape",
        m.requests_finished, m.generation_tokens, s.tool
    );
    let (status, message, counts) = compare(
        done,
        tokens,
        missing,
        result,
        result_file,
        warmup.unwrap_or(0),
    );
    let (counts, seen) = match warmup {
        None => (counts, Seen::Counters),
        Some(_) => (
            Counts {
                with_warmup_window: Some(true),
                ..counts
            },
            Seen::CountersWithWarmup,
        ),
    };
    let r = CheckResult::new(T15, status, message).found(counts);
    Ok(cx.sourced(r, seen))
}

/// T15 when the server was down before the load: can't tell, and why (not a disagreement
/// between the load tool's failures and a server that was not there).
pub fn server_down(down: &ServerDown) -> CheckResult {
    CheckResult::new(
        T15,
        Status::Unknown,
        format!(
            "the server was down before the load started: {}; there is no run to compare the \
             load tool's counts with",
            down.reason
        ),
    )
    .found(DownBefore {
        server_down: down.reason.clone(),
    })
}

/// T15 when the run broke before its second snapshot: can't tell, with what the load
/// tool counted, so failed requests are never left unsaid.
pub fn pair_missing(result: &BenchResult, why: &str) -> CheckResult {
    let counted = match (result.completed, result.failed) {
        (Some(c), Some(f)) => format!("; the load tool counted {c} completed and {f} failed"),
        (Some(c), None) => format!("; the load tool counted {c} completed"),
        _ => String::new(),
    };
    CheckResult::new(
        T15,
        Status::Unknown,
        format!("can't tell: {why}, so the server's counts cannot be compared{counted}"),
    )
    .found(PairMissing {
        missing_input: why.to_string(),
        bench_completed: result.completed,
        bench_failed: result.failed,
    })
}

/// Can't tell: the plausibility gate refused a value compared.
fn refused(bad: &Implausible, result_file: &str) -> CheckResult {
    CheckResult::new(T15, Status::Unknown, cannot_tell(bad)).found(Refused {
        implausible: bad.to_string(),
        result_file: result_file.to_string(),
    })
}

pub fn check(
    engine: Engine,
    pair: &Pair<'_>,
    result: &BenchResult,
    result_file: &str,
    expected_extra: i64,
) -> CheckResult {
    let m = engine.metrics();
    // Refused values in what T15 compares: can't tell (plausible.rs).
    let bad = pair
        .implausible(&[m.requests_finished, m.generation_tokens])
        .or_else(|| result.implausible.first());
    if let Some(bad) = bad {
        return refused(bad, result_file);
    }
    let deltas = pair
        .delta(m.requests_finished, &[], None)
        .and_then(|done| Ok((done, pair.delta(m.generation_tokens, &[], None)?)));
    let (done, tokens) = match deltas {
        Err(restart) => {
            return CheckResult::new(T15, Status::Unknown, restart.describe())
                .found(restart.evidence());
        }
        Ok(d) => d,
    };
    let missing = format!(
        "a server counter ({} or {}) is missing from a snapshot",
        m.requests_finished, m.generation_tokens
    );
    let (status, message, counts) =
        compare(done, tokens, missing, result, result_file, expected_extra);
    CheckResult::new(T15, status, message).found(counts)
}

/// The server's finished requests and generated tokens against the load tool's counts:
/// the status, the message and the counts compared. `missing` is the message when a
/// server count is absent.
pub fn compare(
    done: Option<f64>,
    tokens: Option<f64>,
    missing: String,
    result: &BenchResult,
    result_file: &str,
    expected_extra: i64,
) -> (Status, String, Counts) {
    let mut counts = Counts {
        client_completed: result.completed,
        client_failed: result.failed,
        client_output_tokens: result.total_output_tokens,
        server_finished: done,
        server_output_tokens: tokens,
        expected_extra_requests: expected_extra,
        result_file: result_file.to_string(),
        extra_requests: None,
        extra_output_tokens: None,
        replicas: None,
        with_warmup_window: None,
    };
    let (Some(done), Some(tokens)) = (done, tokens) else {
        return (Status::Unknown, missing, counts);
    };
    let (Some(completed), Some(client_tokens)) = (result.completed, result.total_output_tokens)
    else {
        let message = format!("{result_file} lacks `completed` or `total_output_tokens`");
        return (Status::Unknown, message, counts);
    };
    let extra = done.trunc() as i64 - completed;
    counts.extra_requests = Some(extra);
    if extra > expected_extra {
        let message = format!(
            "the server finished {} more request{} than the load tool sent: other traffic \
             shared the server during the run",
            extra - expected_extra,
            if extra - expected_extra == 1 { "" } else { "s" }
        );
        return (Status::Fail, message, counts);
    }
    if extra < expected_extra {
        let message = format!(
            "the load tool counted {} more completed request{} than the server finished",
            expected_extra - extra,
            if expected_extra - extra == 1 { "" } else { "s" }
        );
        return (Status::Fail, message, counts);
    }
    let per = if completed == 0 {
        0.0
    } else {
        client_tokens as f64 / completed as f64
    };
    let extra_tokens = tokens - client_tokens as f64;
    counts.extra_output_tokens = Some(extra_tokens);
    let allowed = expected_extra as f64 * per.max(1.0) * 1.5;
    if !(0.0..=allowed).contains(&extra_tokens) {
        let message = format!(
            "requests agree, but the server generated {} output tokens and the load tool \
             counted {}",
            thousands(tokens),
            thousands(client_tokens as f64)
        );
        return (Status::Warn, message, counts);
    }
    let mut message = format!(
        "client and server agree: {completed} completed requests, {} output tokens",
        thousands(client_tokens as f64)
    );
    if extra > 0 {
        message.push_str(&format!(
            ", plus {extra} untimed request{} (test or warm-up)",
            if extra == 1 { "" } else { "s" }
        ));
    }
    (Status::Pass, message, counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::AiperfServer;
    use crate::counters::RestartEvidence;
    use crate::docs::Row;
    use crate::input::InputError;
    use crate::json::Json;
    use crate::rules::absent::settle;
    use crate::rules::outcome::RunOutcome;
    use crate::rules::scope::window::Window;
    use crate::rules::scope::ReplicaScope;
    use crate::rules::testing::{said, series, snapshot, Folder};
    use crate::snapshot::Snapshot;

    const FILE: &str = "run/bench.json";

    /// The evidence as `results.json` writes it.
    fn written(r: &CheckResult) -> String {
        Json::Obj(r.evidence()).to_compact()
    }

    /// vLLM's finished-requests and generated-tokens counters; a count of `None` leaves
    /// its counter out.
    fn counters(finished: Option<f64>, tokens: Option<f64>, wall: f64) -> Snapshot {
        let mut text = String::new();
        if let Some(f) = finished {
            text.push_str(&format!("vllm:request_success_total{{engine=\"0\"}} {f}\n"));
        }
        if let Some(t) = tokens {
            text.push_str(&format!(
                "vllm:generation_tokens_total{{engine=\"0\"}} {t}\n"
            ));
        }
        snapshot(&text, wall)
    }

    fn counts(r: &CheckResult) -> &Counts {
        r.finding::<Counts>().expect("T15's counts")
    }

    fn result(completed: i64, failed: i64, tokens: i64) -> BenchResult {
        BenchResult {
            completed: Some(completed),
            failed: Some(failed),
            total_output_tokens: Some(tokens),
            ..BenchResult::default()
        }
    }

    /// T15 on a server that finished `finished` requests and generated `tokens` tokens,
    /// against a load tool that counted 10 completed, 1 failed and 1,000 tokens.
    fn judged(finished: f64, tokens: f64, extra: i64) -> CheckResult {
        let (b, a) = (
            counters(Some(0.0), Some(0.0), 0.0),
            counters(Some(finished), Some(tokens), 60.0),
        );
        check(
            Engine::Vllm,
            &Pair::new(&b, &a),
            &result(10, 1, 1000),
            FILE,
            extra,
        )
    }

    #[test]
    fn agreeing_counts_pass() {
        let r = judged(10.0, 1000.0, 0);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "client and server agree: 10 completed requests, 1,000 output tokens"
            )
        );
        assert_eq!(
            written(&r),
            r#"{"client_completed": 10, "client_failed": 1, "client_output_tokens": 1000, "server_finished": 10.0, "server_output_tokens": 1000.0, "expected_extra_requests": 0, "result_file": "run/bench.json", "extra_requests": 0, "extra_output_tokens": 0.0}"#
        );
        let c = counts(&r);
        assert_eq!(
            (c.server_finished, c.extra_requests, c.extra_output_tokens),
            (Some(10.0), Some(0), Some(0.0))
        );
        assert_eq!((c.replicas, c.with_warmup_window), (None, None));
        // The load tool's test request, expected, and its tokens.
        let r = judged(11.0, 1100.0, 1);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(r
            .message
            .ends_with(", plus 1 untimed request (test or warm-up)"));
    }

    #[test]
    fn other_traffic_or_uncounted_requests_fail_and_extra_tokens_warn() {
        let r = judged(12.0, 1200.0, 0);
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "the server finished 2 more requests than the load tool sent: other traffic \
                 shared the server during the run"
            )
        );
        let c = counts(&r);
        assert_eq!((c.extra_requests, c.extra_output_tokens), (Some(2), None));
        let r = judged(9.0, 1000.0, 0);
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "the load tool counted 1 more completed request than the server finished"
            )
        );
        let r = judged(10.0, 1500.0, 0);
        assert_eq!(
            said(&r),
            (
                Status::Warn,
                "requests agree, but the server generated 1,500 output tokens and the load tool \
                 counted 1,000"
            )
        );
        assert_eq!(counts(&r).extra_output_tokens, Some(500.0));
    }

    #[test]
    fn a_missing_count_a_refused_value_or_a_restart_cannot_tell() {
        let (b, a) = (
            counters(Some(0.0), None, 0.0),
            counters(Some(10.0), Some(1000.0), 60.0),
        );
        let r = check(
            Engine::Vllm,
            &Pair::new(&b, &a),
            &result(10, 1, 1000),
            FILE,
            0,
        );
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "a server counter (vllm:request_success_total or vllm:generation_tokens_total) \
                 is missing from a snapshot"
            )
        );
        assert_eq!(
            written(&r),
            r#"{"client_completed": 10, "client_failed": 1, "client_output_tokens": 1000, "server_finished": 10.0, "server_output_tokens": null, "expected_extra_requests": 0, "result_file": "run/bench.json"}"#
        );
        assert_eq!(counts(&r).server_output_tokens, None);
        assert_eq!(counts(&r).extra_requests, None);
        let b = counters(Some(0.0), Some(0.0), 0.0);
        let no_count = BenchResult {
            completed: None,
            ..result(10, 1, 1000)
        };
        let r = check(Engine::Vllm, &Pair::new(&b, &a), &no_count, FILE, 0);
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "run/bench.json lacks `completed` or `total_output_tokens`"
            )
        );
        assert_eq!(counts(&r).client_completed, None);
        assert_eq!(r.evidence_value("client_completed"), Some(Json::Null));
        let mut refused = counters(Some(10.0), Some(1000.0), 60.0);
        refused.implausible.push(crate::plausible::Implausible::new(
            "run/after.snapshot.json",
            Some(3),
            "vllm:generation_tokens_total",
            f64::NAN,
            crate::plausible::Why::NotANumber,
        ));
        let r = check(
            Engine::Vllm,
            &Pair::new(&b, &refused),
            &result(10, 1, 1000),
            FILE,
            0,
        );
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message
                .starts_with("can't tell from an implausible value: run/after.snapshot.json:3"),
            "{}",
            r.message
        );
        assert_eq!(
            written(&r),
            r#"{"implausible": "run/after.snapshot.json:3: vllm:generation_tokens_total = NaN is not a number", "result_file": "run/bench.json"}"#
        );
        let e = r.finding::<Refused>().unwrap();
        assert!(e.implausible.ends_with("= NaN is not a number"));
        let down = counters(Some(5.0), Some(1000.0), 60.0);
        let (b, _) = (counters(Some(8.0), Some(0.0), 0.0), ());
        let r = check(
            Engine::Vllm,
            &Pair::new(&b, &down),
            &result(10, 1, 1000),
            FILE,
            0,
        );
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("vllm:request_success_total"),
            "{}",
            r.message
        );
        assert_eq!(
            written(&r),
            r#"{"restarted": true, "counter": "vllm:request_success_total", "before": 8.0, "after": 5.0}"#
        );
        let e = r.finding::<RestartEvidence>().unwrap();
        assert_eq!((e.before, e.after), (8.0, 5.0));
    }

    #[test]
    fn a_server_down_or_a_broken_run_cannot_tell_and_says_what_the_load_counted() {
        let down = ServerDown {
            reason: "it did not answer its health check after the probe".into(),
        };
        let r = server_down(&down);
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .starts_with("the server was down before the load started: it did not"));
        assert_eq!(
            written(&r),
            r#"{"server_down": "it did not answer its health check after the probe"}"#
        );
        assert_eq!(r.finding::<DownBefore>().unwrap().server_down, down.reason);
        let r = pair_missing(&result(10, 2, 1000), "no snapshot after the load");
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "can't tell: no snapshot after the load, so the server's counts cannot be \
                 compared; the load tool counted 10 completed and 2 failed"
            )
        );
        assert_eq!(
            written(&r),
            r#"{"missing_input": "no snapshot after the load", "bench_completed": 10, "bench_failed": 2}"#
        );
        let e = r.finding::<PairMissing>().unwrap();
        assert_eq!((e.bench_completed, e.bench_failed), (Some(10), Some(2)));
        let r = pair_missing(&BenchResult::default(), "why");
        assert_eq!(
            r.message,
            "can't tell: why, so the server's counts cannot be compared"
        );
        assert_eq!(written(&r), r#"{"missing_input": "why"}"#);
    }

    #[test]
    fn the_run_reads_the_pair_and_the_result() {
        let (b, a) = (
            counters(Some(0.0), Some(0.0), 0.0),
            counters(Some(10.0), Some(1000.0), 60.0),
        );
        let pair = Pair::new(&b, &a);
        let bench = result(10, 1, 1000);
        let folder = Folder::default();
        let mut cx = folder.scope();
        // Nothing given: no result.
        assert_eq!(settle(T15, run(&cx)), None);
        cx.pair = Input::Present(&pair);
        cx.bench = Input::Present(&bench);
        let r = settle(T15, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        // An unusable result.
        let e = InputError::new(FILE, None, "not JSON");
        cx.bench = Input::Unusable(&e);
        let r = settle(T15, run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (Status::Unknown, "unusable input: run/bench.json: not JSON")
        );
        // A run that broke before its second snapshot: what the load tool counted.
        cx.bench = Input::Present(&bench);
        cx.pair = Input::Missing(Gap::Run("no snapshot after the load".into()));
        let r = settle(T15, run(&cx)).unwrap();
        assert!(
            r.message
                .starts_with("can't tell: no snapshot after the load"),
            "{}",
            r.message
        );
        // A server down before a load that was not given: left out.
        let down = ServerDown {
            reason: "down".into(),
        };
        cx.down = Some(&down);
        assert_eq!(settle(T15, run(&cx)), None);
    }

    #[test]
    fn a_run_without_a_result_cannot_tell_when_the_server_was_read() {
        let folder = Folder {
            outcome: RunOutcome {
                after_missing: Some("the run broke before its after snapshot".into()),
                ..RunOutcome::default()
            },
            ..Folder::default()
        };
        let r = settle(T15, run(&folder.scope())).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "can't tell: the run broke before its after snapshot"
            )
        );
        let b = counters(Some(0.0), Some(0.0), 0.0);
        let pair = Pair::new(&b, &b);
        let folder = Folder::default();
        let mut cx = folder.scope();
        cx.pair = Input::Present(&pair);
        let r = settle(T15, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("no load-tool counts to compare"),
            "{}",
            r.message
        );
        cx.load_ran = false;
        assert_eq!(settle(T15, run(&cx)), None);
    }

    fn tokens(t: f64) -> Row {
        Row {
            generation_tokens: Some(t),
            ..Row::default()
        }
    }

    /// A phase whose bracketing readings show `outer` tokens generated and whose inner
    /// ones show `inner`.
    fn window(outer: f64, inner: f64) -> Window {
        Window {
            inner: series(Engine::Vllm, vec![tokens(10.0), tokens(10.0 + inner)]),
            before: tokens(0.0),
            after: tokens(outer),
        }
    }

    fn phase_of(output_tokens: Option<i64>) -> crate::bench::Phase {
        crate::bench::Phase {
            completed: Some(10),
            failed: Some(0),
            output_tokens,
            ..crate::bench::Phase::default()
        }
    }

    fn phase_scope<'a>(p: &'a crate::bench::Phase, w: Input<'a, Window>) -> PhaseScope<'a> {
        PhaseScope {
            phase: p,
            window: w,
            engine: Engine::Vllm,
            facts: None,
            usable_blocks: None,
            tool: "GuideLLM 0.8.1",
        }
    }

    #[test]
    fn a_phase_passes_within_its_readings_and_warns_outside_them() {
        let p = phase_of(Some(1000));
        let w = window(1100.0, 900.0);
        let r = settle(T15, phase(&phase_scope(&p, Input::Present(&w)))).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(r.message.starts_with(
            "client and server agree: the load tool counted 1,000 output tokens and the server \
             generated between 900 and 1,100 over the phase"
        ), "{}", r.message);
        assert_eq!(
            written(&r),
            r#"{"client_completed": 10, "client_failed": 0, "client_output_tokens": 1000, "server_output_tokens_at_least": 900.0, "server_output_tokens_at_most": 1100.0}"#
        );
        let e = r.finding::<PhaseTokens>().unwrap();
        assert_eq!(
            (
                e.server_output_tokens_at_least,
                e.server_output_tokens_at_most
            ),
            (900.0, 1100.0)
        );
        let w = window(990.0, 900.0);
        let r = settle(T15, phase(&phase_scope(&p, Input::Present(&w)))).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(r
            .message
            .contains("requests are compared for the whole run only"));
        // No token count from the load tool, or a restart at the edges: can't tell.
        let none = phase_of(None);
        let r = settle(T15, phase(&phase_scope(&none, Input::Present(&w)))).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "GuideLLM 0.8.1's result gives no output-token count for this phase"
            )
        );
        assert_eq!(written(&r), "{}");
        let back = Window {
            after: tokens(-5.0),
            ..window(0.0, 0.0)
        };
        let r = settle(T15, phase(&phase_scope(&p, Input::Present(&back)))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("vllm:generation_tokens_total"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_phase_without_its_readings_says_what_the_conversion_says() {
        let p = phase_of(Some(1000));
        assert_eq!(settle(T15, phase(&phase_scope(&p, Input::NotGiven))), None);
        let gap = Gap::Phase("the series does not cover the phase".into());
        let r = settle(T15, phase(&phase_scope(&p, Input::Missing(gap)))).unwrap();
        assert_eq!(
            said(&r),
            (Status::Unknown, "the series does not cover the phase")
        );
        let e = InputError::new("run/run.series.jsonl", Some(4), "not JSON");
        let r = settle(T15, phase(&phase_scope(&p, Input::Unusable(&e)))).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "unusable input: run/run.series.jsonl:4: not JSON"
            )
        );
    }

    fn replica<'a>(id: &'a str, pair: Input<'a, Pair<'a>>) -> ReplicaScope<'a> {
        ReplicaScope {
            id,
            engine: Engine::Vllm,
            pair,
            after: Input::NotGiven,
            series: Input::NotGiven,
            gauge_steps: None,
            share: None,
            scrape_s: None,
        }
    }

    fn fleet_scope<'a>(
        replicas: &'a [ReplicaScope<'a>],
        results: &'a [Vec<CheckResult>],
        bench: Option<(&'a BenchResult, &'a str)>,
    ) -> FleetScope<'a> {
        FleetScope {
            replicas,
            replica_results: results,
            requested: None,
            step_s: None,
            scrape_s: None,
            bench,
            expected_extra: 0,
            down: false,
        }
    }

    #[test]
    fn a_fleet_sums_its_replicas() {
        let zero = counters(Some(0.0), Some(0.0), 0.0);
        let (a, b) = (
            counters(Some(6.0), Some(600.0), 60.0),
            counters(Some(4.0), Some(400.0), 60.0),
        );
        let (pa, pb) = (Pair::new(&zero, &a), Pair::new(&zero, &b));
        let reps = [
            replica("a", Input::Present(&pa)),
            replica("b", Input::Present(&pb)),
        ];
        let results = [Vec::new(), Vec::new()];
        let bench = result(10, 1, 1000);
        let r = settle(
            T15,
            fleet(&fleet_scope(&reps, &results, Some((&bench, FILE)))),
        )
        .unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "summed over 2 replicas: client and server agree: 10 completed requests, 1,000 \
                 output tokens"
            )
        );
        assert_eq!(
            written(&r),
            r#"{"client_completed": 10, "client_failed": 1, "client_output_tokens": 1000, "server_finished": 10.0, "server_output_tokens": 1000.0, "expected_extra_requests": 0, "result_file": "run/bench.json", "extra_requests": 0, "extra_output_tokens": 0.0, "replicas": 2}"#
        );
        assert_eq!(counts(&r).replicas, Some(2));
        let bench = result(9, 1, 1000);
        let r = settle(
            T15,
            fleet(&fleet_scope(&reps, &results, Some((&bench, FILE)))),
        )
        .unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
    }

    #[test]
    fn a_fleet_without_a_replicas_readings_or_a_result_cannot_tell() {
        let zero = counters(Some(0.0), Some(0.0), 0.0);
        let a = counters(Some(6.0), Some(600.0), 60.0);
        let gap = Gap::Replica {
            id: "b".into(),
            what: "after.snapshot.json".into(),
        };
        let pa = Pair::new(&zero, &a);
        let reps = [
            replica("a", Input::Present(&pa)),
            replica("b", Input::Missing(gap)),
        ];
        let results = [Vec::new(), Vec::new()];
        let bench = result(10, 1, 1000);
        let r = settle(
            T15,
            fleet(&fleet_scope(&reps, &results, Some((&bench, FILE)))),
        )
        .unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "b has no usable before and after readings, so the replicas' sum can't be \
                 compared with the load tool's 10 completed requests"
            )
        );
        assert_eq!(
            written(&r),
            r#"{"unknown": "b", "result_file": "run/bench.json"}"#
        );
        assert_eq!(r.finding::<Blind>().unwrap().unknown, "b");
        // No load-tool result, or a server down before the load (the run's T15 said so).
        assert_eq!(
            settle(T15, fleet(&fleet_scope(&reps, &results, None))),
            None
        );
        let mut cx = fleet_scope(&reps, &results, Some((&bench, FILE)));
        cx.down = true;
        assert_eq!(settle(T15, fleet(&cx)), None);
    }

    /// AIPerf's scrape with the finished-requests and generated-tokens counters.
    fn scraped(finished: f64, tokens: f64) -> AiperfServer {
        let text = format!(
            r#"{{"aiperf_version": "0.13.0", "metrics": {{
                "vllm:request_success": {{"type": "counter", "series": [{{"stats": {{"total": {finished}}}}}]}},
                "vllm:generation_tokens": {{"type": "counter", "series": [{{"stats": {{"total": {tokens}}}}}]}}}}}}"#
        );
        AiperfServer::read("aiperf/server_metrics_export.json", text.as_bytes()).unwrap()
    }

    fn scrape_scope<'a>(s: &'a AiperfServer, bench: Input<'a, BenchResult>) -> ScrapeScope<'a> {
        ScrapeScope {
            engine: Engine::Vllm,
            scrape: s,
            file: "aiperf/server_metrics_export.json",
            requested: None,
            bench,
            bench_file: FILE,
            manifest: None,
            load_ran: true,
        }
    }

    #[test]
    fn a_scrape_is_read_against_the_load_tools_counts() {
        let s = scraped(10.0, 1000.0);
        let bench = result(10, 1, 1000);
        let r = settle(T15, scrape(&scrape_scope(&s, Input::Present(&bench)))).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message.ends_with("counters over its measured window)"),
            "{}",
            r.message
        );
        assert_eq!(
            written(&r),
            r#"{"client_completed": 10, "client_failed": 1, "client_output_tokens": 1000, "server_finished": 10.0, "server_output_tokens": 1000.0, "expected_extra_requests": 0, "result_file": "run/bench.json", "extra_requests": 0, "extra_output_tokens": 0.0, "scrape_file": "aiperf/server_metrics_export.json", "sampled_every_ms": null}"#
        );
        assert_eq!(counts(&r).with_warmup_window, None);
        let s = scraped(11.0, 1100.0);
        let r = settle(T15, scrape(&scrape_scope(&s, Input::Present(&bench)))).unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
    }

    #[test]
    fn a_scrape_after_a_warm_up_counts_both_windows() {
        // AIPerf's 3 warm-up and 8 measured requests of 30 tokens each.
        let path = format!(
            "{}/../fixtures/loadtools/aiperf-warmup/server_metrics_export.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let s = AiperfServer::read("s.json", &std::fs::read(path).unwrap()).unwrap();
        let bench = BenchResult {
            untimed: Some(3),
            ..result(8, 0, 240)
        };
        let r = settle(T15, scrape(&scrape_scope(&s, Input::Present(&bench)))).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message.contains("plus 3 untimed requests")
                && r.message.contains("counters over its warm-up and"),
            "{}",
            r.message
        );
        let c = counts(&r);
        assert_eq!(
            (
                c.expected_extra_requests,
                c.server_finished,
                c.with_warmup_window
            ),
            (3, Some(11.0), Some(true))
        );
        let keys: Vec<String> = r.evidence().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys[keys.len() - 4..],
            [
                "extra_output_tokens",
                "with_warmup_window",
                "scrape_file",
                "sampled_every_ms"
            ]
        );
    }

    #[test]
    fn a_scrape_without_a_usable_result_says_what_the_conversion_says() {
        let s = scraped(10.0, 1000.0);
        let r = settle(T15, scrape(&scrape_scope(&s, Input::NotGiven))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("no load-tool counts to compare"),
            "{}",
            r.message
        );
        let mut cx = scrape_scope(&s, Input::NotGiven);
        cx.load_ran = false;
        assert_eq!(settle(T15, scrape(&cx)), None);
        let e = InputError::new(FILE, Some(2), "not JSON");
        let r = settle(T15, scrape(&scrape_scope(&s, Input::Unusable(&e)))).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "unusable input: run/bench.json:2: not JSON"
            )
        );
        let gap = Gap::Run("the load tool left no result file in the folder".into());
        let r = settle(T15, scrape(&scrape_scope(&s, Input::Missing(gap)))).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "can't tell: the load tool left no result file in the folder"
            )
        );
    }
}
