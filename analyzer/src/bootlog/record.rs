//! The facts record (`boot-facts --json`, the Report's `facts`;
//! docs/run-folder.md#boot-log): a boot log's facts are written as this record, keys in a
//! fixed order.

use serde::{Serialize, Serializer};

use super::{BootFacts, Unparsed};
use crate::json::{ordered_map, Json};

/// Written as the facts record (the derived facts stay out of it).
impl Serialize for BootFacts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FactsRecord::of(self).serialize(s)
    }
}

/// The record's layout: every field as [`BootFacts`] holds it, in the record's order.
#[derive(Serialize)]
struct FactsRecord<'a> {
    engine: Option<&'static str>,
    vllm_version: &'a Option<String>,
    engine_version: &'a Option<String>,
    server_version: &'a Option<String>,
    non_default_args: &'a Option<Json>,
    server_args: &'a Option<Json>,
    page_size: Option<i64>,
    running_cap: Option<i64>,
    running_cap_reason: &'a Option<String>,
    requested_running: Option<i64>,
    requested_backend: &'a Option<String>,
    selected_backends: &'a [String],
    drafter_backends: &'a [String],
    candidate_backends: &'a [String],
    attention_block_size: Option<i64>,
    mamba_page_padding_pct: Option<f64>,
    kv_pool_tokens: Option<i64>,
    max_concurrency: Option<f64>,
    max_concurrency_request_len: Option<i64>,
    available_kv_cache_gib: Option<f64>,
    model_load_gib: Option<f64>,
    model_load_s: Option<f64>,
    cudagraphs: Option<bool>,
    cudagraph_estimated_gib: Option<f64>,
    cudagraph_actual_gib: Option<f64>,
    /// `[from, to]`.
    cudagraph_mode_downgrade: &'a Option<(String, String)>,
    consumed_gib: Option<f64>,
    peak_activation_gib: Option<f64>,
    compile_s: Option<f64>,
    compiled_fresh: Option<bool>,
    pauses: Option<i64>,
    served_in_log: Option<i64>,
    speculative: Option<bool>,
    ready: bool,
    ready_lineno: Option<usize>,
    /// Process tag name → its pids.
    #[serde(serialize_with = "ordered_map")]
    processes: &'a [(String, Vec<i64>)],
    #[serde(serialize_with = "unparsed_lines")]
    unparsed: &'a [Unparsed],
    /// Field id → every distinct value seen.
    #[serde(serialize_with = "ordered_map")]
    conflicts: &'a [(String, Vec<Json>)],
    lines: usize,
}

impl<'a> FactsRecord<'a> {
    fn of(facts: &'a BootFacts) -> Self {
        FactsRecord {
            engine: facts.engine.map(|e| e.key()),
            vllm_version: &facts.vllm_version,
            engine_version: &facts.engine_version,
            server_version: &facts.server_version,
            non_default_args: &facts.non_default_args,
            server_args: &facts.server_args,
            page_size: facts.page_size,
            running_cap: facts.running_cap,
            running_cap_reason: &facts.running_cap_reason,
            requested_running: facts.requested_running,
            requested_backend: &facts.requested_backend,
            selected_backends: &facts.selected_backends,
            drafter_backends: &facts.drafter_backends,
            candidate_backends: &facts.candidate_backends,
            attention_block_size: facts.attention_block_size,
            mamba_page_padding_pct: facts.mamba_page_padding_pct,
            kv_pool_tokens: facts.kv_pool_tokens,
            max_concurrency: facts.max_concurrency,
            max_concurrency_request_len: facts.max_concurrency_request_len,
            available_kv_cache_gib: facts.available_kv_cache_gib,
            model_load_gib: facts.model_load_gib,
            model_load_s: facts.model_load_s,
            cudagraphs: facts.cudagraphs,
            cudagraph_estimated_gib: facts.cudagraph_estimated_gib,
            cudagraph_actual_gib: facts.cudagraph_actual_gib,
            cudagraph_mode_downgrade: &facts.cudagraph_mode_downgrade,
            consumed_gib: facts.consumed_gib,
            peak_activation_gib: facts.peak_activation_gib,
            compile_s: facts.compile_s,
            compiled_fresh: facts.compiled_fresh,
            pauses: facts.pauses,
            served_in_log: facts.served_in_log,
            speculative: facts.speculative,
            ready: facts.ready,
            ready_lineno: facts.ready_lineno,
            processes: &facts.processes,
            unparsed: &facts.unparsed,
            conflicts: &facts.conflicts,
            lines: facts.lines,
        }
    }
}

/// Each unparsed line as check-log's T12 evidence shows it ([`Unparsed::to_json`]).
fn unparsed_lines<S: Serializer>(lines: &[Unparsed], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(lines.iter().map(Unparsed::to_json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_compact;

    #[test]
    fn record_keys_in_the_spec_order() {
        let facts = BootFacts {
            vllm_version: Some("0.28.0".into()),
            kv_pool_tokens: Some(26093),
            cudagraph_mode_downgrade: Some(("FULL".into(), "PIECEWISE".into())),
            processes: vec![("APIServer".into(), vec![7, 9])],
            unparsed: vec![Unparsed {
                field: "kv_pool_tokens".into(),
                lineno: 3,
                line: "GPU KV cache size: ? tokens".into(),
            }],
            conflicts: vec![("page_size".into(), vec![Json::Int(16), Json::Int(32)])],
            lines: 12,
            boot_seconds: Some(4.5),
            ..BootFacts::default()
        };
        let text = to_compact(&facts);
        assert!(text
            .starts_with(r#"{"engine": null, "vllm_version": "0.28.0", "engine_version": null,"#));
        assert!(text.contains(r#""kv_pool_tokens": 26093,"#), "{text}");
        assert!(
            text.contains(r#""cudagraph_mode_downgrade": ["FULL", "PIECEWISE"],"#),
            "{text}"
        );
        assert!(text.ends_with(
            r#""processes": {"APIServer": [7, 9]}, "unparsed": [{"field": "kv_pool_tokens", "lineno": 3, "line": "GPU KV cache size: ? tokens"}], "conflicts": {"page_size": [16, 32]}, "lines": 12}"#
        ), "{text}");
        assert!(
            !text.contains("boot_seconds"),
            "derived facts stay out of the record"
        );
        let keys = crate::json::parse(&text).unwrap();
        assert_eq!(keys.as_object().unwrap().len(), 39);
    }
}
