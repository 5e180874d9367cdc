//! T15: the load tool's counts and the server's counters must agree; a difference means
//! other traffic shared the server, or the client counted work the server did not do
//! (docs/tripwires.md#t15).

use super::load_figures;
use super::server_down::ServerDown;
use crate::bench::aiperf_server::{Reading, Seen};
use crate::bench::BenchResult;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::thousands;
use crate::plausible::cannot_tell;
use crate::rules::absent::{Absent, Gap, Input, Judged};
use crate::rules::scope::{FleetScope, PhaseScope, RunScope, ScrapeScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::window::Edges;

const T15: Tripwire = Tripwire::ClientServerMismatch;

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
        base(status, msg)
            .with("client_completed", phase.completed)
            .with("client_failed", phase.failed)
            .with("client_output_tokens", client)
            .with("server_output_tokens_at_least", inner)
            .with("server_output_tokens_at_most", outer)
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
            return Ok(
                CheckResult::new(T15, Status::Unknown, crate::plausible::cannot_tell(bad))
                    .with("implausible", bad.to_string())
                    .with("result_file", result_file),
            );
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
                    T15,
                    Status::Unknown,
                    format!("replica {}: {}", run.id, restart.describe()),
                );
                r.evidence = restart.evidence();
                return Ok(r);
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
        .with("unknown", blind.join(", "))
        .with("result_file", result_file));
    }
    let missing = format!(
        "a server counter ({} or {}) is missing from a snapshot",
        counters.0, counters.1
    );
    let mut r = compare(done, tokens, missing, result, result_file, expected_extra);
    r.message = format!("summed over {} replicas: {}", runs.len(), r.message);
    r.set("replicas", runs.len());
    Ok(r)
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
        let r = CheckResult::new(T15, Status::Unknown, cannot_tell(bad))
            .with("implausible", bad.to_string())
            .with("result_file", result_file);
        return Ok(cx.sourced(r, Seen::Counters));
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
        let r = CheckResult::new(T15, Status::Unknown, cannot_tell(bad))
            .with("implausible", bad.to_string())
            .with("result_file", result_file);
        return Ok(cx.sourced(r, Seen::Counters));
    }
    let [done, tokens] = counts.map(|c| match c {
        Reading::Value(v) => Some(v),
        _ => None,
    });
    let missing = format!(
        "a server counter ({} or {}) is missing from {}'s scrape",
        m.requests_finished, m.generation_tokens, s.tool
    );
    let mut r = compare(
        done,
        tokens,
        missing,
        result,
        result_file,
        warmup.unwrap_or(0),
    );
    if warmup.is_none() {
        return Ok(cx.sourced(r, Seen::Counters));
    }
    r.set("with_warmup_window", true);
    Ok(cx.sourced(r, Seen::CountersWithWarmup))
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
    .with("server_down", down.reason.as_str())
}

/// T15 when the run broke before its second snapshot: can't tell, with what the load
/// tool counted, so failed requests are never left unsaid.
pub fn pair_missing(result: &BenchResult, why: &str) -> CheckResult {
    let counted = match (result.completed, result.failed) {
        (Some(c), Some(f)) => format!("; the load tool counted {c} completed and {f} failed"),
        (Some(c), None) => format!("; the load tool counted {c} completed"),
        _ => String::new(),
    };
    let mut r = CheckResult::new(
        T15,
        Status::Unknown,
        format!("can't tell: {why}, so the server's counts cannot be compared{counted}"),
    )
    .with("missing_input", why);
    if let Some(c) = result.completed {
        r.set("bench_completed", c);
    }
    if let Some(f) = result.failed {
        r.set("bench_failed", f);
    }
    r
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
        return CheckResult::new(T15, Status::Unknown, crate::plausible::cannot_tell(bad))
            .with("implausible", bad.to_string())
            .with("result_file", result_file);
    }
    let deltas = pair
        .delta(m.requests_finished, &[], None)
        .and_then(|done| Ok((done, pair.delta(m.generation_tokens, &[], None)?)));
    let (done, tokens) = match deltas {
        Err(restart) => {
            let mut r = CheckResult::new(T15, Status::Unknown, restart.describe());
            r.evidence = restart.evidence();
            return r;
        }
        Ok(d) => d,
    };
    let missing = format!(
        "a server counter ({} or {}) is missing from a snapshot",
        m.requests_finished, m.generation_tokens
    );
    compare(done, tokens, missing, result, result_file, expected_extra)
}

/// The server's finished requests and generated tokens against the load tool's counts;
/// `missing` is the message when a server count is absent.
pub fn compare(
    done: Option<f64>,
    tokens: Option<f64>,
    missing: String,
    result: &BenchResult,
    result_file: &str,
    expected_extra: i64,
) -> CheckResult {
    let mut r = CheckResult::new(T15, Status::Unknown, String::new())
        .with("client_completed", result.completed)
        .with("client_failed", result.failed)
        .with("client_output_tokens", result.total_output_tokens)
        .with("server_finished", done)
        .with("server_output_tokens", tokens)
        .with("expected_extra_requests", expected_extra)
        .with("result_file", result_file);
    let (Some(done), Some(tokens)) = (done, tokens) else {
        r.message = missing;
        return r;
    };
    let (Some(completed), Some(client_tokens)) = (result.completed, result.total_output_tokens)
    else {
        r.message = format!("{result_file} lacks `completed` or `total_output_tokens`");
        return r;
    };
    let extra = done.trunc() as i64 - completed;
    r.set("extra_requests", extra);
    if extra > expected_extra {
        r.status = Status::Fail;
        r.message = format!(
            "the server finished {} more request{} than the load tool sent: other traffic \
             shared the server during the run",
            extra - expected_extra,
            if extra - expected_extra == 1 { "" } else { "s" }
        );
        return r;
    }
    if extra < expected_extra {
        r.status = Status::Fail;
        r.message = format!(
            "the load tool counted {} more completed request{} than the server finished",
            expected_extra - extra,
            if expected_extra - extra == 1 { "" } else { "s" }
        );
        return r;
    }
    let per = if completed == 0 {
        0.0
    } else {
        client_tokens as f64 / completed as f64
    };
    let extra_tokens = tokens - client_tokens as f64;
    r.set("extra_output_tokens", extra_tokens);
    let allowed = expected_extra as f64 * per.max(1.0) * 1.5;
    if !(0.0..=allowed).contains(&extra_tokens) {
        r.status = Status::Warn;
        r.message = format!(
            "requests agree, but the server generated {} output tokens and the load tool \
             counted {}",
            thousands(tokens),
            thousands(client_tokens as f64)
        );
        return r;
    }
    r.status = Status::Pass;
    r.message = format!(
        "client and server agree: {completed} completed requests, {} output tokens",
        thousands(client_tokens as f64)
    );
    if extra > 0 {
        r.message.push_str(&format!(
            ", plus {extra} untimed request{} (test or warm-up)",
            if extra == 1 { "" } else { "s" }
        ));
    }
    r
}
