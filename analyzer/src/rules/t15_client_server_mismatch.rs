//! T15: the load tool's counts and the server's counters must agree; a difference means
//! other traffic shared the server, or the client counted work the server did not do
//! (checks.md §7).

use super::server_down::ServerDown;
use crate::bench::BenchResult;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::thousands;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// T15 when the server was down before the load: can't tell, and why (not a disagreement
/// between the load tool's failures and a server that was not there).
pub fn server_down(down: &ServerDown) -> CheckResult {
    CheckResult::new(
        Tripwire::ClientServerMismatch,
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
        Tripwire::ClientServerMismatch,
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
        return CheckResult::new(
            Tripwire::ClientServerMismatch,
            Status::Unknown,
            crate::plausible::cannot_tell(bad),
        )
        .with("implausible", bad.to_string())
        .with("result_file", result_file);
    }
    let deltas = pair
        .delta(m.requests_finished, &[], None)
        .and_then(|done| Ok((done, pair.delta(m.generation_tokens, &[], None)?)));
    let (done, tokens) = match deltas {
        Err(restart) => {
            let mut r = CheckResult::new(
                Tripwire::ClientServerMismatch,
                Status::Unknown,
                restart.describe(),
            );
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
    let mut r = CheckResult::new(
        Tripwire::ClientServerMismatch,
        Status::Unknown,
        String::new(),
    )
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
