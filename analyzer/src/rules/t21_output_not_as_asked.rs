//! T21: the answers came back shorter (or longer) than the load asked, so its tokens per
//! second and latencies describe another load (docs/tripwires.md#t21). What was asked
//! comes from the load tool's result or the command the recorder ran (`bench::asked`);
//! what came back from the result's output tokens over its completed requests, each
//! answer's length where the result keeps them, and the server's count of answers that
//! ended on end-of-sequence.

use serde::Serialize;

use crate::bench::{AskedOutput, BenchResult, Requests};
use crate::counters::Pair;
use crate::engine::{Engine, STOP_REASON};
use crate::num::{fixed, plural, shortest, thousands_int};
use crate::rules::absent::{Absent, Judged};
use crate::rules::load_failed::LoadFailed;
use crate::rules::scope::{PhaseScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T21: Tripwire = Tripwire::OutputNotAsAsked;

/// A mean further than this share from the asked length warns.
pub const OFF_SHARE: f64 = 0.10;

/// How many short answers a message names.
const NAMED: usize = 5;

/// The answers' lengths against what was asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Lengths {
    pub asked_tokens: i64,
    pub asked_fixed: bool,
    pub asked_from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_eos: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_completed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_tokens: Option<f64>,
    /// The mean against the asked length, less one (-0.2: 20% short).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortest: Option<i64>,
    /// Per-request lengths read, and how many of them fell short of the asked length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers_read: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers_short: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub short_answers: Vec<ShortAnswer>,
    /// Every short answer ended with prompt and answer at this many tokens together: the
    /// server cut them to fit its context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_at_context: Option<i64>,
    /// The server's own counts between the snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_stopped: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_length: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_max_tokens_mean: Option<f64>,
}

/// One answer shorter than asked: its place in the load tool's order (1-based).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShortAnswer {
    pub request: usize,
    pub tokens: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
}

/// A T21 result's lengths.
pub fn lengths(r: &CheckResult) -> Option<&Lengths> {
    r.finding::<Lengths>()
}

/// How the server says its answers ended.
#[derive(Debug, Clone, Copy, Default)]
struct ServerEnds {
    stopped: Option<f64>,
    length: Option<f64>,
    max_tokens_mean: Option<f64>,
}

impl ServerEnds {
    fn read(engine: Engine, pair: &Pair<'_>) -> ServerEnds {
        let m = engine.metrics();
        let reason = |r: &str| {
            m.finished_reason_label
                .and_then(|l| pair.grew(m.requests_finished, &[(l, r)]))
        };
        ServerEnds {
            stopped: reason(STOP_REASON),
            length: reason("length"),
            max_tokens_mean: m
                .max_tokens_param
                .and_then(|h| pair.histogram_mean(h).ok().flatten()),
        }
    }
}

/// What a judgement of lengths reads, for the run or a phase.
struct Answers<'a> {
    tool: &'a str,
    asked: &'a AskedOutput,
    completed: Option<i64>,
    output_tokens: Option<i64>,
    shortest: Option<i64>,
    requests: Option<&'a Requests>,
    failed: Option<LoadFailed>,
}

/// The whole run.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.bench.is_given() {
        if !cx.recorded_by_inferlint() {
            return Err(Absent::NotGiven);
        }
        return super::load_figures::no_result(
            cx,
            T21,
            "no load-tool result to give the answers' lengths",
        );
    }
    let b: &BenchResult = cx.bench.need()?;
    let tool = b.tool_name();
    let Some(asked) = &b.asked_output else {
        return unasked(cx.recorded_by_inferlint(), tool);
    };
    let server = match (&cx.pair.present(), cx.snapshot_engine) {
        (Some(p), e) => ServerEnds::read(e, p),
        (None, _) => ServerEnds::default(),
    };
    let a = Answers {
        tool,
        asked,
        completed: b.completed,
        output_tokens: b.total_output_tokens,
        shortest: b.output_shortest,
        requests: b.requests.as_ref(),
        failed: LoadFailed::of(b),
    };
    Ok(judge(&a, server, cx.snapshot_engine, cx.pair.is_given()))
}

/// One phase of a sweep: its own counts (no per-request lengths or server counts).
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let Some(asked) = &cx.phase.asked_output else {
        return unasked(cx.recorded, cx.tool);
    };
    let a = Answers {
        tool: cx.tool,
        asked,
        completed: cx.phase.completed,
        output_tokens: cx.phase.output_tokens,
        shortest: None,
        requests: None,
        failed: LoadFailed::of_phase(cx.phase, cx.tool),
    };
    Ok(judge(&a, ServerEnds::default(), cx.engine, false))
}

