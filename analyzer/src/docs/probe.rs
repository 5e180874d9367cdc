//! `probe.json` (`inferlint.probe/1`, docs/run-folder.md#probe): the live probe's request,
//! every reply, the health check after the burst, and the outcome T7's rule gives on them
//! (`rules::t07_crash_after_ready::outcome`).

use serde::{Deserialize, Serialize};

use super::keyword::keywords;
use super::Document;

/// What each request asked for, and how many went out at once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeRequest {
    pub prompt: String,
    pub max_tokens: u32,
    pub temperature: f64,
    pub concurrency: usize,
}

/// One reply. A 503 that is not good is a rejection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reply {
    /// Status 200, a JSON body, and tokens or text.
    pub ok: bool,
    /// The HTTP status; none when no answer came.
    pub status: Option<u16>,
    /// Seconds (monotonic), rounded to 3 decimals.
    pub seconds: Option<f64>,
    pub completion_tokens: Option<i64>,
    pub error: Option<String>,
}

impl Reply {
    /// HTTP 503 without a good reply: turned away by admission control, not a failure.
    pub fn rejected(&self) -> bool {
        !self.ok && self.status == Some(503)
    }
}

keywords! {
    /// The probe's stored outcome.
    pub enum ProbeOutcome {
        Pass = "pass",
        Fail = "fail",
    }
}

/// `probe.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Probe {
    /// The server's base URL.
    pub url: String,
    pub model: Option<String>,
    /// Why the model list failed (nothing was sent then).
    pub models_error: Option<String>,
    pub request: Option<ProbeRequest>,
    pub first: Option<Reply>,
    /// None when no burst was sent (the first request failed).
    pub burst: Option<Vec<Reply>>,
    /// `GET /health` after the burst answered 200.
    pub alive_after: Option<bool>,
    pub outcome: Option<ProbeOutcome>,
    pub message: Option<String>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
}

impl Document for Probe {
    const SCHEMA: &'static str = "inferlint.probe/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes};
    use super::*;

    #[test]
    fn recorded_probes_round_trip_byte_for_byte() {
        for engine in ["vllm", "sglang", "trtllm"] {
            let bytes = fixture(engine, "probe.json");
            let p: Probe = read("probe.json", &bytes).unwrap();
            assert_eq!(p.outcome, Some(ProbeOutcome::Pass), "{engine}");
            assert_eq!(p.burst.as_ref().map(Vec::len), Some(8));
            assert_eq!(
                String::from_utf8(to_bytes(&p)).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
        }
    }

    #[test]
    fn the_rejections_example_reads() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/edge/probe-rejections/probe.json"
        );
        let p: Probe = read("probe.json", &std::fs::read(path).unwrap()).unwrap();
        let burst = p.burst.unwrap();
        assert_eq!(burst.iter().filter(|r| r.rejected()).count(), 3);
        assert!(p
            .message
            .unwrap()
            .contains("3 rejected by admission control"));
    }

    #[test]
    fn a_failed_model_list_reads_back() {
        let p = Probe {
            url: "http://127.0.0.1:9".into(),
            models_error: Some("connection refused".into()),
            request: Some(ProbeRequest {
                prompt: "Write one sentence about the weather.".into(),
                max_tokens: 16,
                temperature: 0.0,
                concurrency: 8,
            }),
            outcome: Some(ProbeOutcome::Fail),
            message: Some("cannot list models: connection refused".into()),
            ..Probe::default()
        };
        let bytes = to_bytes(&p);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains(" \"first\": null,\n \"burst\": null,\n \"alive_after\": null,\n \"outcome\": \"fail\","));
        assert_eq!(read::<Probe>("probe.json", &bytes).unwrap(), p);
    }
}
