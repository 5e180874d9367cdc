//! T23: the load tool's latencies against the server's own histograms of the same
//! requests (docs/tripwires.md#t23). The client times each request from its side, the
//! server from its own; the client's figure is the server's plus the path between them.
//!
//! Three measures, each the client's mean against the server's histogram between the
//! before and after readings: time to first token, time between tokens, end-to-end
//! latency. The server may have served more requests than the client counted (the
//! client's test and warm-up requests, the recorder's probe), so its buckets bound the
//! mean of the client's part (`histogram::Delta::bounds`). A client mean below the lower
//! bound by more than [`IMPOSSIBLE_SHARE`] and [`IMPOSSIBLE_MS`] is impossible (**fail**):
//! the client timed something else. A client mean above the upper bound by at least
//! [`GAP_SHARE`] and the measure's floor ([`Measure::floor_ms`]) **warns**: something the
//! server's timer leaves out (a proxy, the network, the client's own queue, the server's
//! HTTP front end) is in the figure.

use serde::Serialize;

use crate::bench::BenchResult;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::histogram::{self, Delta};
use crate::num::{fixed, shortest};
use crate::plausible;
use crate::rules::absent::{Absent, Gap, Input, Judged};
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T23: Tripwire = Tripwire::LatencyMismatch;

/// A client mean this far below what the server took (as a share of it)…
pub const IMPOSSIBLE_SHARE: f64 = 0.05;
/// …and at least this many ms below is impossible: clocks and rounding explain less.
pub const IMPOSSIBLE_MS: f64 = 1.0;
/// Seconds a request may seem to outlast the readings around it, for their own timing.
pub const CLOCK_SLACK_S: f64 = 1.0;
/// A client mean above the server's by this share of it (and the measure's floor) warns.
pub const GAP_SHARE: f64 = 0.25;

/// One of the three latencies compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    FirstToken,
    BetweenTokens,
    EndToEnd,
}

impl Measure {
    pub const ALL: [Measure; 3] = [
        Measure::FirstToken,
        Measure::BetweenTokens,
        Measure::EndToEnd,
    ];

    fn key(self) -> &'static str {
        match self {
            Measure::FirstToken => "time_to_first_token",
            Measure::BetweenTokens => "time_between_tokens",
            Measure::EndToEnd => "end_to_end",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Measure::FirstToken => "time to first token",
            Measure::BetweenTokens => "time between tokens",
            Measure::EndToEnd => "end-to-end latency",
        }
    }

    /// The least gap that warns, in ms: about what a network hop or a proxy adds to a
    /// request (first token, whole request), or to each token.
    pub fn floor_ms(self) -> f64 {
        match self {
            Measure::FirstToken | Measure::EndToEnd => 50.0,
            Measure::BetweenTokens => 5.0,
        }
    }
}

/// One measure, as compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Compared {
    pub measure: &'static str,
    pub status: &'static str,
    /// The server's histogram.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ms: Option<f64>,
    /// How many observations the client's mean covers (requests, or gaps between tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_count: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_count: Option<f64>,
    /// The server's mean over everything it observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_mean_ms: Option<f64>,
    /// The bounds on the server's mean over the client's part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_low_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_high_ms: Option<f64>,
    /// The client's mean less the server's figure the verdict rests on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_pct: Option<f64>,
    /// Why it was not compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The client's time between tokens is below the server's: its stream carried several
    /// tokens in a piece, so the two are not measured alike (a warning, never a failure).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pieces: bool,
}

/// T23's evidence: each measure as compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latencies {
    pub tool: String,
    pub measures: Vec<Compared>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// Why the server's histograms do not run on the wall clock, when they do not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<String>,
}

/// The measures a T23 result compared.
pub fn latencies(r: &CheckResult) -> Option<&Latencies> {
    r.finding::<Latencies>()
}

/// The client's side of one measure: its mean in ms and how many observations it covers.
pub struct ClientSide {
    pub mean_ms: Option<f64>,
    pub count: Option<f64>,
}

