//! AIPerf's per-request export (`profile_export.jsonl`, 0.13): one JSON object a line,
//! `metadata` with the request's unix-nanosecond times (`request_start_ns`,
//! `request_end_ns`) and its phase (`benchmark_phase`: `warmup` or `profiling`),
//! `metrics` with its figures (`time_to_first_token`, `request_latency`: `{value, unit:
//! "ms"}`), and `error` when it failed. Read a line at a time (the file grows with every
//! request), each number through the plausibility gate. It gives an AIPerf step its window
//! (its summary has no wall times: the first profiling request's start to the last one's
//! end) and its per-request times (T18).

use super::Requests;
use crate::input::{decode_strict, InputError};
use crate::json::{self, Json};
use crate::plausible::{self, Implausible, Quantity};

/// A step's profiling requests: when they ran and their per-request figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    /// The first request's start and the last one's end, unix seconds.
    pub start_wall: Option<f64>,
    pub end_wall: Option<f64>,
    /// In the export's order: time to first token, start (unix seconds) and latency.
    pub requests: Requests,
}

/// The value of `{"value": x, "unit": "ms"}`, in ms (other units are not read).
fn ms_value(v: Option<&Json>) -> Option<f64> {
    unit_value(v, "ms")
}

/// The value of `{"value": x, "unit": unit}` (another unit is not read).
fn unit_value(v: Option<&Json>, unit: &str) -> Option<f64> {
    let v = v?;
    (v.get("unit").and_then(Json::as_str) == Some(unit))
        .then(|| v.get("value").and_then(Json::as_f64))
        .flatten()
}

