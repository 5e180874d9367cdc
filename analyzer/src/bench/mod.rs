//! Load-tool result files (docs/run-folder.md#load-results): vLLM's and TensorRT-LLM's
//! JSON object, SGLang's JSON Lines, GuideLLM's `benchmarks.json` and AIPerf's
//! `profile_export_aiperf.json` (recognised by their shape); and the untimed requests a
//! client leaves out, counted from `load.log`.

mod aiperf;
pub mod aiperf_records;
pub mod aiperf_server;
pub mod argv;
pub mod asked;
pub mod errors;
mod gated;
mod guidellm;
pub mod runs;
pub mod timeline;

pub use aiperf_server::AiperfServer;
pub use asked::AskedOutput;
pub use errors::ErrorGroup;

use crate::input::{decode_strict, InputError};
use crate::json::{self, Json};
use crate::plausible::{self, Implausible, Quantity};

/// The fields inferlint reads; absent when missing, null or of another type, or when the
/// value is implausible (then recorded in `implausible`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchResult {
    pub completed: Option<i64>,
    pub failed: Option<i64>,
    pub total_output_tokens: Option<i64>,
    pub total_input_tokens: Option<i64>,
    pub max_concurrency: Option<i64>,
    pub duration: Option<f64>,
    pub output_throughput: Option<f64>,
    pub mean_ttft_ms: Option<f64>,
    pub median_ttft_ms: Option<f64>,
    pub p99_ttft_ms: Option<f64>,
    pub mean_tpot_ms: Option<f64>,
    /// The mean gap between two streamed pieces of an answer, over every gap of every
    /// request (vLLM's `mean_itl_ms`), when the result gives it (T23).
    pub mean_itl_ms: Option<f64>,
    /// The mean time from sending a request to its answer's end, over the successful
    /// requests (T23).
    pub mean_e2el_ms: Option<f64>,
    pub num_prompts: Option<i64>,
    pub backend: Option<String>,
    /// Values the plausibility gate refused (`plausible`), by key; each field is absent.
    pub implausible: Vec<Implausible>,
    /// Per-request figures, when the client saved them (T18).
    pub requests: Option<Requests>,
    /// The tool and version, when its format names them ("GuideLLM 0.8.1").
    pub tool: Option<String>,
    /// The request rate a rate-based load asked for (requests per second; the highest
    /// when several): such a load asks for no concurrency (T8).
    pub request_rate: Option<f64>,
    /// The benchmarks a GuideLLM or AIPerf result holds, in order (a sweep has several);
    /// empty for the other clients' results, which hold one run.
    pub phases: Vec<Phase>,
    /// vLLM's `date` (the run's end, to the second) as unix seconds, read as UTC: the
    /// run's window when several runs share a folder and no marks say when each ran.
    pub date_end_wall: Option<f64>,
    /// The `request_rate` a one-run result names (vLLM's `inf` for "all at once"), kept
    /// apart from `request_rate`, which T8 reads as a rate-based load.
    pub named_rate: Option<f64>,
    /// Requests the tool completed outside what it measured (GuideLLM's warm-up and
    /// cool-down, AIPerf's warm-up phase), as its own result counts them; the server
    /// finished them too (T15). None when the result does not say.
    pub untimed: Option<i64>,
    /// The output length the load asked of each answer (T21), from the result or else
    /// the recorder's record of the load command.
    pub asked_output: Option<AskedOutput>,
    /// The shortest successful answer, in tokens, when the result gives it (GuideLLM's
    /// and AIPerf's distributions).
    pub output_shortest: Option<i64>,
    /// Why requests failed, as the tool wrote it, grouped (T22); empty when it wrote
    /// no error text.
    pub errors: Vec<ErrorGroup>,
}

/// One benchmark of a load tool's result: what it asked for and what it counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phase {
    /// Requests kept open at once (a concurrent, synchronous or throughput profile).
    pub concurrency: Option<i64>,
    /// Requests per second (a constant, Poisson or other rate-based profile).
    pub rate: Option<f64>,
    pub completed: Option<i64>,
    /// Errored plus incomplete (cancelled) requests.
    pub failed: Option<i64>,
    pub output_tokens: Option<i64>,
    /// The benchmark's start and end, unix seconds, when the tool writes them as such.
    pub start_wall: Option<f64>,
    pub end_wall: Option<f64>,
    pub duration: Option<f64>,
    /// How the phase's window was found when not from the tool's own start and end
    /// (the recorder's marks, a result's `date`); every check of the phase says so.
    pub timing: Option<String>,
    /// The phase's own per-request figures, when its result keeps them (T20).
    pub requests: Option<Requests>,
    /// The output length the phase asked of each answer (T21).
    pub asked_output: Option<AskedOutput>,
}