/// The client's figure for a measure, from its result; `per_request` says the engine's
/// time-between-tokens histogram holds one mean per request.
pub fn client_side(b: &BenchResult, m: Measure, per_request: bool) -> ClientSide {
    let n = b.completed.map(|c| c as f64).filter(|&c| c > 0.0);
    let gaps = b
        .total_output_tokens
        .zip(b.completed)
        .map(|(t, c)| (t - c) as f64)
        .filter(|&g| g > 0.0);
    match m {
        Measure::FirstToken => ClientSide {
            mean_ms: b.mean_ttft_ms,
            count: n,
        },
        Measure::EndToEnd => ClientSide {
            mean_ms: b.mean_e2el_ms,
            count: n,
        },
        Measure::BetweenTokens if per_request => ClientSide {
            mean_ms: b.mean_tpot_ms,
            count: n,
        },
        // Every gap of every request: the decoding time over the gaps, else the tool's
        // own mean over its streamed pieces.
        Measure::BetweenTokens => {
            let pooled = match (b.mean_e2el_ms, b.mean_ttft_ms, n, gaps) {
                (Some(e), Some(t), Some(n), Some(g)) => Some((e - t) * n / g),
                _ => b.mean_itl_ms,
            };
            ClientSide {
                mean_ms: pooled,
                count: gaps,
            }
        }
    }
}

/// The server's histogram of a measure: its name and its delta between the readings.
fn server_side(
    engine: Engine,
    pair: &Pair<'_>,
    m: Measure,
) -> Result<(String, Option<Delta>), crate::counters::Restart> {
    let names = engine.metrics();
    let candidates: Vec<&str> = match m {
        Measure::FirstToken => vec![names.ttft],
        Measure::EndToEnd => vec![names.e2e_latency],
        Measure::BetweenTokens => names.itl.names.to_vec(),
    };
    for name in &candidates {
        if let Some(d) = histogram::delta(pair, name)? {
            return Ok((name.to_string(), Some(d)));
        }
    }
    Ok((candidates.join(" or "), None))
}

/// Compares one measure.
pub fn compare(
    m: Measure,
    client: &ClientSide,
    metric: String,
    server: Option<&Delta>,
) -> Compared {
    let mut c = Compared {
        measure: m.key(),
        status: Status::Unknown.as_str(),
        metric: Some(metric.clone()),
        client_ms: client.mean_ms,
        client_count: client.count,
        server_count: server.map(|d| d.count),
        server_mean_ms: server.and_then(Delta::mean).map(|x| x * 1000.0),
        ..Compared::default()
    };
    let Some(client_ms) = client.mean_ms else {
        c.why_not = Some(format!(
            "the load tool's result gives no mean {}",
            m.words()
        ));
        return c;
    };
    let Some(d) = server else {
        c.why_not = Some(format!("{metric} is missing from a snapshot"));
        return c;
    };
    let Some(k) = client.count else {
        c.why_not = Some("the load tool's result does not say how many it measured".into());
        return c;
    };
    let Some(b) = d.bounds(k) else {
        c.why_not = Some(format!(
            "the server observed {} against the load tool's {}, so they are not the same \
             requests",
            shortest(d.count),
            shortest(k)
        ));
        return c;
    };
    let (low, high) = (b.low * 1000.0, b.high * 1000.0);
    c.server_low_ms = Some(low);
    c.server_high_ms = Some(high);
    let below = low - client_ms > (low * IMPOSSIBLE_SHARE).max(IMPOSSIBLE_MS);
    let (status, against) = if below && m == Measure::BetweenTokens {
        // Not impossible: a first piece that holds several tokens moves their decoding
        // into the client's time to first token, and its gaps look shorter.
        c.pieces = true;
        (Status::Warn, low)
    } else if below {
        (Status::Fail, low)
    } else if client_ms - high >= (high * GAP_SHARE).max(m.floor_ms()) {
        (Status::Warn, high)
    } else {
        (Status::Pass, c.server_mean_ms.unwrap_or(high))
    };
    c.status = status.as_str();
    c.gap_ms = Some(client_ms - against);
    c.gap_pct = (against > 0.0).then(|| (client_ms - against) / against * 100.0);
    c
}

