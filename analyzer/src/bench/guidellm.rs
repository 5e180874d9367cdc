//! GuideLLM's JSON report (`guidellm run --output kind=json,path=…`, 0.8.x): one benchmark
//! per profile step in `benchmarks[]`, each with its strategy, request totals, token
//! counts and unix-second start and end.

use super::gated::{at, Gated};
use super::{from_phases, BenchResult, Phase, Requests};
use crate::json::Json;
use crate::plausible::{self, Implausible, Quantity};

/// A GuideLLM report: a `benchmarks` array whose entries carry `metrics`, or
/// `metadata.guidellm_version`.
pub fn recognise(v: &Json) -> bool {
    let versioned = at(v, &["metadata", "guidellm_version"]).is_some();
    let shaped = v
        .get("benchmarks")
        .and_then(Json::as_array)
        .and_then(|b| b.first())
        .is_some_and(|b| b.get("metrics").is_some() && b.get("config").is_some());
    versioned || shaped
}

pub fn read(v: &Json, where_: (&str, Option<usize>)) -> BenchResult {
    let g = Gated::new(where_);
    let benchmarks = v
        .get("benchmarks")
        .and_then(Json::as_array)
        .unwrap_or_default();
    let asked = super::asked::from_guidellm_result(v);
    let phases = benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| Phase {
            asked_output: asked.clone(),
            ..phase(&g, b, &format!("benchmarks[{i}]"), where_)
        })
        .collect();
    let version = at(v, &["metadata", "guidellm_version"])
        .and_then(Json::as_str)
        .map(|s| format!(" {s}"))
        .unwrap_or_default();
    let mut r = from_phases(format!("GuideLLM{version}"), phases, Vec::new());
    r.asked_output = asked;
    r.errors = errors(benchmarks);
    r.output_shortest = benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let path = ["metrics", "output_token_count", "successful", "min"];
            g.count(b, &format!("benchmarks[{i}]"), &path)
        })
        .collect::<Option<Vec<i64>>>()
        .and_then(|v| v.into_iter().min());
    r.untimed = benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| untimed(&g, b, &format!("benchmarks[{i}]")))
        .sum();
    if let [b] = benchmarks {
        // Latency figures of one benchmark; a sweep's percentiles cannot be merged.
        let p = "benchmarks[0]";
        let ttft = ["metrics", "time_to_first_token_ms", "successful"];
        let with = |tail: &[&'static str]| [&ttft[..], tail].concat();
        r.mean_ttft_ms = g.num(b, p, &with(&["mean"]), Quantity::Measure);
        r.median_ttft_ms = g.num(b, p, &with(&["median"]), Quantity::Measure);
        r.p99_ttft_ms = g.num(b, p, &with(&["percentiles", "p99"]), Quantity::Measure);
        let tpot = ["metrics", "time_per_output_token_ms", "successful", "mean"];
        r.mean_tpot_ms = g.num(b, p, &tpot, Quantity::Measure);
        // GuideLLM's request latency is in seconds.
        let e2e = ["metrics", "request_latency", "successful", "mean"];
        r.mean_e2el_ms = g.num(b, p, &e2e, Quantity::Seconds).map(|s| s * 1000.0);
        r.total_input_tokens = g.count(
            b,
            p,
            &["metrics", "prompt_token_count", "successful", "total_sum"],
        );
        r.requests = r.phases.first().and_then(|ph| ph.requests.clone());
    }
    r.implausible = g.into_refused();
    r
}

