//! T22: requests failed, were refused or broke off while the load tool's headline figures
//! count only the successes (docs/tripwires.md#t22). The load tool's own counts decide;
//! its error texts say why, and the server's own counts of aborted requests and error
//! responses confirm it, or show refusals the load tool did not count.

use serde::Serialize;

use super::load_figures;
use crate::bench::{BenchResult, ErrorGroup, Phase};
use crate::counters::Pair;
use crate::engine::{Engine, FAILED_REASONS, GENERATION_ENDPOINTS};
use crate::num::{fixed, plural, thousands_int};
use crate::rules::absent::Judged;
use crate::rules::scope::{PhaseScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T22: Tripwire = Tripwire::FailuresHidden;

/// More than this share of the requests sent failing fails the run; fewer warn.
pub const FAIL_SHARE: f64 = 0.10;

/// The load's requests: how many were sent, completed and failed, why, and what the
/// headline figures become per request sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Failures {
    pub requests_sent: Option<i64>,
    pub requests_completed: Option<i64>,
    pub requests_failed: Option<i64>,
    /// The result gives no failure count: failed is its requests less its completed ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_counted_as: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_share: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorGroup>,
    /// The headline throughput, which counts only the completed requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_completed: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_sent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerRefusals>,
}

/// What the server itself counted between the snapshots.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerRefusals {
    /// Requests ended by abort or error (by finish reason, or SGLang's abort counter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errored: Option<f64>,
    /// Turned away by admission control.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<f64>,
    /// Error responses on the generating endpoints ("/v1/completions 4xx: 16").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub http_errors: Vec<String>,
    #[serde(skip)]
    pub http_error_count: f64,
}

impl ServerRefusals {
    fn total(&self) -> f64 {
        let counted = [self.aborted, self.errored, self.rejected];
        counted.iter().flatten().sum::<f64>() + self.http_error_count
    }

    /// "the server counted 16 HTTP error responses (/v1/completions 4xx: 16)".
    fn said(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.http_errors.is_empty() {
            parts.push(format!(
                "{} ({})",
                plural(self.http_error_count, "HTTP error response"),
                self.http_errors.join(", ")
            ));
        }
        for (n, what) in [
            (self.aborted, "aborted request"),
            (self.errored, "request ended by an error"),
            (self.rejected, "request turned away by admission control"),
        ] {
            if let Some(n) = n.filter(|&n| n > 0.0) {
                parts.push(plural(n, what));
            }
        }
        (!parts.is_empty()).then(|| format!("the server counted {}", parts.join(", ")))
    }
}

/// A T22 result's counts.
pub fn failures(r: &CheckResult) -> Option<&Failures> {
    r.finding::<Failures>()
}

/// The server's own counts of requests that did not end normally.
pub fn server_refusals(engine: Engine, pair: &Pair<'_>) -> ServerRefusals {
    let m = engine.metrics();
    let reason = |r: &str| {
        m.finished_reason_label
            .and_then(|l| pair.grew(m.requests_finished, &[(l, r)]))
    };
    let [abort, error] = FAILED_REASONS;
    let mut s = ServerRefusals {
        aborted: m
            .aborted
            .and_then(|c| pair.grew(c, &[]))
            .or_else(|| reason(abort)),
        errored: reason(error),
        rejected: m.rejected.and_then(|c| pair.grew(c, &[])),
        ..ServerRefusals::default()
    };
    let Some(h) = &m.http else {
        return s;
    };
    let mut seen: Vec<(String, String)> = Vec::new();
    for x in pair.after.metrics.select(h.name, &[]) {
        let (Some(ep), Some(st)) = (x.label(h.endpoint), x.label(h.status)) else {
            continue;
        };
        let key = (ep.to_string(), st.to_string());
        if GENERATION_ENDPOINTS.contains(&ep) && st.starts_with(['4', '5']) && !seen.contains(&key)
        {
            seen.push(key);
        }
    }
    for (ep, st) in seen {
        if let Some(n) = pair.grew(
            h.name,
            &[(h.endpoint, ep.as_str()), (h.status, st.as_str())],
        ) {
            if n > 0.0 {
                s.http_errors.push(format!("{ep} {st}: {}", fixed(n, 0)));
                s.http_error_count += n;
            }
        }
    }
    s
}