/// "time to first token: the load tool's mean 812 ms, the server's 640 ms (+172 ms,
/// +27%)", naming a bound when the server also served others.
fn said(c: &Compared, m: Measure) -> String {
    let ms = |x: f64| format!("{} ms", fixed(x, 1));
    let (Some(client), Some(gap)) = (c.client_ms, c.gap_ms) else {
        return format!(
            "{}: {}",
            m.words(),
            c.why_not.as_deref().unwrap_or("not compared")
        );
    };
    let (low, high) = (
        c.server_low_ms.unwrap_or(0.0),
        c.server_high_ms.unwrap_or(0.0),
    );
    let server = if (high - low).abs() < 1e-9 {
        format!("the server's {}", ms(high))
    } else if c.status == "fail" || c.pieces {
        format!("the server's at least {} for those requests", ms(low))
    } else if c.status == "warn" {
        format!("the server's at most {} for those requests", ms(high))
    } else {
        format!(
            "the server's {} over everything it served ({}–{} for those requests)",
            ms(c.server_mean_ms.unwrap_or(high)),
            fixed(low, 1),
            ms(high)
        )
    };
    let pct = c
        .gap_pct
        .map(|p| format!(", {}{}%", if p >= 0.0 { "+" } else { "" }, fixed(p, 0)))
        .unwrap_or_default();
    format!(
        "{}: the client's mean {}, {server} ({}{}{pct})",
        m.words(),
        ms(client),
        if gap >= 0.0 { "+" } else { "" },
        ms(gap)
    )
}

/// The whole run: the load tool's result against the snapshot pair.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.load_measured() {
        return Err(Absent::NotGiven);
    }
    if let Some(d) = cx.down {
        return Err(Gap::Run(format!(
            "the server was down before the load started: {}",
            d.reason
        ))
        .into());
    }
    let bench = match &cx.bench {
        Input::NotGiven if cx.load_ran && cx.pair.is_given() => {
            return Err(Gap::Run("the folder holds no load-tool result to compare".into()).into())
        }
        other => other.need()?,
    };
    let pair = match &cx.pair {
        // Snapshots are the recorder's captures: on a folder it did not make, left out.
        Input::NotGiven if !cx.recorded_by_inferlint() => return Err(Absent::NotGiven),
        Input::NotGiven => {
            return Err(Gap::Run(
                "no snapshots before and after the load, so the server's histograms can't be \
                 read"
                    .into(),
            )
            .into())
        }
        other => other.need()?,
    };
    Ok(check(cx.snapshot_engine, pair, bench))
}

/// Every request the server counted between the snapshots started after the first (the
/// recorder takes it before the load) and ended before the second, so none lasted longer
/// than the span between them. A mean end-to-end latency past the span (with a second
/// for the readings' own timing) is not wall-clock time: a server that times on another
/// clock (the simulator at `--sim-speed`) can't be held to the client's figures.
fn server_clock_off(engine: Engine, pair: &Pair<'_>) -> Option<String> {
    let span = pair.span().ok()?;
    let mean = histogram::delta(pair, engine.metrics().e2e_latency)
        .ok()??
        .mean()?;
    (mean > span.seconds + span.uncertainty + CLOCK_SLACK_S).then(|| {
        format!(
            "the server's mean end-to-end latency, {} s, is longer than the {} s between \
             the readings that hold every request it counted: its histograms do not run on \
             the wall clock, so they can't be held to the load tool's figures",
            fixed(mean, 1),
            fixed(span.seconds, 1)
        )
    })
}

/// The three measures, and the verdict of the worst.
pub fn check(engine: Engine, pair: &Pair<'_>, bench: &BenchResult) -> CheckResult {
    let tool = bench.tool_name().to_string();
    let mut e = Latencies {
        tool: tool.clone(),
        ..Latencies::default()
    };
    let m = engine.metrics();
    let mut names: Vec<&str> = vec![m.ttft, m.e2e_latency];
    names.extend(m.itl.names);
    let fields: Vec<String> = names
        .iter()
        .flat_map(|n| ["_sum", "_count", "_bucket"].map(|s| format!("{n}{s}")))
        .collect();
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    if let Some(bad) = pair.implausible(&fields) {
        e.implausible = Some(bad.to_string());
        return CheckResult::new(T23, Status::Unknown, plausible::cannot_tell(bad)).found(e);
    }
    if let Some(why) = server_clock_off(engine, pair) {
        e.server_clock = Some(why.clone());
        return CheckResult::new(T23, Status::Unknown, why).found(e);
    }
    let mut lines = Vec::new();
    for measure in Measure::ALL {
        let (metric, delta) = match server_side(engine, pair, measure) {
            Ok(x) => x,
            Err(restart) => {
                return CheckResult::new(T23, Status::Unknown, restart.describe()).found(e)
            }
        };
        let client = client_side(bench, measure, m.itl.per_request);
        let c = compare(measure, &client, metric, delta.as_ref());
        let tag = if c.pieces { PIECES } else { c.status };
        lines.push((measure, said(&c, measure), tag));
        e.measures.push(c);
    }
    let (status, message) = verdict(&tool, &lines);
    CheckResult::new(T23, status, message).found(e)
}