impl Phase {
    /// "2 at once" or "4 requests/s" or "an unknown load".
    pub fn asked(&self) -> String {
        match (self.concurrency, self.rate) {
            (Some(c), _) => format!("{c} at once"),
            (None, Some(r)) => format!("{} requests/s", crate::num::shortest(r)),
            (None, None) => "an unknown load".to_string(),
        }
    }
}

/// Per-request figures in the client's order (`vllm bench serve --save-detailed`:
/// `ttfts`, `start_times`, `latencies`, `errors`), in seconds. An entry is none for a
/// failed request, one that is not a number, or one the plausibility gate refused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requests {
    pub ttft_s: Vec<Option<f64>>,
    /// Client clock at each request's start (an arbitrary zero), when saved.
    pub start_s: Option<Vec<Option<f64>>>,
    pub latency_s: Option<Vec<Option<f64>>>,
    /// Each answer's length and each prompt's, in tokens (`output_lens`, `input_lens`;
    /// AIPerf's output and input sequence lengths), when saved; none for a failed request.
    /// T21 reads the answers; the replay's per-request columns (`insights::replay`) both.
    pub output_tokens: Option<Vec<Option<i64>>>,
    pub input_tokens: Option<Vec<Option<i64>>>,
    /// Values the gate refused, each named by its array and index (`ttfts[3]`).
    pub implausible: Vec<Implausible>,
}

/// The keys other modules name: the counts T17 derives a prompt length from, and the
/// per-request arrays.
pub mod key {
    pub const COMPLETED: &str = "completed";
    pub const TOTAL_INPUT_TOKENS: &str = "total_input_tokens";
    pub const DURATION: &str = "duration";
    pub const TTFTS: &str = "ttfts";
    pub const START_TIMES: &str = "start_times";
    pub const LATENCIES: &str = "latencies";
    pub const ERRORS: &str = "errors";
    pub const OUTPUT_LENS: &str = "output_lens";
    pub const INPUT_LENS: &str = "input_lens";
}

impl Requests {
    /// From a result object: none without a `ttfts` array. Times to first token and
    /// latencies are durations; start times a client clock with an arbitrary zero
    /// (`Quantity::ClientClock`). A failed request's figures are never read, so they are
    /// not gated.
    fn from_json(v: &Json, at: (&str, Option<usize>)) -> Option<Requests> {
        let failed: Vec<bool> = v
            .get(key::ERRORS)
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| e.as_str().is_some_and(|s| !s.is_empty()))
                    .collect()
            })
            .unwrap_or_default();
        let is_failed = |i: usize| failed.get(i).copied().unwrap_or(false);
        let mut found = Vec::new();
        let mut numbers = |k: &str, q: Quantity| -> Option<Vec<Option<f64>>> {
            let a = v.get(k).and_then(Json::as_array)?;
            Some(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let x = x.as_f64()?;
                        if is_failed(i) {
                            return x.is_finite().then_some(x);
                        }
                        match plausible::check(q, x) {
                            Ok(()) => Some(x),
                            Err(why) => {
                                let field = format!("{k}[{i}]");
                                found.push(Implausible::new(at.0, at.1, &field, x, why));
                                None
                            }
                        }
                    })
                    .collect(),
            )
        };
        // A failed request's time to first token is written as 0: not a time.
        let ttft_s = numbers(key::TTFTS, Quantity::Seconds)?
            .into_iter()
            .enumerate()
            .map(|(i, t)| t.filter(|&x| x > 0.0 && !is_failed(i)))
            .collect();
        let start_s = numbers(key::START_TIMES, Quantity::ClientClock);
        let latency_s = numbers(key::LATENCIES, Quantity::Seconds);
        // A failed request's length is written as 0: not an answer.
        let mut lengths = |k: &str| {
            numbers(k, Quantity::Count).map(|v| {
                v.into_iter()
                    .enumerate()
                    .map(|(i, n)| n.filter(|_| !is_failed(i)).map(|n| n.trunc() as i64))
                    .collect()
            })
        };
        let output_tokens = lengths(key::OUTPUT_LENS);
        let input_tokens = lengths(key::INPUT_LENS);
        Some(Requests {
            ttft_s,
            start_s,
            latency_s,
            output_tokens,
            input_tokens,
            implausible: found,
        })
    }
}

