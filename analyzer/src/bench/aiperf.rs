//! AIPerf's summary (`aiperf profile`, 0.13: `profile_export_aiperf.json` in its artifact
//! directory): every metric a top-level `{unit, avg, …}`, the load asked for in
//! `input_config.phases`. Its start and end are naive local times, so no wall clock is
//! taken from them.

use super::gated::{at, Gated};
use super::{from_phases, BenchResult, Phase};
use crate::json::Json;
use crate::plausible::Quantity;

/// An AIPerf summary: `aiperf_version`, or `request_count` with an `avg`.
pub fn recognise(v: &Json) -> bool {
    v.get("aiperf_version").is_some() || at(v, &["request_count", "avg"]).is_some()
}

/// The profiling phase of `input_config.phases` (the first, when none is named so).
fn profiling(v: &Json) -> Option<&Json> {
    let phases = at(v, &["input_config", "phases"])?.as_array()?;
    phases
        .iter()
        .find(|p| p.get("kind").and_then(Json::as_str) == Some("profiling"))
        .or(phases.first())
}

pub fn read(v: &Json, where_: (&str, Option<usize>)) -> BenchResult {
    let g = Gated::new(where_);
    let avg = |k: &str| g.num(v, "", &[k, "avg"], Quantity::Measure);
    let count = |k: &str| g.count(v, "", &[k, "avg"]);
    let asked = profiling(v);
    // `concurrency` with type "concurrency" is what was asked; beside a rate it is a cap.
    let by_concurrency = asked
        .and_then(|p| p.get("type"))
        .and_then(Json::as_str)
        .is_some_and(|t| t == "concurrency");
    let phase_num = |k: &str, q| asked.and_then(|p| g.num(p, "input_config.phases", &[k], q));
    let (concurrency, rate) = if by_concurrency {
        let c = phase_num("concurrency", Quantity::Count).map(|x| x.trunc() as i64);
        (c, None)
    } else {
        (None, phase_num("rate", Quantity::Measure))
    };
    // A count AIPerf leaves out when it is zero (`error_request_count`, and
    // `request_count` when nothing succeeded) is zero once the run's total is there.
    let finished = count("completed_request_count");
    let or_zero = |n: Option<i64>| n.or(finished.map(|_| 0));
    let output_tokens =
        count("total_usage_completion_tokens").or_else(|| count("total_output_tokens"));
    let phase = Phase {
        concurrency,
        rate,
        completed: or_zero(count("request_count")),
        failed: or_zero(count("error_request_count")),
        output_tokens,
        start_wall: None,
        end_wall: None,
        duration: g.num(v, "", &["benchmark_duration", "avg"], Quantity::Seconds),
        timing: None,
        requests: None,
        asked_output: super::asked::from_aiperf_result(v),
    };
    let version = v
        .get("aiperf_version")
        .and_then(Json::as_str)
        .map(|s| format!(" {s}"))
        .unwrap_or_default();
    let asked_output = phase.asked_output.clone();
    let mut r = from_phases(format!("AIPerf{version}"), vec![phase], Vec::new());
    r.asked_output = asked_output;
    r.output_shortest = g.count(v, "", &["output_sequence_length", "min"]);
    r.errors = errors(v);
    r.total_input_tokens = count("total_usage_prompt_tokens").or_else(|| count("total_isl"));
    r.output_throughput = avg("output_token_throughput").or(r.output_throughput);
    r.mean_ttft_ms = avg("time_to_first_token");
    r.median_ttft_ms = g.num(v, "", &["time_to_first_token", "p50"], Quantity::Measure);
    r.p99_ttft_ms = g.num(v, "", &["time_to_first_token", "p99"], Quantity::Measure);
    r.mean_tpot_ms = avg("inter_token_latency");
    r.mean_e2el_ms = avg("request_latency");
    r.num_prompts = finished;
    // The warm-up phase's own figures, when one ran: its successful requests.
    r.untimed = v.get("warmup_metrics").filter(|w| !w.is_null()).map(|w| {
        g.count(w, "warmup_metrics", &["request_count", "avg"])
            .unwrap_or(0)
    });
    r.implausible = g.into_refused();
    r
}

/// `error_summary`: each reason (`error_details`: `code`, `type`, `message`) with its
/// count, as AIPerf grouped them.
fn errors(v: &Json) -> Vec<super::ErrorGroup> {
    let list = v
        .get("error_summary")
        .and_then(Json::as_array)
        .unwrap_or_default();
    let texts: Vec<(String, i64)> = list
        .iter()
        .filter_map(|e| {
            let d = e.get("error_details")?;
            let part = |k: &str| {
                d.get(k)
                    .map(|x| x.as_str().map_or_else(|| x.to_compact(), str::to_string))
            };
            let text = [part("code"), part("type"), part("message")]
                .into_iter()
                .flatten()
                .filter(|s| !s.is_empty() && s != "null")
                .collect::<Vec<_>>()
                .join(" ");
            Some((text, e.get("count").and_then(Json::as_i64_trunc)?))
        })
        .collect();
    super::errors::group(texts.iter().map(|(t, n)| (t.as_str(), *n)))
}

#[cfg(test)]
mod tests {
    use super::super::BenchResult;

    fn read(case: &str) -> BenchResult {
        let path = format!(
            "{}/../fixtures/loadtools/{case}/profile_export_aiperf.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        BenchResult::read("profile_export_aiperf.json", &bytes).unwrap()
    }

    #[test]
    fn a_concurrency_run() {
        let r = read("aiperf-c8");
        assert_eq!(r.tool.as_deref(), Some("AIPerf 0.13.0"));
        assert_eq!((r.max_concurrency, r.request_rate), (Some(8), None));
        assert_eq!((r.completed, r.failed), (Some(24), Some(0)));
        assert_eq!(r.total_output_tokens, Some(2400));
        assert_eq!(
            r.total_input_tokens,
            Some(2328),
            "the server's usage counts"
        );
        assert_eq!(r.num_prompts, Some(24));
        assert!((r.duration.unwrap() - 6.222437888).abs() < 1e-9);
        assert!(r.has_counts() && !r.is_sweep() && r.implausible.is_empty());
        assert_eq!(
            r.phases[0].start_wall, None,
            "naive local times are not read"
        );
    }

    #[test]
    fn the_warm_up_phase_is_counted_apart() {
        let r = read("aiperf-warmup");
        assert_eq!((r.completed, r.untimed), (Some(8), Some(3)));
        assert_eq!(r.total_output_tokens, Some(240), "the measured phase only");
        assert_eq!(read("aiperf-c8").untimed, None, "no warm-up ran");
    }

    #[test]
    fn a_rate_run_and_errors() {
        let r = read("aiperf-poisson4");
        assert_eq!((r.max_concurrency, r.request_rate), (None, Some(4.0)));
        assert_eq!(r.completed, Some(16));
        let r = read("aiperf-errors-503");
        assert_eq!((r.completed, r.failed), (Some(3), Some(13)));
        assert_eq!(r.total_output_tokens, Some(150));
    }

    #[test]
    fn absent_counts_are_zero_only_beside_the_total() {
        let r = BenchResult::read(
            "p.json",
            br#"{"aiperf_version": "0.13.0", "completed_request_count": {"avg": 4},
                "error_request_count": {"avg": 4}, "total_output_tokens": {"avg": 0}}"#,
        )
        .unwrap();
        assert_eq!((r.completed, r.failed), (Some(0), Some(4)));
        let r = BenchResult::read("p.json", br#"{"aiperf_version": "0.13.0"}"#).unwrap();
        assert_eq!((r.completed, r.failed), (None, None));
    }
}