/// The tag of a between-tokens figure below the server's, apart from the other warnings.
const PIECES: &str = "pieces";

/// The worst measure decides; the message names each.
fn verdict(tool: &str, lines: &[(Measure, String, &'static str)]) -> (Status, String) {
    let with = |s: &str| -> Vec<&str> {
        lines
            .iter()
            .filter(|(_, _, st)| *st == s)
            .map(|(_, l, _)| l.as_str())
            .collect()
    };
    let (fail, warn, pass, unknown) = (with("fail"), with("warn"), with("pass"), with("unknown"));
    let pieces = with(PIECES);
    let rest = |shown: &[&str]| -> String {
        let others: Vec<&str> = lines
            .iter()
            .map(|(_, l, _)| l.as_str())
            .filter(|l| !shown.contains(l))
            .collect();
        if others.is_empty() {
            String::new()
        } else {
            format!(" (also {})", others.join("; "))
        }
    };
    if !fail.is_empty() {
        return (
            Status::Fail,
            format!(
                "{tool} reports less time than the server took to produce the answers: {}; \
                 the client timed something else (an empty first piece, the reply's headers){}",
                fail.join("; "),
                rest(&fail)
            ),
        );
    }
    if !pieces.is_empty() && warn.is_empty() {
        return (
            Status::Warn,
            format!(
                "{tool}'s time between tokens is below the server's: {}; its stream carried \
                 several tokens in a piece (a first piece of more than one token counts their \
                 decoding as time to first token), so its figure is not the server's measure{}",
                pieces.join("; "),
                rest(&pieces)
            ),
        );
    }
    if !warn.is_empty() {
        return (
            Status::Warn,
            format!(
                "{tool}'s latency is well above the server's own: {}; something the server's \
                 timer leaves out is in the figure (a proxy, the network, the client's own \
                 queue, or the server's HTTP front end on a busy machine){}",
                warn.join("; "),
                rest(&warn)
            ),
        );
    }
    if !pass.is_empty() {
        return (
            Status::Pass,
            format!(
                "{tool}'s latencies agree with the server's: {}{}",
                pass.join("; "),
                rest(&pass)
            ),
        );
    }
    (
        Status::Unknown,
        format!(
            "{tool}'s latencies can't be compared with the server's: {}",
            unknown.join("; ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::absent::settle;
    use crate::rules::testing::{said, snapshot, Folder};
    use crate::snapshot::Snapshot;

    const EDGES: [f64; 7] = [0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];

    /// A vLLM histogram's text holding `obs` (seconds).
    fn hist(name: &str, obs: &[f64]) -> String {
        let mut t = String::new();
        for le in EDGES {
            let n = obs.iter().filter(|&&x| x <= le).count();
            t.push_str(&format!(
                "{name}_bucket{{le=\"{le}\",model_name=\"m\"}} {n}\n"
            ));
        }
        t.push_str(&format!(
            "{name}_bucket{{le=\"+Inf\",model_name=\"m\"}} {}\n",
            obs.len()
        ));
        t.push_str(&format!(
            "{name}_sum{{model_name=\"m\"}} {}\n",
            obs.iter().sum::<f64>()
        ));
        t.push_str(&format!("{name}_count{{model_name=\"m\"}} {}\n", obs.len()));
        t
    }

    /// The before and after snapshots of a server that observed these.
    fn pair(ttft: &[f64], itl: &[f64], e2e: &[f64]) -> (Snapshot, Snapshot) {
        let text = |t: &[f64], i: &[f64], e: &[f64]| {
            hist("vllm:time_to_first_token_seconds", t)
                + &hist("vllm:inter_token_latency_seconds", i)
                + &hist("vllm:e2e_request_latency_seconds", e)
        };
        (
            snapshot(&text(&[], &[], &[]), 10.0),
            snapshot(&text(ttft, itl, e2e), 20.0),
        )
    }

    /// A client's result: `n` requests of `tokens` tokens each, these means in ms.
    fn bench(n: i64, tokens: i64, ttft_ms: f64, e2e_ms: f64) -> BenchResult {
        BenchResult {
            completed: Some(n),
            failed: Some(0),
            total_output_tokens: Some(n * tokens),
            mean_ttft_ms: Some(ttft_ms),
            mean_e2el_ms: Some(e2e_ms),
            tool: Some("GuideLLM 0.8.1".into()),
            ..BenchResult::default()
        }
    }

    /// Four requests of 11 tokens: first token after 0.2 s, 10 gaps of 0.02 s each.
    fn four() -> (Snapshot, Snapshot) {
        pair(&[0.2; 4], &[0.02; 40], &[0.4; 4])
    }

    fn judged(b: &BenchResult, s: &(Snapshot, Snapshot)) -> CheckResult {
        check(Engine::Vllm, &Pair::new(&s.0, &s.1), b)
    }

    #[test]
    fn figures_a_little_above_the_servers_pass() {
        let r = judged(&bench(4, 11, 203.0, 405.0), &four());
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message.starts_with(
                "GuideLLM 0.8.1's latencies agree with the server's: time to first token: the \
                 client's mean 203.0 ms, the server's 200.0 ms (+3.0 ms, +2%)"
            ),
            "{}",
            r.message
        );
        let e = latencies(&r).unwrap();
        assert_eq!(e.measures.len(), 3);
        // Between tokens: (405 - 203) ms over 10 gaps each.
        let itl = &e.measures[1];
        assert_eq!(
            itl.metric.as_deref(),
            Some("vllm:inter_token_latency_seconds")
        );
        assert!((itl.client_ms.unwrap() - 20.2).abs() < 1e-9, "{itl:?}");
        assert_eq!(itl.client_count, Some(40.0));
    }

    #[test]
    fn a_client_faster_than_the_server_fails() {
        // The client timed its first token at 4 ms: the server took 200 ms to make it.
        let r = judged(&bench(4, 11, 4.0, 405.0), &four());
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.contains(
                "time to first token: the client's mean 4.0 ms, the server's 200.0 ms \
                 (-196.0 ms, -98%)"
            ),
            "{}",
            r.message
        );
        assert!(r
            .message
            .starts_with("GuideLLM 0.8.1 reports less time than the server took"));
    }

    #[test]
    fn gaps_shorter_than_the_servers_warn_as_pieces_not_fail() {
        // First token and end to end agree with the server, but the decoding left after
        // the first piece (165 ms over 40 gaps) is shorter than the server's 20 ms a gap:
        // the first pieces held more than one token.
        let r = judged(&bench(4, 11, 240.0, 405.0), &four());
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message.starts_with(
                "GuideLLM 0.8.1's time between tokens is below the server's: time between \
                 tokens: the client's mean 16.5 ms, the server's 20.0 ms (-3.5 ms, -18%); its \
                 stream carried several tokens in a piece"
            ),
            "{}",
            r.message
        );
        let e = latencies(&r).unwrap();
        assert!(e.measures[1].pieces && !e.measures[0].pieces);
        assert_eq!(
            (e.measures[0].status, e.measures[2].status),
            ("pass", "pass")
        );
    }

    #[test]
    fn latencies_longer_than_the_readings_span_are_another_clock() {
        // 30 s a request between readings 10 s apart: not wall-clock time.
        let s = pair(&[0.2; 4], &[0.02; 40], &[30.0; 4]);
        let r = judged(&bench(4, 11, 4.0, 405.0), &s);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert_eq!(
            r.message,
            "the server's mean end-to-end latency, 30.0 s, is longer than the 10.0 s between \
             the readings that hold every request it counted: its histograms do not run on \
             the wall clock, so they can't be held to the load tool's figures"
        );
        assert!(latencies(&r).unwrap().server_clock.is_some());
        // 10.5 s is within the readings' own timing.
        let s = pair(&[0.2; 4], &[0.02; 40], &[10.5; 4]);
        assert_ne!(
            judged(&bench(4, 11, 4.0, 405.0), &s).status,
            Status::Unknown
        );
    }

    #[test]
    fn a_large_gap_warns_with_its_size() {
        // 300 ms more to the first token and to the end: a proxy or a queue in between.
        let r = judged(&bench(4, 11, 500.0, 700.0), &four());
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message.contains("time to first token: the client's mean 500.0 ms, the server's 200.0 ms (+300.0 ms, +150%)"),
            "{}",
            r.message
        );
        assert!(r.message.contains("end-to-end latency"), "{}", r.message);
        // A gap under the floor does not warn, however large a share.
        let short = pair(&[0.002; 4], &[0.02; 40], &[0.2; 4]);
        let r = judged(&bench(4, 11, 10.0, 208.0), &short);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn requests_the_client_did_not_count_are_bounded_by_the_buckets() {
        // Two more requests (a probe, a test request) of 3 s to first token: the server's
        // mean is 1.13 s, but the client's four sat in the 0.1–0.5 s bucket.
        let s = pair(
            &[0.2, 0.2, 0.2, 0.2, 3.0, 3.0],
            &[0.02; 40],
            &[0.4, 0.4, 0.4, 0.4, 3.2, 3.2],
        );
        let r = judged(&bench(4, 11, 203.0, 405.0), &s);
        assert_ne!(r.status, Status::Fail, "{}", r.message);
        let ttft = &latencies(&r).unwrap().measures[0];
        assert_eq!(
            (ttft.server_count, ttft.client_count),
            (Some(6.0), Some(4.0))
        );
        assert!(
            (ttft.server_low_ms.unwrap() - 100.0).abs() < 1e-9,
            "{ttft:?}"
        );
        // The client below even the lowest the buckets allow still fails.
        let r = judged(&bench(4, 11, 20.0, 405.0), &s);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.contains("at least 100.0 ms for those requests"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_missing_side_cannot_tell() {
        let r = judged(&BenchResult::default(), &four());
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message.contains("gives no mean time to first token"),
            "{}",
            r.message
        );
        let empty = (snapshot("", 10.0), snapshot("", 20.0));
        let r = judged(&bench(4, 11, 203.0, 405.0), &empty);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message
                .contains("vllm:time_to_first_token_seconds is missing"),
            "{}",
            r.message
        );
        // More requests on the client than the server saw: not the same window.
        let r = judged(&bench(9, 11, 203.0, 405.0), &four());
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message
                .contains("the server observed 4 against the load tool's 9"),
            "{}",
            r.message
        );
    }

    #[test]
    fn the_run_without_snapshots_or_a_result_cannot_tell() {
        let folder = Folder {
            input: crate::inputs::RunInput {
                bench: Some(crate::inputs::BenchInput {
                    evidence_path: "bench.json".into(),
                    file: crate::inputs::InputFile::new("bench.json", b"{}".to_vec()),
                }),
                ..Default::default()
            },
            ..Folder::default()
        };
        let b = bench(4, 11, 203.0, 405.0);
        let mut cx = folder.scope();
        cx.bench = Input::Present(&b);
        // Not the recorder's folder: its missing snapshots leave T23 out.
        assert!(settle(T23, run(&cx)).is_none());
        let mut recorded = Folder {
            input: folder.input.clone(),
            ..Folder::default()
        };
        recorded.input.manifest = Some(crate::inputs::InputFile::new(
            "manifest.json",
            b"{}".to_vec(),
        ));
        let mut cx = recorded.scope();
        cx.bench = Input::Present(&b);
        let r = settle(T23, run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "can't tell: no snapshots before and after the load, so the server's \
                 histograms can't be read"
            )
        );
        let s = four();
        let p = Pair::new(&s.0, &s.1);
        cx.pair = Input::Present(&p);
        assert_eq!(settle(T23, run(&cx)).unwrap().status, Status::Pass);
        // Nothing of a load in the folder: no result at all.
        let empty = Folder::default();
        assert_eq!(settle(T23, run(&empty.scope())), None);
    }

    #[test]
    fn a_restart_between_the_snapshots_cannot_tell() {
        let (b, _) = four();
        let a = snapshot(&hist("vllm:time_to_first_token_seconds", &[]), 20.0);
        let before = snapshot(&hist("vllm:time_to_first_token_seconds", &[0.1, 0.1]), 10.0);
        let r = check(
            Engine::Vllm,
            &Pair::new(&before, &a),
            &bench(2, 11, 100.0, 200.0),
        );
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(r.message.contains("restarted"), "{}", r.message);
        drop(b);
    }
}