impl BenchResult {
    /// Parses the whole text as one value, else its last non-blank line alone (SGLang
    /// appends one line per run). The value must be an object.
    pub fn read(file: &str, bytes: &[u8]) -> Result<BenchResult, InputError> {
        let text = decode_strict(file, bytes)?;
        let (value, line) = match json::parse(text) {
            Ok(v) => (v, None),
            Err(whole) => {
                let last = text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                    .last();
                match last {
                    Some((i, l)) if i > 0 => (
                        json::parse(l.trim())
                            .map_err(|e| InputError::new(file, Some(i + 1), e.reason))?,
                        Some(i + 1),
                    ),
                    _ => return Err(InputError::new(file, Some(whole.line), whole.reason)),
                }
            }
        };
        if value.as_object().is_none() {
            return Err(InputError::new(
                file,
                None,
                "a load-tool result must be a JSON object",
            ));
        }
        Ok(Self::from_json(&value, (file, line)))
    }

    fn from_json(v: &Json, at: (&str, Option<usize>)) -> BenchResult {
        if guidellm::recognise(v) {
            return guidellm::read(v, at);
        }
        if aiperf::recognise(v) {
            return aiperf::read(v, at);
        }
        let found = std::cell::RefCell::new(Vec::new());
        // Each number through the gate before it is truncated: 2^63 must not saturate.
        let gated = |k: &str, q: Quantity| {
            let x = v.get(k).and_then(Json::as_f64)?;
            plausible::keep(q, Some(x), at, k, &mut found.borrow_mut())
        };
        let int = |k: &str| {
            gated(k, Quantity::Count)?;
            v.get(k).and_then(Json::as_i64_trunc)
        };
        let float = |k: &str| gated(k, Quantity::Measure);
        let mut r = BenchResult {
            completed: int(key::COMPLETED),
            failed: int("failed"),
            total_output_tokens: int("total_output_tokens"),
            total_input_tokens: int(key::TOTAL_INPUT_TOKENS),
            max_concurrency: int("max_concurrency"),
            duration: gated(key::DURATION, Quantity::Seconds),
            output_throughput: float("output_throughput"),
            mean_ttft_ms: float("mean_ttft_ms"),
            median_ttft_ms: float("median_ttft_ms"),
            p99_ttft_ms: float("p99_ttft_ms"),
            mean_tpot_ms: float("mean_tpot_ms"),
            mean_itl_ms: float("mean_itl_ms"),
            mean_e2el_ms: float("mean_e2el_ms").or_else(|| mean_latency_ms(v)),
            num_prompts: int("num_prompts"),
            backend: v.get("backend").and_then(Json::as_str).map(str::to_string),
            requests: Requests::from_json(v, at),
            date_end_wall: v
                .get("date")
                .and_then(Json::as_str)
                .and_then(runs::date_as_unix),
            named_rate: v.get("request_rate").and_then(Json::as_f64),
            asked_output: asked::from_sglang_result(v),
            errors: error_texts(v),
            implausible: Vec::new(),
            ..BenchResult::default()
        };
        r.implausible = found.into_inner();
        r
    }

    /// Usable for discovery: both `completed` and `total_output_tokens` present.
    pub fn has_counts(&self) -> bool {
        self.completed.is_some() && self.total_output_tokens.is_some()
    }

    /// A sweep: more than one benchmark in the file.
    pub fn is_sweep(&self) -> bool {
        self.phases.len() > 1
    }

    /// "a sweep of 2 phases (2 at once, 8 at once)", when it is one.
    pub fn sweep_phrase(&self) -> Option<String> {
        self.is_sweep().then(|| {
            let asked: Vec<String> = self.phases.iter().map(Phase::asked).collect();
            format!(
                "a sweep of {} phases ({})",
                self.phases.len(),
                asked.join(", ")
            )
        })
    }

    /// The tool's name for messages: "GuideLLM 0.8.1", else "the load tool".
    pub fn tool_name(&self) -> &str {
        self.tool.as_deref().unwrap_or("the load tool")
    }
}

/// The mean of `latencies` (seconds) over the requests without an error, in ms: vLLM
/// writes the list without `mean_e2el_ms` unless asked for that percentile. None when a
/// successful request's latency is not a positive number.
fn mean_latency_ms(v: &Json) -> Option<f64> {
    let latencies = v.get(key::LATENCIES).and_then(Json::as_array)?;
    let errors = v.get(key::ERRORS).and_then(Json::as_array);
    let failed = |i: usize| {
        errors
            .and_then(|e| e.get(i))
            .and_then(Json::as_str)
            .is_some_and(|e| !e.is_empty())
    };
    let mut ok = Vec::new();
    for (_, x) in latencies.iter().enumerate().filter(|(i, _)| !failed(*i)) {
        let x = x.as_f64()?;
        // vLLM writes 0 for a failed request; without `errors` it is not a latency.
        if x == 0.0 && errors.is_none() {
            continue;
        }
        plausible::check(Quantity::Seconds, x).ok()?;
        ok.push(x);
    }
    (!ok.is_empty()).then(|| ok.iter().sum::<f64>() / ok.len() as f64 * 1000.0)
}