/// The asked length is unknown: "can't tell" on a folder the recorder made (it keeps the
/// load command), not checked on one from elsewhere, which never recorded it.
fn unasked(recorded: bool, tool: &str) -> Judged {
    if !recorded {
        return Err(Absent::NotGiven);
    }
    Ok(CheckResult::new(
        T21,
        Status::Unknown,
        format!(
            "neither {tool}'s result nor the load command names the output \
             length it asked of each answer (vllm bench serve: --random-output-len or \
             --output-len; GuideLLM: output_tokens; AIPerf: --output-tokens-mean)"
        ),
    ))
}

/// The verdict on what came back.
fn judge(a: &Answers<'_>, server: ServerEnds, engine: Engine, read_server: bool) -> CheckResult {
    let mut e = Lengths {
        asked_tokens: a.asked.tokens,
        asked_fixed: a.asked.fixed,
        asked_from: a.asked.source.clone(),
        ignore_eos: a.asked.ignore_eos,
        requests_completed: a.completed,
        output_tokens: a.output_tokens,
        shortest: a.shortest,
        server_stopped: server.stopped,
        server_length: server.length,
        server_max_tokens_mean: server.max_tokens_mean,
        ..Lengths::default()
    };
    let base = |status, msg: String, e: Lengths| CheckResult::new(T21, status, msg).found(e);
    if let Some(f) = &a.failed {
        return base(
            Status::Unknown,
            format!("{}, so no answer came back to measure", f.clause()),
            e,
        );
    }
    let (Some(done), Some(tokens)) = (a.completed, a.output_tokens) else {
        let msg = format!(
            "{}'s result gives no count of completed requests or output tokens",
            a.tool
        );
        return base(Status::Unknown, msg, e);
    };
    if done <= 0 {
        let msg = "no request completed, so no answer came back to measure".into();
        return base(Status::Unknown, msg, e);
    }
    let mean = tokens as f64 / done as f64;
    e.mean_tokens = Some(mean);
    e.off_share = Some(mean / a.asked.tokens as f64 - 1.0);
    if a.asked.fixed {
        short_answers(a, &mut e);
    }
    let (status, msg) = verdict(a, &e, engine, read_server);
    base(status, msg, e)
}

/// Each answer shorter than the fixed asked length, from the per-request lengths.
fn short_answers(a: &Answers<'_>, e: &mut Lengths) {
    let Some(lens) = a.requests.and_then(|r| r.output_tokens.as_ref()) else {
        return;
    };
    let prompts = a.requests.and_then(|r| r.input_tokens.as_ref());
    let short: Vec<ShortAnswer> = lens
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let n = (*n)?;
            (n < a.asked.tokens).then(|| ShortAnswer {
                request: i + 1,
                tokens: n,
                prompt_tokens: prompts.and_then(|p| p.get(i).copied().flatten()),
            })
        })
        .collect();
    e.answers_read = Some(lens.iter().flatten().count());
    e.answers_short = Some(short.len());
    // Cut to fit the context: every short answer ends at the same prompt + answer total.
    let totals: Option<Vec<i64>> = short
        .iter()
        .map(|s| Some(s.tokens + s.prompt_tokens?))
        .collect();
    e.cut_at_context = totals
        .filter(|t| t.len() >= 2 && t.windows(2).all(|w| w[0] == w[1]))
        .and_then(|t| t.first().copied());
    e.short_answers = short.into_iter().take(NAMED).collect();
}

/// The status and message from the lengths and the server's finish reasons.
fn verdict(a: &Answers<'_>, e: &Lengths, engine: Engine, read_server: bool) -> (Status, String) {
    let mean = e.mean_tokens.unwrap_or(0.0);
    let off = e.off_share.unwrap_or(0.0);
    let stopped = e.server_stopped.filter(|&n| n > 0.0);
    let asked = format!(
        "the {} asked ({})",
        thousands_int(a.asked.tokens),
        a.asked.source
    );
    let mut parts = vec![format!(
        "{}'s {} answers averaged {} tokens",
        a.tool,
        thousands_int(e.requests_completed.unwrap_or(0)),
        fixed(mean, 1)
    )];
    let off_by = off.abs() > OFF_SHARE && a.asked.fixed;
    parts[0].push_str(&if off_by {
        let side = if off < 0.0 { "short of" } else { "over" };
        format!(", {}% {side} {asked}", fixed(off.abs() * 100.0, 1))
    } else {
        format!(" against {asked}")
    });
    parts.extend(named_short(e));
    parts.extend(stop_clause(stopped, a.asked.ignore_eos));
    parts.extend(max_tokens_clause(e.server_max_tokens_mean, a.asked.tokens));
    let status = if off_by || stopped.is_some() {
        Status::Warn
    } else if !a.asked.fixed {
        parts.push(
            "the lengths asked vary from request to request, so the mean cannot be held to one \
             length and no server count shows an answer cut short"
                .into(),
        );
        Status::Unknown
    } else {
        Status::Pass
    };
    if status == Status::Pass && stopped.is_none() {
        parts.push(ends_counted(engine, e.server_stopped, read_server));
    }
    (status, parts.join("; "))
}