/// What a judgement of failures reads: the load tool's counts for the run or a phase.
struct Counts<'a> {
    tool: &'a str,
    completed: Option<i64>,
    failed: Option<i64>,
    /// Requests the result says it sent (vLLM's `num_prompts`), for a result without a
    /// failure count.
    sent: Option<i64>,
    output_tokens: Option<i64>,
    duration: Option<f64>,
    output_throughput: Option<f64>,
    errors: &'a [ErrorGroup],
}

impl<'a> Counts<'a> {
    fn of_result(b: &'a BenchResult) -> Counts<'a> {
        Counts {
            tool: b.tool_name(),
            completed: b.completed,
            failed: b.failed,
            sent: b.num_prompts,
            output_tokens: b.total_output_tokens,
            duration: b.duration,
            output_throughput: b.output_throughput,
            errors: &b.errors,
        }
    }

    fn of_phase(p: &'a Phase, tool: &'a str) -> Counts<'a> {
        Counts {
            tool,
            completed: p.completed,
            failed: p.failed,
            sent: None,
            output_tokens: p.output_tokens,
            duration: p.duration,
            output_throughput: p
                .output_tokens
                .zip(p.duration.filter(|d| *d > 0.0))
                .map(|(t, d)| t as f64 / d),
            errors: &[],
        }
    }
}

/// The whole run: the load tool's counts, and the server's between the snapshots.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.bench.is_given() {
        return load_figures::no_result(cx, T22, "no load-tool counts of failed requests");
    }
    let b = cx.bench.need()?;
    let server = cx
        .pair
        .present()
        .map(|p| server_refusals(cx.snapshot_engine, p));
    Ok(judge(&Counts::of_result(b), server))
}

/// One phase of a sweep: its own counts (the server's are read for the whole run only).
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    Ok(judge(&Counts::of_phase(cx.phase, cx.tool), None))
}

/// The counts' verdict: fail past [`FAIL_SHARE`], warn below it or on refusals only the
/// server counted, pass when nothing failed.
fn judge(c: &Counts<'_>, server: Option<ServerRefusals>) -> CheckResult {
    let tool = c.tool;
    let Some(completed) = c.completed else {
        return unknown(format!(
            "{tool}'s result gives no count of completed requests"
        ));
    };
    let (failed, derived) = match (c.failed, c.sent) {
        (Some(f), _) => (f, None),
        (None, Some(sent)) if sent >= completed => (sent - completed, Some("sent less completed")),
        (None, _) => {
            return unknown(format!(
                "{tool}'s result gives no count of failed requests, so failures it left out \
                 of its figures can't be ruled out"
            ))
        }
    };
    let sent = completed + failed;
    let mut e = Failures {
        requests_sent: Some(sent),
        requests_completed: Some(completed),
        requests_failed: Some(failed),
        failed_counted_as: derived,
        failed_share: (sent > 0).then(|| failed as f64 / sent as f64),
        errors: c.errors.to_vec(),
        server,
        ..Failures::default()
    };
    per_request_sent(c, &mut e);
    let (status, message) = if failed == 0 {
        none_failed(c, &e)
    } else {
        some_failed(c, &e)
    };
    CheckResult::new(T22, status, message).found(e)
}

fn unknown(message: String) -> CheckResult {
    CheckResult::new(T22, Status::Unknown, message).found(Failures::default())
}

/// The headline figures against the requests sent.
fn per_request_sent(c: &Counts<'_>, e: &mut Failures) {
    let (Some(sent), Some(done)) = (e.requests_sent, e.requests_completed) else {
        return;
    };
    let duration = c.duration.filter(|d| *d > 0.0);
    e.output_throughput = c.output_throughput;
    e.completed_per_s = duration.map(|d| done as f64 / d);
    e.sent_per_s = duration.map(|d| sent as f64 / d);
    if let Some(t) = c.output_tokens {
        e.output_tokens_per_completed = (done > 0).then(|| t as f64 / done as f64);
        e.output_tokens_per_sent = (sent > 0).then(|| t as f64 / sent as f64);
    }
}