/// Reads the export; `file` names it in errors. A line that is not a JSON object is an
/// error naming its line; warm-up requests are left out.
pub fn read(file: &str, bytes: &[u8]) -> Result<Records, InputError> {
    let text = decode_strict(file, bytes)?;
    let mut out = Records::default();
    let (mut starts, mut latencies) = (Vec::new(), Vec::new());
    let (mut prompts, mut lengths) = (Vec::new(), Vec::new());
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let v = json::parse(line).map_err(|e| InputError::new(file, Some(n), e.reason))?;
        let meta = v
            .get("metadata")
            .filter(|m| m.as_object().is_some())
            .ok_or_else(|| InputError::new(file, Some(n), "a record without `metadata`"))?;
        let phase = meta.get("benchmark_phase").and_then(Json::as_str);
        if phase.is_some_and(|p| p != "profiling") {
            continue;
        }
        let failed = v.get("error").is_some_and(|e| !e.is_null())
            || meta.get("was_cancelled").and_then(Json::as_bool) == Some(true);
        // `scale` converts the value as written (named in a refusal) to what is gated.
        let mut gate = |field: &str, q: Quantity, x: Option<f64>, scale: f64| -> Option<f64> {
            let x = x?;
            match plausible::check(q, x * scale) {
                Ok(()) => Some(x * scale),
                Err(why) => {
                    found.push(Implausible::new(file, Some(n), field, x, why));
                    None
                }
            }
        };
        let ns = |k: &str| meta.get(k).and_then(Json::as_f64);
        let wall = Quantity::WallClock;
        let start = gate("request_start_ns", wall, ns("request_start_ns"), 1e-9);
        let end = gate("request_end_ns", wall, ns("request_end_ns"), 1e-9);
        // Every request the step sent bounds its window, failed or not.
        if let Some(s) = start {
            out.start_wall = Some(out.start_wall.map_or(s, |w: f64| w.min(s)));
        }
        if let Some(e) = end {
            out.end_wall = Some(out.end_wall.map_or(e, |w: f64| w.max(e)));
        }
        let metrics = v.get("metrics");
        let ttft = (!failed)
            .then(|| ms_value(metrics.and_then(|m| m.get("time_to_first_token"))))
            .flatten();
        let latency = (!failed)
            .then(|| ms_value(metrics.and_then(|m| m.get("request_latency"))))
            .flatten();
        let secs = Quantity::Seconds;
        let ttft = gate("time_to_first_token", secs, ttft, 1e-3);
        out.requests.ttft_s.push(ttft.filter(|&t| t > 0.0));
        latencies.push(gate("request_latency", secs, latency, 1e-3));
        starts.push(start);
        // A failed request's lengths are not an answer's.
        let mut tokens = |k: &str| {
            let v = (!failed)
                .then(|| unit_value(metrics.and_then(|m| m.get(k)), "tokens"))
                .flatten();
            gate(k, Quantity::Count, v, 1.0).map(|t| t.trunc() as i64)
        };
        prompts.push(tokens("input_sequence_length"));
        lengths.push(tokens("output_sequence_length"));
    }
    out.requests.start_s = Some(starts);
    out.requests.latency_s = Some(latencies);
    out.requests.input_tokens = Some(prompts);
    out.requests.output_tokens = Some(lengths);
    out.requests.implausible = found;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(phase: &str, start_ns: &str, end_ns: &str, ttft_ms: f64, error: bool) -> String {
        let error = if error {
            r#", "error": {"code": 503}"#
        } else {
            ""
        };
        format!(
            r#"{{"metadata": {{"benchmark_phase": "{phase}", "request_start_ns": {start_ns}, "request_end_ns": {end_ns}, "was_cancelled": false}}, "metrics": {{"time_to_first_token": {{"value": {ttft_ms}, "unit": "ms"}}, "request_latency": {{"value": 1500.0, "unit": "ms"}}}}{error}}}"#
        )
    }

    #[test]
    fn the_profiling_requests_give_the_window_and_the_times() {
        let text = [
            record(
                "warmup",
                "1796036400000000000",
                "1796036401000000000",
                90.0,
                false,
            ),
            record(
                "profiling",
                "1796036412500000000",
                "1796036414000000000",
                40.0,
                false,
            ),
            String::new(),
            record(
                "profiling",
                "1796036413000000000",
                "1796036429900000000",
                0.0,
                true,
            ),
            record(
                "profiling",
                "1796036414000000000",
                "1796036415500000000",
                35.0,
                false,
            ),
        ]
        .join("\n");
        let r = read("bench-1.requests.jsonl", text.as_bytes()).unwrap();
        assert_eq!(r.start_wall, Some(1_796_036_412.5));
        assert_eq!(r.end_wall, Some(1_796_036_429.9));
        assert_eq!(r.requests.ttft_s, vec![Some(0.04), None, Some(0.035)]);
        assert_eq!(
            r.requests.latency_s.unwrap(),
            vec![Some(1.5), None, Some(1.5)]
        );
        assert_eq!(r.requests.start_s.unwrap()[2], Some(1_796_036_414.0));
        // No sequence lengths in these records: known to be unknown, one per request.
        assert_eq!(r.requests.output_tokens.unwrap(), vec![None; 3]);
        let with_lengths = r#"{"metadata": {"benchmark_phase": "profiling", "request_start_ns": 1796036412500000000}, "metrics": {"input_sequence_length": {"value": 32, "unit": "tokens"}, "output_sequence_length": {"value": 64, "unit": "tokens"}}}"#;
        let r = read("r.jsonl", with_lengths.as_bytes()).unwrap();
        assert_eq!(r.requests.input_tokens.unwrap(), vec![Some(32)]);
        assert_eq!(r.requests.output_tokens.unwrap(), vec![Some(64)]);
    }

    #[test]
    fn bad_lines_and_implausible_numbers_are_named() {
        let text = format!(
            "{}\n{{\"metadata\": \n",
            record("profiling", "1", "2", 40.0, false)
        );
        let e = read("r.jsonl", text.as_bytes()).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("r.jsonl", Some(2)));
        let e = read("r.jsonl", b"[1]\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let text = record("profiling", "-5", "1796036414000000000", 1e300, false);
        let r = read("r.jsonl", text.as_bytes()).unwrap();
        assert_eq!(r.start_wall, None);
        let shown: Vec<String> = r
            .requests
            .implausible
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown[0].starts_with("r.jsonl:1: request_start_ns"),
            "{shown:?}"
        );
        assert!(
            shown[1].starts_with("r.jsonl:1: time_to_first_token"),
            "{shown:?}"
        );
    }
}