/// "3 of 16 were shorter: request 2 (79 tokens, prompt 177), …".
fn named_short(e: &Lengths) -> Option<String> {
    let (read, short) = (e.answers_read?, e.answers_short.filter(|&n| n > 0)?);
    let named: Vec<String> = e
        .short_answers
        .iter()
        .map(|s| match s.prompt_tokens {
            Some(p) => format!("request {} ({} tokens, prompt {p})", s.request, s.tokens),
            None => format!("request {} ({} tokens)", s.request, s.tokens),
        })
        .collect();
    let more = if short > named.len() { ", …" } else { "" };
    let mut s = format!("{short} of {read} were shorter: {}{more}", named.join(", "));
    if let Some(total) = e.cut_at_context {
        s.push_str(&format!(
            "; each short answer ends where prompt and answer reach {total} tokens together: \
             the server cut them to fit its context length"
        ));
    }
    Some(s)
}

/// The server's count of answers that ended on end-of-sequence.
fn stop_clause(stopped: Option<f64>, ignore_eos: Option<bool>) -> Option<String> {
    let n = stopped?;
    let hint = match ignore_eos {
        Some(true) => "though the load asked it to ignore end-of-sequence (a stop string?)",
        _ => "the load did not ask it to ignore end-of-sequence (--ignore-eos)",
    };
    Some(format!(
        "the server ended {} on end-of-sequence (finish reason \"stop\"): {hint}",
        plural(n, "answer")
    ))
}

/// vLLM's own record of the `max_tokens` it applied, when below what was asked.
fn max_tokens_clause(mean: Option<f64>, asked: i64) -> Option<String> {
    let m = mean.filter(|&m| m < asked as f64 - 0.5)?;
    Some(format!(
        "the server applied {} max_tokens on average, fewer than asked: it lowered the \
         length, as vLLM does when prompt and answer would not fit its context length",
        shortest((m * 10.0).round() / 10.0)
    ))
}