/// Nothing failed by the load tool's count; the server may still have refused some.
fn none_failed(c: &Counts<'_>, e: &Failures) -> (Status, String) {
    let sent = e.requests_sent.unwrap_or(0);
    let counted = match e.failed_counted_as {
        Some(_) => format!(
            "{} gives no failure count, but all {} requests it sent completed",
            c.tool,
            thousands_int(sent)
        ),
        None => format!(
            "{}: all {} requests sent completed, none failed",
            c.tool,
            thousands_int(sent)
        ),
    };
    match &e.server {
        Some(s) if s.total() > 0.0 => (
            Status::Warn,
            format!(
                "{counted}, yet {} during the run: requests the load tool does not count as \
                 failed (another client, or retries the tool hid)",
                s.said().unwrap_or_default()
            ),
        ),
        Some(_) => (
            Status::Pass,
            format!("{counted}; the server counted no refused or aborted request"),
        ),
        None => (Status::Pass, counted),
    }
}

/// Some failed: how many, why, and the figures per request sent.
fn some_failed(c: &Counts<'_>, e: &Failures) -> (Status, String) {
    let (sent, done, failed) = (
        e.requests_sent.unwrap_or(0),
        e.requests_completed.unwrap_or(0),
        e.requests_failed.unwrap_or(0),
    );
    let share = e.failed_share.unwrap_or(1.0);
    let status = if share > FAIL_SHARE {
        Status::Fail
    } else {
        Status::Warn
    };
    let mut msg = if done == 0 {
        format!(
            "every one of the {} requests {} sent failed: the run measured no answer at all",
            thousands_int(sent),
            c.tool
        )
    } else {
        format!(
            "{} of the {} requests {} sent failed ({}%), and its figures count only the {} that \
             succeeded{}",
            thousands_int(failed),
            thousands_int(sent),
            c.tool,
            fixed(share * 100.0, 1),
            thousands_int(done),
            figures_per_sent(e)
        )
    };
    if !e.errors.is_empty() {
        let why: Vec<String> = e
            .errors
            .iter()
            .take(3)
            .map(|g| format!("{} × \"{}\"", g.count, g.text))
            .collect();
        msg.push_str(&format!("; why: {}", why.join("; ")));
    }
    if let Some(said) = e.server.as_ref().and_then(ServerRefusals::said) {
        msg.push_str(&format!("; {said}"));
    }
    (status, msg)
}

