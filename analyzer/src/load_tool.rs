//! The load tool that ran, as the folder tells it, for the messages that tell a user what
//! to run again and with which flag: the recorder's manifest names the client it
//! recognised (`load.client`) and the program it ran; GuideLLM's and AIPerf's results name
//! themselves. A hint never names another tool's flag as if it were this one's.

use crate::bench::BenchResult;
use crate::docs::manifest::Client;
use crate::manifest::Manifest;

/// The load tool of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadTool {
    Known(Client),
    /// A program inferlint does not recognise, by file name (`locust`).
    Other(String),
    /// Nothing in the folder says.
    Unknown,
}

/// The load tool from the manifest, else from the result's own name.
pub fn of(manifest: Option<&Manifest>, bench: Option<&BenchResult>) -> LoadTool {
    if let Some(c) = manifest.and_then(|m| m.load_client) {
        return LoadTool::Known(c);
    }
    let named = bench.and_then(|b| b.tool.as_deref()).unwrap_or("");
    if named.starts_with("GuideLLM") {
        return LoadTool::Known(Client::Guidellm);
    }
    if named.starts_with("AIPerf") {
        return LoadTool::Known(Client::Aiperf);
    }
    match manifest.and_then(|m| m.load_program.clone()) {
        Some(p) if manifest.is_some_and(|m| m.load_given) => LoadTool::Other(p),
        _ => LoadTool::Unknown,
    }
}

/// Both common clients' flags, for a tool that is not one of them.
const EITHER_DETAILED: &str = "vllm bench serve saves them with --save-detailed, python -m \
                               sglang.bench_serving with --output-details";

impl LoadTool {
    /// How the tool keeps per-request times (T18), as a clause.
    pub fn per_request_hint(&self) -> String {
        match self {
            LoadTool::Known(Client::Vllm) => {
                "vllm bench serve saves them with --save-detailed".into()
            }
            LoadTool::Known(Client::Sglang) => {
                "python -m sglang.bench_serving saves them with --output-details".into()
            }
            LoadTool::Known(Client::Guidellm) => {
                "GuideLLM keeps them in its JSON report's request records".into()
            }
            LoadTool::Known(Client::Aiperf) => {
                "AIPerf writes them to profile_export.jsonl beside its summary".into()
            }
            LoadTool::Known(Client::Trtllm) => {
                format!("TensorRT-LLM's benchmark_serving saved none here; {EITHER_DETAILED}")
            }
            LoadTool::Other(p) => format!("{p} saved none inferlint reads; {EITHER_DETAILED}"),
            LoadTool::Unknown => EITHER_DETAILED.into(),
        }
    }

    /// How the tool runs a warm-up phase before it measures (T18), as a command and flag.
    pub fn warm_up_hint(&self) -> String {
        match self {
            LoadTool::Known(Client::Sglang) => {
                "python -m sglang.bench_serving --warmup-requests N".into()
            }
            LoadTool::Known(Client::Guidellm) => "GuideLLM's warmup= option of --profile".into(),
            LoadTool::Known(Client::Aiperf) => "aiperf profile --warmup-request-count N".into(),
            LoadTool::Known(Client::Vllm) => "vllm bench serve --num-warmups N".into(),
            _ => "vllm bench serve --num-warmups N, python -m sglang.bench_serving \
                  --warmup-requests N"
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(client: Option<Client>, program: &str) -> Manifest {
        Manifest {
            load_client: client,
            load_given: true,
            load_program: Some(program.into()),
            load_unrecognised: client.is_none(),
            ..Manifest::default()
        }
    }

    #[test]
    fn each_tool_is_named_by_its_own_flag() {
        let sg = of(Some(&manifest(Some(Client::Sglang), "python")), None);
        assert_eq!(sg, LoadTool::Known(Client::Sglang));
        assert!(sg.per_request_hint().contains("--output-details"));
        assert!(!sg.per_request_hint().contains("vllm"));
        assert!(sg.warm_up_hint().contains("--warmup-requests"));
        let v = of(Some(&manifest(Some(Client::Vllm), "vllm")), None);
        assert!(v.per_request_hint().starts_with("vllm bench serve"));
        assert!(v.warm_up_hint().contains("--num-warmups"));
        let other = of(Some(&manifest(None, "locust")), None);
        assert_eq!(other, LoadTool::Other("locust".into()));
        assert!(other.per_request_hint().starts_with("locust saved none"));
        // Without a manifest, a result that names its tool.
        let g = BenchResult {
            tool: Some("GuideLLM 0.8.1".into()),
            ..BenchResult::default()
        };
        assert_eq!(of(None, Some(&g)), LoadTool::Known(Client::Guidellm));
        assert_eq!(of(None, None), LoadTool::Unknown);
        assert!(LoadTool::Unknown
            .per_request_hint()
            .contains("--save-detailed"));
    }
}