/// One benchmark's per-request times (T18), when it kept its request records: those that
/// finished inside its measured window (GuideLLM's rule: a request finished during its
/// warm-up or cool-down is left out), in the order they started; times to first token
/// only for the successful ones.
fn requests(b: &Json, file: (&str, Option<usize>), p: &str) -> Option<Requests> {
    let lists = b.get("requests")?;
    let window = |k: &str| at(b, &["scheduler_metrics", k]).and_then(Json::as_f64);
    let (from, to) = (window("measure_start_time"), window("measure_end_time"));
    let mut found: Vec<Implausible> = Vec::new();
    let mut rows: Vec<(f64, Option<f64>, Option<f64>)> = Vec::new();
    for kind in ["successful", "errored", "incomplete"] {
        let Some(list) = lists.get(kind).and_then(Json::as_array) else {
            continue;
        };
        for (i, q) in list.iter().enumerate() {
            let field = |k: &str| format!("{p}.requests.{kind}[{i}].{k}");
            let mut gate = |k: &str, q_: Quantity, x: Option<f64>| {
                plausible::keep(q_, x, file, &field(k), &mut found)
            };
            let num = |k: &str| q.get(k).and_then(Json::as_f64);
            let Some(start) = gate(
                "request_start_time",
                Quantity::ClientClock,
                num("request_start_time"),
            ) else {
                continue;
            };
            let end = num("request_end_time").unwrap_or(start);
            if from.is_some_and(|f| end < f) || to.is_some_and(|t| end > t) {
                continue; // finished in the warm-up or cool-down, outside what was measured
            }
            let latency = gate("request_latency", Quantity::Seconds, num("request_latency"));
            // Gated as the seconds T18 reads.
            let ttft = match kind {
                "successful" => gate(
                    "time_to_first_token_ms/1000",
                    Quantity::Seconds,
                    num("time_to_first_token_ms").map(|ms| ms / 1000.0),
                )
                .filter(|&s| s > 0.0),
                _ => None,
            };
            rows.push((start, ttft, latency));
        }
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Requests {
        ttft_s: rows.iter().map(|r| r.1).collect(),
        start_s: Some(rows.iter().map(|r| Some(r.0)).collect()),
        latency_s: Some(rows.iter().map(|r| r.2).collect()),
        // No tokens per request are read from these records: the replay takes the run's
        // averages.
        output_tokens: None,
        input_tokens: None,
        implausible: found,
    })
}

