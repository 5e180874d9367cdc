//! The per-phase tripwires (checks/README.md, "Phases"): T1, T8, T9, T10 and T15 on one
//! phase's window, each by the run-level check itself where the series carries what it
//! reads. Counts come from the readings bracketing the phase, so they are known to the
//! series' sampling; a count that cannot be placed in one phase is "can't tell".

use super::window::{Edges, Window};
use crate::bench::Phase;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::num::{plural, shortest, thousands};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::rules::{
    t01_silent_preemption as t01_preemption, t08_concurrency_not_reached as t08_concurrency,
    t09_falling_ceiling as t09_ceiling, t10_integer_second_timer as t10_rate,
};
use crate::series::Series;

/// What every phase's checks draw on besides its window.
pub struct Context<'a> {
    pub engine: Engine,
    pub facts: Option<&'a BootFacts>,
    /// From the run's T14, for T9's ceiling in whole blocks.
    pub usable_blocks: Option<u64>,
    /// "GuideLLM 0.8.1", for messages.
    pub tool: &'a str,
}

/// "to the series' sampling (a reading every 0.25 s)", without the interval when the
/// series' header gives none.
fn resolution(series: &Series) -> String {
    series.interval_s.map_or_else(
        || "to the series' sampling".to_string(),
        |i| {
            format!(
                "to the series' sampling (a reading every {} s)",
                shortest(i)
            )
        },
    )
}

/// The five checks, in number order.
pub fn judge(phase: &Phase, w: &Window, cx: &Context<'_>) -> Vec<CheckResult> {
    [
        t1(w, cx),
        t8(phase, w, cx),
        t9(w, cx),
        t10(w, cx),
        t15(phase, w, cx),
    ]
    .into_iter()
    .map(phase_words)
    .collect()
}

/// The same check for every tripwire when the phase cannot be read at all.
pub fn unknown_all(reason: &str) -> Vec<CheckResult> {
    [
        Tripwire::SilentPreemption,
        Tripwire::ConcurrencyNotReached,
        Tripwire::FallingCeiling,
        Tripwire::IntegerSecondTimer,
        Tripwire::ClientServerMismatch,
    ]
    .into_iter()
    .map(|t| CheckResult::new(t, Status::Unknown, reason.to_string()))
    .collect()
}

/// Evictions between the bracketing readings; when there are some, between the readings
/// inside the phase too: only those are surely this phase's.
fn t1(w: &Window, cx: &Context<'_>) -> CheckResult {
    if cx.engine.metrics().evictions.is_none() {
        // TensorRT-LLM: its paused gauge over the phase's own readings.
        return t01_preemption::check(
            cx.engine,
            &Edges::new(cx.engine, &w.before, &w.after).pair(),
            Some(&w.inner),
            None,
        );
    }
    let outer = Edges::new(cx.engine, &w.before, &w.after);
    let r = t01_preemption::check(cx.engine, &outer.pair(), None, None);
    if r.status != Status::Fail || r.evidence("restarted").is_some() {
        return r;
    }
    let inner = w.inner_ends().map(|(a, b)| {
        t01_preemption::check(cx.engine, &Edges::new(cx.engine, &a, &b).pair(), None, None)
    });
    match inner {
        Some(i) if i.status == Status::Fail => i,
        _ => {
            let n = r
                .evidence("preemptions")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            CheckResult::new(
                Tripwire::SilentPreemption,
                Status::Unknown,
                format!(
                    "{} in the sampling interval at the phase's edge, none between the \
                     readings inside it: the series, read {}, can't tell whether they fell \
                     in this phase or beside it",
                    plural(n, cx.engine.eviction_word()),
                    resolution(&w.inner)
                ),
            )
            .with("preemptions_at_edge", n)
        }
    }
}

/// The requested concurrency against the running gauge inside the phase; a rate-based
/// phase asks for none.
fn t8(phase: &Phase, w: &Window, cx: &Context<'_>) -> CheckResult {
    let peak = w.inner.peak_running();
    match phase.concurrency.filter(|&c| c > 0) {
        Some(c) => t08_concurrency::check(&w.inner, c, cx.facts),
        None => {
            let reached = peak.map_or_else(
                || "the phase's readings have no running-requests value".to_string(),
                |p| format!("the server ran up to {} at once", shortest(p)),
            );
            match phase.rate {
                Some(rate) => CheckResult::new(
                    Tripwire::ConcurrencyNotReached,
                    Status::NotApplicable,
                    format!(
                        "a rate-based phase ({} requests/s) asks for no concurrency; {reached}",
                        shortest(rate)
                    ),
                )
                .with("request_rate", rate),
                None => CheckResult::new(
                    Tripwire::ConcurrencyNotReached,
                    Status::Unknown,
                    format!(
                        "{}'s result does not say what this phase asked for; {reached}",
                        cx.tool
                    ),
                ),
            }
            .with("peak_running", peak)
        }
    }
}

fn t9(w: &Window, cx: &Context<'_>) -> CheckResult {
    t09_ceiling::check(&w.inner, cx.usable_blocks)
}

/// The generation rate between the first and last reading inside the phase.
fn t10(w: &Window, cx: &Context<'_>) -> CheckResult {
    match w.inner_ends() {
        Some((a, b)) => t10_rate::check(
            &Edges::new(cx.engine, &a, &b).pair(),
            cx.engine.metrics().generation_tokens,
        ),
        None => fewer_than_two(Tripwire::IntegerSecondTimer, &w.inner),
    }
}

/// The phase's output tokens against the server's between the readings: at least the
/// inner pair's delta, at most the outer pair's.
fn t15(phase: &Phase, w: &Window, cx: &Context<'_>) -> CheckResult {
    let base = |status, msg: String| CheckResult::new(Tripwire::ClientServerMismatch, status, msg);
    let Some(client) = phase.output_tokens else {
        return base(
            Status::Unknown,
            format!(
                "{}'s result gives no output-token count for this phase",
                cx.tool
            ),
        );
    };
    let tokens = |a: &crate::series::Row, b: &crate::series::Row| -> Result<Option<f64>, String> {
        let e = Edges::new(cx.engine, a, b);
        e.pair()
            .delta(cx.engine.metrics().generation_tokens, &[], None)
            .map_err(|restart| restart.describe())
    };
    let outer = match tokens(&w.before, &w.after) {
        Err(why) => return base(Status::Unknown, why),
        Ok(None) => {
            return base(
                Status::Unknown,
                "the series has no generated-tokens reading at the phase's edges".into(),
            )
        }
        Ok(Some(t)) => t,
    };
    let inner = match w.inner_ends().map(|(a, b)| tokens(&a, &b)) {
        Some(Err(why)) => return base(Status::Unknown, why),
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
        resolution(&w.inner)
    );
    let requests = "requests are compared for the whole run only (the series holds no \
                    finished-requests counter)";
    if (inner..=outer).contains(&c) {
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
    }
}

fn fewer_than_two(tripwire: Tripwire, inner: &Series) -> CheckResult {
    CheckResult::new(
        tripwire,
        Status::Unknown,
        format!(
            "{} inside the phase: too few to measure it {}",
            match inner.rows.len() {
                0 => "no reading".to_string(),
                n => plural(n as f64, "reading"),
            },
            resolution(inner)
        ),
    )
}

/// A run-level message said of the phase.
fn phase_words(mut r: CheckResult) -> CheckResult {
    r.message = r
        .message
        .replace("during the run", "during the phase")
        .replace("of this run", "of this phase");
    r
}
