//! "What limited this run": at most three findings — the cache or the
//! concurrency, the waiting, the pace — each computed from the inputs with its formula
//! stated next to the code.

use serde::Serialize;

use crate::bench::BenchResult;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::num::{fixed, thousands};
use crate::rules::load_figures;
use crate::rules::t08_concurrency_not_reached::explain_cap;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::rules::{t01_silent_preemption as t01, t08_concurrency_not_reached as t08};
use crate::series::{present, Field, Series};

use super::cache::CacheMath;
use super::format::wait_ms;
use super::summary::Summary;

/// One "what limited this run" finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    pub key: String,
    pub title: String,
    pub text: String,
    /// `limit` or `ok`.
    pub tone: String,
}

/// What the findings draw on.
pub struct LimitInputs<'a> {
    pub engine: Engine,
    pub checks: &'a [CheckResult],
    pub summary: &'a Summary,
    pub cache: Option<&'a CacheMath>,
    pub facts: Option<&'a BootFacts>,
    pub bench: Option<&'a BenchResult>,
    pub series: Option<&'a Series>,
    /// The series' sample times (`Series::times`), computed once by the caller.
    pub times: &'a [f64],
    pub requested: Option<i64>,
    /// Requests admission control rejected (from the boot log).
    pub rejected: Option<usize>,
}

fn limit(key: &str, title: String, text: String, ok: bool) -> Limit {
    Limit {
        key: key.to_string(),
        title,
        text,
        tone: if ok { "ok" } else { "limit" }.to_string(),
    }
}

fn find(checks: &[CheckResult], n: Tripwire) -> Option<&CheckResult> {
    checks
        .iter()
        .find(|c| c.tripwire == n && c.source.is_none())
}

/// "preempted 22 running requests" with the engine's verb, when T1 counted any.
pub fn evicted_phrase(engine: Engine, checks: &[CheckResult]) -> Option<String> {
    let k = t01::preemptions(find(checks, Tripwire::SilentPreemption)?)?;
    (k > 0.0).then(|| {
        format!(
            "{} {} running request{}",
            engine.eviction_verb(),
            crate::num::shortest(k),
            if k == 1.0 { "" } else { "s" }
        )
    })
}

/// ", 16 of them rejected by admission control" when known.
fn rejected_clause(rejected: Option<usize>) -> String {
    match rejected {
        Some(k) if k > 0 => format!(" ({k} of them rejected by admission control)"),
        _ => String::new(),
    }
}

pub fn build(inputs: &LimitInputs<'_>) -> Vec<Limit> {
    if inputs.summary.restart.is_some() {
        return Vec::new();
    }
    let t8 = find(inputs.checks, Tripwire::ConcurrencyNotReached);
    let short = t8.is_some_and(|c| c.status == Status::Fail);
    let peak = t8.and_then(t08::peak_running).map(crate::num::shortest);
    let evicted = evicted_phrase(inputs.engine, inputs.checks);
    let mut out = Vec::new();
    let concurrency_text = || {
        let open = match inputs.requested {
            Some(r) => format!(
                "The load kept {r} requests open{}",
                rejected_clause(inputs.rejected)
            ),
            None => "The load sent more requests".to_string(),
        };
        // A fleet's T8 sums its replicas: say so, with each one's share.
        let server = match t8.and_then(t08::peak_each) {
            Some(each) => format!(
                "the replicas together ran at most {} at once ({each})",
                peak.clone().unwrap_or_default()
            ),
            None => format!(
                "the server ran at most {} at once",
                peak.clone().unwrap_or_default()
            ),
        };
        let mut text = format!("{open}, but {server}.");
        if let Some(cap) = inputs.facts.and_then(BootFacts::running_cap_info) {
            let peak_n = t8.and_then(t08::peak_running).unwrap_or(0.0);
            if peak_n >= cap.cap as f64 {
                text.push_str(&format!(" {}.", capitalise(&explain_cap(&cap))));
            }
        }
        text
    };
    match inputs.cache {
        Some(c) => out.push(cache_finding(
            c,
            short,
            peak.as_deref(),
            evicted.as_deref(),
            &concurrency_text,
        )),
        None if short => {
            let mut text = concurrency_text();
            if let Some(e) = &evicted {
                text.push_str(&format!(" It also {e}."));
            }
            out.push(limit(
                "concurrency",
                "Fewer requests ran at once than the load sent".into(),
                text,
                false,
            ));
        }
        None => {}
    }
    if let Some(w) = waiting(inputs, short) {
        out.push(w);
    }
    if let Some(p) = pace(inputs) {
        out.push(p);
    }
    // At most three findings: this one only where there is room.
    if let Some(m) = missing_load(inputs.checks).filter(|_| out.len() < 3) {
        out.push(m);
    }
    out
}