/// The error texts of the errored requests the benchmarks kept (`error`, or
/// `info.error`), grouped; none when the records were not kept.
fn errors(benchmarks: &[Json]) -> Vec<super::ErrorGroup> {
    let texts = benchmarks.iter().flat_map(|b| {
        at(b, &["requests", "errored"])
            .and_then(Json::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(|q| {
                q.get("error")
                    .or_else(|| at(q, &["info", "error"]))
                    .and_then(Json::as_str)
            })
            .map(|t| (super::errors::last_line(t), 1))
    });
    super::errors::group(texts)
}

/// Requests of one benchmark left out of its metrics (its warm-up and cool-down): the
/// scheduler's successful requests beyond those the metrics count.
fn untimed(g: &Gated<'_>, b: &Json, p: &str) -> Option<i64> {
    let made = g.count(b, p, &["scheduler_metrics", "requests_made", "successful"])?;
    let measured = g.count(b, p, &["metrics", "request_totals", "successful"])?;
    Some((made - measured).max(0))
}

/// One benchmark. The strategy says what it asked for: `streams` for a concurrent
/// profile (else its `max_concurrency`), 1 for synchronous, `max_concurrency` for
/// throughput; a rate for constant, Poisson and async profiles, whose `max_concurrency`
/// is only a cap.
fn phase(g: &Gated<'_>, b: &Json, p: &str, file: (&str, Option<usize>)) -> Phase {
    let strategy = ["config", "strategy"];
    let key = |k: &'static str| [&strategy[..], &[k]].concat();
    let kind = at(b, &key("type_")).and_then(Json::as_str).unwrap_or("");
    let concurrency = match kind {
        "concurrent" => g
            .count(b, p, &key("streams"))
            .or_else(|| g.count(b, p, &key("max_concurrency"))),
        "synchronous" => Some(1),
        "throughput" => g.count(b, p, &key("max_concurrency")),
        _ => None,
    };
    let rate = match concurrency {
        None => g.num(b, p, &key("rate"), Quantity::Measure),
        Some(_) => None,
    };
    let totals = |k: &str| g.count(b, p, &["metrics", "request_totals", k]);
    let failed = totals("errored")
        .zip(totals("incomplete"))
        .map(|(e, i)| e + i);
    Phase {
        concurrency,
        rate,
        completed: totals("successful"),
        failed,
        output_tokens: g.count(
            b,
            p,
            &["metrics", "output_token_count", "successful", "total_sum"],
        ),
        start_wall: g.num(b, p, &["start_time"], Quantity::WallClock),
        end_wall: g.num(b, p, &["end_time"], Quantity::WallClock),
        duration: g.num(b, p, &["duration"], Quantity::Seconds),
        timing: None,
        requests: requests(b, file, p),
        asked_output: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::BenchResult;

    fn read(case: &str) -> BenchResult {
        let path = format!(
            "{}/../fixtures/loadtools/{case}/benchmarks.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        BenchResult::read("benchmarks.json", &bytes).unwrap()
    }

    #[test]
    fn one_concurrent_benchmark() {
        let r = read("guidellm-concurrent16");
        assert_eq!(r.tool.as_deref(), Some("GuideLLM 0.8.1"));
        assert_eq!((r.completed, r.failed), (Some(48), Some(0)));
        assert_eq!(r.total_output_tokens, Some(4800));
        assert_eq!(r.total_input_tokens, Some(480));
        assert_eq!((r.max_concurrency, r.request_rate), (Some(16), None));
        assert_eq!(r.phases.len(), 1);
        let p = &r.phases[0];
        assert_eq!(p.start_wall, Some(1796035810.222869));
        assert_eq!(p.end_wall, Some(1796035816.6191423));
        assert!((r.duration.unwrap() - 6.396273374557495).abs() < 1e-9);
        assert!((r.mean_ttft_ms.unwrap() - 41.06).abs() < 0.01);
        assert!(r.has_counts() && !r.is_sweep() && r.implausible.is_empty());
    }

    #[test]
    fn per_request_times_of_the_measured_window() {
        let q = read("guidellm-concurrent16").requests.unwrap();
        assert_eq!(q.ttft_s.len(), 48);
        assert!(q
            .ttft_s
            .iter()
            .all(|t| t.is_some_and(|s| s > 0.0 && s < 1.0)));
        let starts = q.start_s.as_ref().unwrap();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "in start order");
        assert!(q.ttft_s.contains(&Some(0.03058481216430664)));
        assert!(q.implausible.is_empty());
        let sweep = read("guidellm-concurrent-2-8");
        assert_eq!(sweep.requests, None, "a sweep's steps are not one run");
        assert_eq!(read("guidellm-poisson4").requests, None, "records trimmed");
        // 8 made, the first 4 finished in the warm-up.
        let q = read("guidellm-warmup").requests.unwrap();
        assert_eq!(q.ttft_s.len(), 4);
    }

    #[test]
    fn a_concurrency_sweep_is_read_at_its_highest() {
        let r = read("guidellm-concurrent-2-8");
        assert_eq!(r.phases.len(), 2);
        assert_eq!(r.phases[0].concurrency, Some(2));
        assert_eq!(r.phases[1].concurrency, Some(8));
        assert_eq!(r.max_concurrency, Some(8));
        assert_eq!((r.completed, r.total_output_tokens), (Some(32), Some(3200)));
        assert_eq!(
            r.sweep_phrase().as_deref(),
            Some("a sweep of 2 phases (2 at once, 8 at once)")
        );
        assert_eq!(
            r.mean_ttft_ms, None,
            "percentiles of two phases do not merge"
        );
    }

    #[test]
    fn rate_profiles_ask_for_no_concurrency() {
        let r = read("guidellm-poisson4");
        assert_eq!((r.max_concurrency, r.request_rate), (None, Some(4.0)));
        assert_eq!(r.completed, Some(16));
        let r = read("guidellm-constant-2-4");
        assert_eq!((r.max_concurrency, r.request_rate), (None, Some(4.0)));
        assert_eq!(r.phases[0].asked(), "2 requests/s");
        assert_eq!(r.completed, Some(16));
    }

    #[test]
    fn warm_up_requests_are_counted_apart() {
        let r = read("guidellm-warmup");
        assert_eq!(r.completed, Some(4), "what the metrics measured");
        assert_eq!(r.untimed, Some(4), "8 made, 4 in the warm-up");
        assert_eq!(read("guidellm-concurrent16").untimed, Some(0));
        assert_eq!(read("guidellm-concurrent-2-8").untimed, Some(0));
    }

    #[test]
    fn errored_requests_are_failed() {
        let r = read("guidellm-errors-503");
        assert_eq!((r.completed, r.failed), (Some(3), Some(13)));
        assert_eq!(r.total_output_tokens, Some(150));
        assert_eq!(r.num_prompts, Some(16));
    }

    #[test]
    fn refused_counts_name_their_path() {
        let text = br#"{"metadata": {"guidellm_version": "0.8.1"}, "benchmarks": [{"config":
            {"strategy": {"type_": "concurrent", "streams": 4}}, "metrics": {"request_totals":
            {"successful": -1, "errored": 0, "incomplete": 0}}}]}"#;
        let r = BenchResult::read("b.json", text).unwrap();
        assert_eq!(r.completed, None);
        assert_eq!(
            r.implausible[0].field,
            "benchmarks[0].metrics.request_totals.successful"
        );
        assert_eq!(r.max_concurrency, Some(4));
    }
}