/// What a pass says of the server's finish reasons.
fn ends_counted(engine: Engine, stopped: Option<f64>, read_server: bool) -> String {
    match (engine.metrics().finished_reason_label, stopped) {
        (Some(_), Some(_)) => "the server ended none on end-of-sequence".into(),
        (None, _) if read_server => format!(
            "{} counts no finish reasons, so the lengths alone decide",
            engine.display()
        ),
        _ => "the server's finish reasons were not read, so the lengths alone decide".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Phase;
    use crate::inputs::InputFile;
    use crate::rules::absent::{settle, Input};
    use crate::rules::testing::{said, snapshot, Folder};

    fn asked(tokens: i64, fixed: bool) -> AskedOutput {
        AskedOutput {
            tokens,
            fixed,
            ignore_eos: None,
            source: format!("--random-output-len {tokens} in the load command"),
        }
    }

    fn result(tokens_each: &[i64], asked_len: Option<i64>) -> BenchResult {
        BenchResult {
            completed: Some(tokens_each.len() as i64),
            failed: Some(0),
            total_output_tokens: Some(tokens_each.iter().sum()),
            asked_output: asked_len.map(|n| asked(n, true)),
            requests: Some(Requests {
                output_tokens: Some(tokens_each.iter().map(|&n| Some(n)).collect()),
                input_tokens: Some(tokens_each.iter().map(|&n| Some(256 - n)).collect()),
                ..Requests::default()
            }),
            ..BenchResult::default()
        }
    }

    /// A folder the recorder made (it has a manifest).
    fn recorded() -> Folder {
        let mut f = Folder::default();
        f.input.manifest = Some(InputFile::new("manifest.json", b"{}".to_vec()));
        f
    }

    fn judged(folder: &Folder, b: &BenchResult, pair: Option<&Pair<'_>>) -> Option<CheckResult> {
        let mut cx = folder.scope();
        cx.bench = Input::Present(b);
        if let Some(p) = pair {
            cx.pair = Input::Present(p);
        }
        settle(T21, run(&cx))
    }

    const ENDS_BEFORE: &str = "vllm:request_success_total{finished_reason=\"stop\"} 0\n\
        vllm:request_success_total{finished_reason=\"length\"} 1\n";

    #[test]
    fn answers_of_the_asked_length_pass() {
        let f = recorded();
        let before = snapshot(ENDS_BEFORE, 1.0);
        let after = snapshot(
            "vllm:request_success_total{finished_reason=\"stop\"} 0\n\
             vllm:request_success_total{finished_reason=\"length\"} 5\n",
            2.0,
        );
        let pair = Pair::new(&before, &after);
        let r = judged(&f, &result(&[100; 4], Some(100)), Some(&pair)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "the load tool's 4 answers averaged 100.0 tokens against the 100 asked \
                 (--random-output-len 100 in the load command); the server ended none on \
                 end-of-sequence"
            )
        );
        assert_eq!(lengths(&r).unwrap().server_length, Some(4.0));
    }

    #[test]
    fn answers_cut_to_fit_the_context_warn_naming_them() {
        let f = recorded();
        let r = judged(&f, &result(&[100, 79, 100, 86], Some(100)), None).unwrap();
        assert_eq!(
            r.status,
            Status::Pass,
            "9% short is within the tenth: {}",
            r.message
        );
        let r = judged(&f, &result(&[100, 79, 60, 86], Some(100)), None).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert_eq!(
            r.message,
            "the load tool's 4 answers averaged 81.2 tokens, 18.8% short of the 100 asked \
             (--random-output-len 100 in the load command); 3 of 4 were shorter: request 2 \
             (79 tokens, prompt 177), request 3 (60 tokens, prompt 196), request 4 (86 tokens, \
             prompt 170); each short answer ends where prompt and answer reach 256 tokens \
             together: the server cut them to fit its context length"
        );
        let e = lengths(&r).unwrap();
        assert_eq!((e.answers_short, e.cut_at_context), (Some(3), Some(256)));
    }

    #[test]
    fn end_of_sequence_stops_warn_even_when_the_mean_is_close() {
        let f = recorded();
        let before = snapshot(ENDS_BEFORE, 1.0);
        let after = snapshot(
            "vllm:request_success_total{finished_reason=\"stop\"} 1\n\
             vllm:request_success_total{finished_reason=\"length\"} 4\n",
            2.0,
        );
        let pair = Pair::new(&before, &after);
        let r = judged(&f, &result(&[100, 100, 100, 95], Some(100)), Some(&pair)).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(r.message.contains(
            "the server ended 1 answer on end-of-sequence (finish reason \"stop\"): the load \
             did not ask it to ignore end-of-sequence (--ignore-eos)"
        ));
    }

    #[test]
    fn an_unknown_ask_cannot_tell_on_a_recorded_folder_and_is_not_checked_elsewhere() {
        let b = result(&[100; 4], None);
        let r = judged(&recorded(), &b, None).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(r.message.starts_with("neither the load tool's result"));
        assert_eq!(judged(&Folder::default(), &b, None), None);
        // Asked, but nothing completed.
        let mut b = result(&[], Some(100));
        b.failed = Some(24);
        let r = judged(&recorded(), &b, None).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("every one of the 24 requests"),
            "{}",
            r.message
        );
        // Lengths that vary per request: the mean decides nothing.
        let mut b = result(&[50, 150], Some(100));
        b.asked_output = Some(asked(100, false));
        let r = judged(&recorded(), &b, None).unwrap();
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
    }

    #[test]
    fn the_server_lowering_max_tokens_is_named() {
        let f = recorded();
        let before = snapshot(
            "vllm:request_params_max_tokens_sum 100\nvllm:request_params_max_tokens_count 1\n",
            1.0,
        );
        let after = snapshot(
            "vllm:request_params_max_tokens_sum 420\nvllm:request_params_max_tokens_count 5\n",
            2.0,
        );
        let pair = Pair::new(&before, &after);
        let r = judged(&f, &result(&[100, 79, 60, 81], Some(100)), Some(&pair)).unwrap();
        assert_eq!(r.status, Status::Warn);
        assert!(
            r.message
                .contains("the server applied 80 max_tokens on average, fewer than asked"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_phase_holds_its_own_mean_to_its_ask() {
        let p = Phase {
            completed: Some(10),
            failed: Some(0),
            output_tokens: Some(500),
            asked_output: Some(asked(100, true)),
            ..Phase::default()
        };
        let mut cx = PhaseScope {
            phase: &p,
            window: Input::NotGiven,
            engine: Engine::Sglang,
            facts: None,
            usable_blocks: None,
            tool: "GuideLLM 0.8.1",
            recorded: false,
            load_cpu: None,
        };
        let r = settle(T21, phase(&cx)).unwrap();
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(r.message.contains("50.0% short"), "{}", r.message);
        let q = Phase {
            asked_output: None,
            ..p.clone()
        };
        cx.phase = &q;
        assert_eq!(settle(T21, phase(&cx)), None, "not recorded: not checked");
        cx.recorded = true;
        assert_eq!(settle(T21, phase(&cx)).unwrap().status, Status::Unknown);
    }
}