/// The texts of `errors` (vLLM's and SGLang's clients: one per request, blank for a
/// success), grouped; a traceback by its last line.
fn error_texts(v: &Json) -> Vec<ErrorGroup> {
    let list = v
        .get(key::ERRORS)
        .and_then(Json::as_array)
        .unwrap_or_default();
    errors::group(
        list.iter()
            .filter_map(Json::as_str)
            .map(|t| (errors::last_line(t), 1)),
    )
}

/// Sums a field over the phases: none when any phase lacks it.
fn sum_phases(phases: &[Phase], f: impl Fn(&Phase) -> Option<i64>) -> Option<i64> {
    phases.iter().map(f).sum()
}

/// What a file of several benchmarks asked for, as one load: the highest concurrency when
/// every phase asked for one, the highest rate when every phase asked for a rate, else
/// neither (a mix such as GuideLLM's `sweep` profile: synchronous, throughput, rates).
fn asked_overall(phases: &[Phase]) -> (Option<i64>, Option<f64>) {
    if phases.is_empty() {
        return (None, None);
    }
    let conc: Option<Vec<i64>> = phases.iter().map(|p| p.concurrency).collect();
    if let Some(c) = conc {
        return (c.into_iter().max(), None);
    }
    let rates: Option<Vec<f64>> = phases
        .iter()
        .map(|p| p.rate.filter(|_| p.concurrency.is_none()))
        .collect();
    (None, rates.map(|r| r.into_iter().fold(f64::MIN, f64::max)))
}

/// One result from its phases: counts summed, the asked-for load as `asked_overall`
/// says, throughput as output tokens over the time under load (as `vllm bench serve`
/// computes it).
fn from_phases(tool: String, phases: Vec<Phase>, implausible: Vec<Implausible>) -> BenchResult {
    let (max_concurrency, request_rate) = asked_overall(&phases);
    let duration = phases
        .iter()
        .map(|p| p.duration)
        .sum::<Option<f64>>()
        .filter(|d| *d > 0.0);
    let total_output_tokens = sum_phases(&phases, |p| p.output_tokens);
    BenchResult {
        completed: sum_phases(&phases, |p| p.completed),
        failed: sum_phases(&phases, |p| p.failed),
        total_output_tokens,
        max_concurrency,
        duration,
        output_throughput: total_output_tokens.zip(duration).map(|(t, d)| t as f64 / d),
        num_prompts: sum_phases(&phases, |p| Some(p.completed? + p.failed?)),
        tool: Some(tool),
        request_rate,
        phases,
        implausible,
        ..BenchResult::default()
    }
}

/// Requests the client sent but left out of its result (docs/run-folder.md#load-log): 1
/// for each initial test run (one per `vllm bench serve` of several load commands), plus
/// N from the first "Warming up with N requests" and from the first "Warmup completed
/// with N sequences".
pub fn untimed_requests(load_log: &str) -> i64 {
    let mut n = load_log.matches("Initial test run completed.").count() as i64;
    n += first_count(load_log, "Warming up with ", " requests");
    n += first_count(load_log, "Warmup completed with ", " sequences");
    n
}

/// The client ran a warm-up phase of its own (`load.log`, as [`untimed_requests`] reads it).
pub fn client_warm_up(load_log: &str) -> bool {
    first_count(load_log, "Warming up with ", " requests") > 0
        || first_count(load_log, "Warmup completed with ", " sequences") > 0
}