/// Why the findings are short when the load's own figures are missing: T8 and T15 can't
/// tell, each with the flag that decides it (`rules::load_figures`).
fn missing_load(checks: &[CheckResult]) -> Option<Limit> {
    let undecided = |n: Tripwire| {
        find(checks, n)
            .filter(|c| c.status == Status::Unknown)
            .and_then(load_figures::decide_with)
            .map(str::to_string)
    };
    let mut parts = Vec::new();
    if let Some(flag) = undecided(Tripwire::ConcurrencyNotReached) {
        parts.push(format!(
            "whether the server ran as many requests at once as the load asked for (T8: {flag})"
        ));
    }
    if let Some(flag) = undecided(Tripwire::ClientServerMismatch) {
        parts.push(format!(
            "whether the load tool's counts match the server's (T15: {flag})"
        ));
    }
    if parts.is_empty() {
        return None;
    }
    Some(limit(
        "load-figures",
        "The load tool's own figures are missing".into(),
        format!(
            "Without them this report cannot say {}. Give them to `inferlint analyze RUN`.",
            parts.join(", nor ")
        ),
        false,
    ))
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The cache: need = n · A against the pool.
fn cache_finding(
    c: &CacheMath,
    short: bool,
    peak: Option<&str>,
    evicted: Option<&str>,
    concurrency_text: &dyn Fn() -> String,
) -> Limit {
    let pool = thousands(c.pool as f64);
    let need = thousands(c.need);
    if c.need > c.pool as f64 {
        let mut text = format!(
            "The cache holds {pool} tokens; the load, {}, needs {need} to run to the end \
             together, so {} fit at full length.",
            c.load_text(),
            c.fit
        );
        let mut made_room = Vec::new();
        if short {
            made_room.push(format!(
                "ran at most {} at once and queued the rest",
                peak.unwrap_or("?")
            ));
        }
        if let Some(e) = evicted {
            made_room.push(e.to_string());
        }
        if !made_room.is_empty() {
            text.push_str(&format!(
                " To make room the server {}.",
                made_room.join(", and ")
            ));
        }
        limit(
            "cache",
            "The cache was too small for the load".into(),
            text,
            false,
        )
    } else if short {
        let text = format!(
            "The cache holds {pool} tokens, enough for the load ({need}). {}",
            concurrency_text()
        );
        limit(
            "cache",
            "The cache had room; something else held requests back".into(),
            text,
            false,
        )
    } else {
        let text = format!(
            "The cache holds {pool} tokens; the load, {}, needs {need} at full length, {}% \
             of it.",
            c.load_text(),
            fixed(c.need / c.pool as f64 * 100.0, 0)
        );
        limit("cache", "The cache held the whole load".into(), text, true)
    }
}

/// The waiting: the load tool's median and p99 time to first token, else the server's mean queue
/// time.
fn waiting(inputs: &LimitInputs<'_>, short: bool) -> Option<Limit> {
    let b = inputs.bench;
    if let (Some(med), Some(p99)) = (
        b.and_then(|b| b.median_ttft_ms),
        b.and_then(|b| b.p99_ttft_ms),
    ) {
        if med != 0.0 && p99 != 0.0 {
            let (m, p) = (wait_ms(med), wait_ms(p99));
            if p99 > (3.0 * med).max(med + 1000.0) {
                let mut text = format!(
                    "Half the requests got their first token within {m}; the slowest (p99) \
                     waited {p}."
                );
                if short {
                    text.push_str(" They were queued until running requests ended.");
                }
                return Some(limit(
                    "waiting",
                    "Some requests waited far longer to start".into(),
                    text,
                    false,
                ));
            }
            if med >= 2000.0 {
                let mut text = format!(
                    "Half the requests waited more than {m} for their first token (p99 {p})."
                );
                if short {
                    text.push_str(" Most of it was time in the queue.");
                }
                return Some(limit(
                    "waiting",
                    "Requests waited long to start".into(),
                    text,
                    false,
                ));
            }
            return Some(limit(
                "waiting",
                "No request waited long to start".into(),
                format!("Half the requests got their first token within {m}; p99 {p}."),
                true,
            ));
        }
    }
    let q = inputs.summary.mean_queue_s?;
    (q >= 1.0).then(|| {
        limit(
            "waiting",
            "Requests waited in the queue".into(),
            format!(
                "A request waited {} seconds on average before the server started it.",
                fixed(q, 1)
            ),
            false,
        )
    })
}

/// The busy average from the recording: Σ(running·dt)/Σdt over pairs whose first sample
/// has requests running, and Σmax(Δtokens, 0)/Σdt over those pairs with both token values.
pub fn busy_average(series: &Series, t: &[f64]) -> Option<(f64, Option<f64>)> {
    let rows = &series.rows;
    if rows.len() < 2 || t.len() != rows.len() {
        return None;
    }
    let (running, tokens) = (
        rows.column(Field::Running),
        rows.column(Field::GenerationTokens),
    );
    let (mut busy, mut weighted, mut tok, mut tok_dt) = (0.0, 0.0, 0.0, 0.0);
    for k in 0..rows.len() - 1 {
        let dt = t[k + 1] - t[k];
        let Some(r) = present(running[k]) else {
            continue;
        };
        if r > 0.0 && dt > 0.0 {
            busy += dt;
            weighted += r * dt;
            if let (Some(g0), Some(g1)) = (present(tokens[k]), present(tokens[k + 1])) {
                tok += (g1 - g0).max(0.0);
                tok_dt += dt;
            }
        }
    }
    (busy > 0.0).then(|| (weighted / busy, (tok_dt > 0.0).then(|| tok / tok_dt)))
}

/// The pace: how many of the n requests were busy on average.
fn pace(inputs: &LimitInputs<'_>) -> Option<Limit> {
    let n = inputs.requested?;
    let nf = n as f64;
    let open = format!(
        "The load kept {n} requests open{}",
        rejected_clause(inputs.rejected)
    );
    let client_tps = inputs.bench.and_then(|b| b.output_throughput);
    if !inputs.engine.gauges_lag() {
        if let Some((mean, rec_tps)) = inputs.series.and_then(|s| busy_average(s, inputs.times)) {
            let mut text = format!(
                "{open}; the recording shows {} running on average while the server was busy",
                fixed(mean, 1)
            );
            match (client_tps, rec_tps) {
                (Some(c), _) => text.push_str(&format!(
                    ", and the load tool measured {} output tokens/s over the whole run.",
                    thousands(c)
                )),
                (None, Some(r)) => {
                    text.push_str(&format!(", generating {} output tokens/s.", thousands(r)))
                }
                (None, None) => text.push('.'),
            }
            let title = format!("On average {} of {n} requests ran at once", fixed(mean, 0));
            return Some(pace_limit(mean, nf, title, text));
        }
    }
    // TPOT · throughput: requests between their first and last token on average.
    let s = inputs.summary;
    let tpot = inputs.bench.and_then(|b| b.mean_tpot_ms).or_else(|| {
        let (lat, ttft, out, done) = (s.mean_latency_s?, s.mean_ttft_s?, s.output_tokens?, s.done?);
        let per = out / done;
        (per > 1.0 && lat - ttft > 0.0).then(|| 1000.0 * (lat - ttft) / (per - 1.0))
    })?;
    let c = client_tps?;
    let avg = (c * tpot / 1000.0).min(nf);
    let mut text = format!(
        "The load tool measured {} output tokens/s at {} ms per output token, so on average \
         {} of the {n} requests were between their first and last token ({} × {} s). That \
         counts paused requests too; it is not the number running.",
        thousands(c),
        fixed(tpot, 1),
        fixed(avg, 1),
        thousands(c),
        fixed(tpot / 1000.0, 4)
    );
    if inputs.engine.gauges_lag() && inputs.series.is_some() {
        text.push_str(&format!(
            " {}'s running gauge moves only when a request completes, so the recording cannot \
             give the number running.",
            inputs.engine.display()
        ));
    }
    let title = format!(
        "On average {} of {n} requests were between their first and last token",
        fixed(avg, 0)
    );
    Some(pace_limit(avg, nf, title, text))
}

fn pace_limit(avg: f64, n: f64, title: String, text: String) -> Limit {
    if avg >= 0.9 * n {
        limit("pace", "The run kept its requests busy".into(), text, true)
    } else {
        limit("pace", title, text, false)
    }
}
