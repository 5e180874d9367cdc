//! The facts record of bootlog.md §2.9 (`boot-facts --json`), keys in the spec's order.

use super::BootFacts;
use crate::json::{obj, Json};

fn f64j(v: Option<f64>) -> Json {
    v.map_or(Json::Null, Json::Float)
}

fn strs(v: &[String]) -> Json {
    Json::Arr(v.iter().map(|s| Json::Str(s.clone())).collect())
}

pub(crate) fn record(f: &BootFacts) -> Json {
    let processes = Json::Obj(
        f.processes
            .iter()
            .map(|(name, pids)| {
                (
                    name.clone(),
                    Json::Arr(pids.iter().map(|&p| Json::Int(p)).collect()),
                )
            })
            .collect(),
    );
    let unparsed = Json::Arr(f.unparsed.iter().map(super::Unparsed::to_json).collect());
    let conflicts = Json::Obj(
        f.conflicts
            .iter()
            .map(|(k, v)| (k.clone(), Json::Arr(v.clone())))
            .collect(),
    );
    obj([
        ("engine", f.engine.map_or(Json::Null, |e| e.key().into())),
        ("vllm_version", f.vllm_version.clone().into()),
        ("engine_version", f.engine_version.clone().into()),
        ("server_version", f.server_version.clone().into()),
        (
            "non_default_args",
            f.non_default_args.clone().unwrap_or(Json::Null),
        ),
        ("server_args", f.server_args.clone().unwrap_or(Json::Null)),
        ("page_size", f.page_size.into()),
        ("running_cap", f.running_cap.into()),
        ("running_cap_reason", f.running_cap_reason.clone().into()),
        ("requested_running", f.requested_running.into()),
        ("requested_backend", f.requested_backend.clone().into()),
        ("selected_backends", strs(&f.selected_backends)),
        ("drafter_backends", strs(&f.drafter_backends)),
        ("candidate_backends", strs(&f.candidate_backends)),
        ("attention_block_size", f.attention_block_size.into()),
        ("mamba_page_padding_pct", f64j(f.mamba_page_padding_pct)),
        ("kv_pool_tokens", f.kv_pool_tokens.into()),
        ("max_concurrency", f64j(f.max_concurrency)),
        (
            "max_concurrency_request_len",
            f.max_concurrency_request_len.into(),
        ),
        ("available_kv_cache_gib", f64j(f.available_kv_cache_gib)),
        ("model_load_gib", f64j(f.model_load_gib)),
        ("model_load_s", f64j(f.model_load_s)),
        ("cudagraphs", f.cudagraphs.into()),
        ("cudagraph_estimated_gib", f64j(f.cudagraph_estimated_gib)),
        ("cudagraph_actual_gib", f64j(f.cudagraph_actual_gib)),
        (
            "cudagraph_mode_downgrade",
            f.cudagraph_mode_downgrade
                .as_ref()
                .map_or(Json::Null, |(a, b)| {
                    Json::Arr(vec![a.as_str().into(), b.as_str().into()])
                }),
        ),
        ("consumed_gib", f64j(f.consumed_gib)),
        ("peak_activation_gib", f64j(f.peak_activation_gib)),
        ("compile_s", f64j(f.compile_s)),
        ("compiled_fresh", f.compiled_fresh.into()),
        ("pauses", f.pauses.into()),
        ("served_in_log", f.served_in_log.into()),
        ("speculative", f.speculative.into()),
        ("ready", f.ready.into()),
        ("ready_lineno", f.ready_lineno.into()),
        ("processes", processes),
        ("unparsed", unparsed),
        ("conflicts", conflicts),
        ("lines", f.lines.into()),
    ])
}