/// The number N in the first `prefix N suffix` of the text, 0 when there is none.
fn first_count(text: &str, prefix: &str, suffix: &str) -> i64 {
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
        if !digits.is_empty() && rest[digits.len()..].starts_with(suffix) {
            return digits.parse().unwrap_or(0);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_last_line_with_infinity() {
        let t = b"{\"completed\": 1}\n{\"completed\": 32, \"total_output_tokens\": 32000, \"request_rate\": Infinity, \"failed\": null}\n";
        let r = BenchResult::read("b.jsonl", t).unwrap();
        assert_eq!(r.completed, Some(32));
        assert_eq!(r.failed, None);
        assert!(r.has_counts());
    }

    #[test]
    fn types_are_strict() {
        let r = BenchResult::read(
            "b",
            br#"{"completed": true, "duration": "1", "max_concurrency": 31.9}"#,
        )
        .unwrap();
        assert_eq!(r.completed, None);
        assert_eq!(r.duration, None);
        assert_eq!(r.max_concurrency, Some(31));
        assert!(BenchResult::read("b", b"[1, 2]").is_err());
        let e = BenchResult::read("b", b"{\"a\": ").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn implausible_counts_are_refused_not_saturated() {
        let r = BenchResult::read(
            "bench.json",
            br#"{"completed": 9223372036854775808, "total_output_tokens": -3, "failed": 0, "duration": NaN}"#,
        )
        .unwrap();
        assert_eq!((r.completed, r.total_output_tokens), (None, None));
        assert_eq!(r.failed, Some(0));
        let shown: Vec<String> = r.implausible.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "bench.json: completed = 9.223372036854776e18 is past 2^53, beyond what inferlint can count exactly",
                "bench.json: total_output_tokens = -3 is negative where the quantity cannot be",
                "bench.json: duration = NaN is not a number",
            ]
        );
        assert!(!r.has_counts());
    }

    #[test]
    fn per_request_figures_when_saved() {
        let r = BenchResult::read(
            "b",
            br#"{"completed": 2, "ttfts": [0.5, 0.0, "x", 0.25], "errors": ["", "boom", "", ""],
                 "start_times": [10.0, 10.1, null, 10.3], "latencies": [1.0, 0.0, 2.0, 1.5]}"#,
        )
        .unwrap();
        let q = r.requests.unwrap();
        assert_eq!(q.ttft_s, vec![Some(0.5), None, None, Some(0.25)]);
        assert_eq!(q.start_s.unwrap()[2], None);
        assert_eq!(q.latency_s.unwrap().len(), 4);
        assert_eq!(q.output_tokens, None, "no output_lens saved");
        let r = BenchResult::read(
            "b",
            br#"{"ttfts": [0.5, 0.25], "input_lens": [88, -1], "output_lens": [1000, 7.5]}"#,
        )
        .unwrap();
        let q = r.requests.unwrap();
        assert_eq!(q.input_tokens.unwrap(), vec![Some(88), None]);
        assert_eq!(q.output_tokens.unwrap(), vec![Some(1000), Some(7)]);
        assert_eq!(q.implausible.len(), 1, "input_lens[1] refused");
        let r = BenchResult::read("b", br#"{"completed": 2}"#).unwrap();
        assert!(r.requests.is_none());
    }

    #[test]
    fn implausible_per_request_times_are_refused_and_named() {
        let text = "{\"completed\": 1}\n{\"completed\": 4, \"ttfts\": [0.5, NaN, -0.1, 1e308], \"errors\": [\"\", \"\", \"boom\", \"\"], \"start_times\": [10.0, -3.0, 10.2, 9.3e18], \"latencies\": [1.0, 2.0, Infinity, 1.5]}\n";
        let r = BenchResult::read("run/bench.jsonl", text.as_bytes()).unwrap();
        let q = r.requests.unwrap();
        assert_eq!(q.ttft_s, vec![Some(0.5), None, None, None]);
        assert_eq!(q.start_s.unwrap(), vec![Some(10.0), None, Some(10.2), None]);
        // The failed request's infinite latency is never read, so not refused.
        assert_eq!(
            q.latency_s.unwrap(),
            vec![Some(1.0), Some(2.0), None, Some(1.5)]
        );
        let shown: Vec<String> = q.implausible.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "run/bench.jsonl:2: ttfts[1] = NaN is not a number",
                "run/bench.jsonl:2: ttfts[3] = 1e308 is longer than a year",
                "run/bench.jsonl:2: start_times[1] = -3 is negative where the quantity cannot be",
                "run/bench.jsonl:2: start_times[3] = 9.3e18 is past any monotonic clock (146 years)",
            ]
        );
        // The counts' own refusals stay apart: T15 does not read per-request times.
        assert!(r.implausible.is_empty());
    }

    #[test]
    fn untimed() {
        assert_eq!(
            untimed_requests("Initial test run completed. Starting main"),
            1
        );
        assert_eq!(
            untimed_requests("Warming up with 3 requests\nWarming up with 9 requests\nInitial test run completed."),
            4
        );
        assert_eq!(untimed_requests("Warmup completed with 1 sequences."), 1);
        assert_eq!(
            untimed_requests("Initial test run completed.\n…\nInitial test run completed."),
            2,
            "two runs, two test requests"
        );
        assert_eq!(untimed_requests("nothing"), 0);
        assert!(client_warm_up("Warming up with 32 requests..."));
        assert!(!client_warm_up("Initial test run completed."));
    }
}