/// ": 309.8 output tokens/s and 0.31 requests/s; per request sent, 500 output tokens
/// each instead of 1,000, with 0.62 requests/s sent".
fn figures_per_sent(e: &Failures) -> String {
    let mut parts = Vec::new();
    let headline: Vec<String> = [
        e.output_throughput
            .map(|t| format!("{} output tokens/s", fixed(t, 1))),
        e.completed_per_s
            .map(|r| format!("{} requests/s", fixed(r, 2))),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !headline.is_empty() {
        parts.push(headline.join(" and "));
    }
    if let (Some(sent), Some(done)) = (e.output_tokens_per_sent, e.output_tokens_per_completed) {
        let rate = e
            .sent_per_s
            .map(|r| format!(", with {} requests/s sent", fixed(r, 2)))
            .unwrap_or_default();
        parts.push(format!(
            "per request sent, {} output tokens each instead of {}{rate}",
            fixed(sent, 1),
            fixed(done, 1)
        ));
    }
    match parts.len() {
        0 => String::new(),
        _ => format!(" ({})", parts.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::absent::{settle, Input};
    use crate::rules::testing::{said, snapshot, Folder};

    fn result(completed: Option<i64>, failed: Option<i64>) -> BenchResult {
        BenchResult {
            completed,
            failed,
            total_output_tokens: completed.map(|c| c * 100),
            duration: Some(10.0),
            output_throughput: completed.map(|c| c as f64 * 10.0),
            tool: Some("GuideLLM 0.8.1".into()),
            ..BenchResult::default()
        }
    }

    fn judged(b: &BenchResult, pair: Option<&Pair<'_>>) -> CheckResult {
        let folder = Folder::default();
        let mut cx = folder.scope();
        cx.bench = Input::Present(b);
        if let Some(p) = pair {
            cx.pair = Input::Present(p);
        }
        settle(T22, run(&cx)).expect("a result")
    }

    const SERVER_BEFORE: &str = "vllm:request_success_total{finished_reason=\"length\"} 1\n\
        vllm:request_success_total{finished_reason=\"abort\"} 0\n\
        http_requests_total{handler=\"/v1/completions\",method=\"POST\",status=\"2xx\"} 1\n";

    #[test]
    fn nothing_failed_passes_with_the_counts_read() {
        let r = judged(&result(Some(32), Some(0)), None);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "GuideLLM 0.8.1: all 32 requests sent completed, none failed"
            )
        );
        assert_eq!(failures(&r).unwrap().requests_sent, Some(32));
        // A result without a failure count, whose requests all completed.
        let mut b = result(Some(32), None);
        b.num_prompts = Some(32);
        let r = judged(&b, None);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(
            failures(&r).unwrap().failed_counted_as,
            Some("sent less completed")
        );
    }

    #[test]
    fn failures_past_a_tenth_fail_with_their_reasons_and_the_server_counts() {
        let mut b = result(Some(8), Some(16));
        b.errors = crate::bench::errors::group([("Bad Request", 16)]);
        let before = snapshot(SERVER_BEFORE, 10.0);
        let after = snapshot(
            "vllm:request_success_total{finished_reason=\"length\"} 9\n\
             vllm:request_success_total{finished_reason=\"abort\"} 0\n\
             http_requests_total{handler=\"/v1/completions\",method=\"POST\",status=\"2xx\"} 9\n\
             http_requests_total{handler=\"/v1/completions\",method=\"POST\",status=\"4xx\"} 16\n\
             http_requests_total{handler=\"/tokenize\",method=\"POST\",status=\"4xx\"} 3\n",
            20.0,
        );
        let pair = Pair::new(&before, &after);
        let r = judged(&b, Some(&pair));
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert_eq!(
            r.message,
            "16 of the 24 requests GuideLLM 0.8.1 sent failed (66.7%), and its figures count \
             only the 8 that succeeded (80.0 output tokens/s and 0.80 requests/s; per request \
             sent, 33.3 output tokens each instead of 100.0, with 2.40 requests/s sent); why: \
             16 × \"Bad Request\"; the server counted 16 HTTP error responses \
             (/v1/completions 4xx: 16)"
        );
        let f = failures(&r).unwrap();
        assert_eq!(f.server.as_ref().unwrap().aborted, Some(0.0));
    }

    #[test]
    fn few_failures_warn_and_a_whole_failed_load_says_it_measured_nothing() {
        let r = judged(&result(Some(95), Some(5)), None);
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        let r = judged(&result(Some(0), Some(24)), None);
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "every one of the 24 requests GuideLLM 0.8.1 sent failed: the run measured no \
                 answer at all"
            )
        );
    }

    #[test]
    fn refusals_only_the_server_counted_warn() {
        let before = snapshot(SERVER_BEFORE, 10.0);
        let after = snapshot(
            "vllm:request_success_total{finished_reason=\"length\"} 33\n\
             vllm:request_success_total{finished_reason=\"abort\"} 2\n",
            20.0,
        );
        let pair = Pair::new(&before, &after);
        let r = judged(&result(Some(32), Some(0)), Some(&pair));
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message.contains("the server counted 2 aborted requests"),
            "{}",
            r.message
        );
    }

    #[test]
    fn no_failure_count_or_no_result_cannot_tell() {
        let r = judged(&result(Some(32), None), None);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("gives no count of failed requests"),
            "{}",
            r.message
        );
        let r = judged(&result(None, Some(0)), None);
        assert_eq!(r.status, Status::Unknown);
        // No result, the server read: can't tell and the flag that decides.
        let folder = Folder::default();
        let mut cx = folder.scope();
        let (b, a) = (snapshot("", 1.0), snapshot("", 2.0));
        let pair = Pair::new(&b, &a);
        cx.pair = Input::Present(&pair);
        let r = settle(T22, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(r.message.contains("--bench-result FILE"), "{}", r.message);
        // Nothing was loaded: no result at all.
        cx.load_ran = false;
        assert_eq!(settle(T22, run(&cx)), None);
    }

    #[test]
    fn a_phase_is_judged_on_its_own_counts() {
        let p = Phase {
            concurrency: Some(8),
            completed: Some(0),
            failed: Some(8),
            output_tokens: Some(0),
            duration: Some(4.0),
            ..Phase::default()
        };
        let cx = PhaseScope {
            phase: &p,
            window: Input::NotGiven,
            engine: Engine::Vllm,
            facts: None,
            usable_blocks: None,
            tool: "AIPerf 0.13.0",
            recorded: true,
            load_cpu: None,
        };
        let r = settle(T22, phase(&cx)).unwrap();
        assert_eq!(r.status, Status::Fail);
        assert!(r
            .message
            .starts_with("every one of the 8 requests AIPerf 0.13.0 sent"));
    }
}
