//! "The server that ran": the first boot log's facts as the report lists
//! them.

use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::json::Json;
use crate::num::{fixed, thousands};
use crate::text::base_name;

use super::fact::Fact;

/// SGLang settings that change what is measured (the others are not listed).
const SGLANG_SETTINGS: [&str; 15] = [
    "attention_backend",
    "chunked_prefill_size",
    "context_length",
    "disable_cuda_graph",
    "disable_radix_cache",
    "kv_cache_dtype",
    "mamba_full_memory_ratio",
    "max_mamba_cache_size",
    "max_queued_requests",
    "max_running_requests",
    "max_total_tokens",
    "mem_fraction_static",
    "page_size",
    "schedule_policy",
    "speculative_algorithm",
];

/// A setting's value as the engine printed it (strings bare, others as JSON).
fn setting_text(v: &Json) -> String {
    match v {
        Json::Str(s) => s.clone(),
        Json::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Json::Null => "None".to_string(),
        other => other.to_compact(),
    }
}

fn settings(facts: &BootFacts, engine: Engine) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    match engine {
        Engine::Vllm => {
            if let Some(Json::Obj(args)) = &facts.non_default_args {
                for (k, v) in args {
                    if k != "model" && k != "model_tag" {
                        pairs.push((k.clone(), setting_text(v)));
                    }
                }
            }
        }
        Engine::Sglang => {
            if let Some(Json::Obj(args)) = &facts.server_args {
                for (k, v) in args {
                    if SGLANG_SETTINGS.contains(&k.as_str()) && !v.is_null() {
                        pairs.push((k.clone(), setting_text(v)));
                    }
                }
            }
        }
        Engine::Trtllm => {}
    }
    pairs.sort();
    if pairs.is_empty() {
        return "–".into();
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn facts_table(facts: &BootFacts, engine: Engine) -> Vec<Fact> {
    let dash = || "–".to_string();
    let mut out = vec![
        Fact::new(
            engine.display(),
            facts.version().map_or_else(dash, str::to_string),
        ),
        Fact::new(
            "Model",
            facts
                .model()
                .map_or_else(dash, |m| base_name(m).to_string()),
        ),
        Fact::new(
            "KV pool",
            facts
                .kv_pool_tokens
                .map_or_else(dash, |p| format!("{} tokens", thousands(p as f64))),
        ),
    ];
    let block = match (facts.page_size, facts.attention_block_size) {
        (Some(p), _) => format!("{p} token{} (page size)", if p == 1 { "" } else { "s" }),
        (None, Some(b)) => format!("{b} tokens"),
        (None, None) => "16 tokens (default)".into(),
    };
    out.push(Fact::new("Attention block", block));
    out.push(Fact::new(
        "Attention backend",
        if facts.selected_backends.is_empty() {
            dash()
        } else {
            facts.selected_backends.join(", ")
        },
    ));
    out.push(Fact::new(
        "Draft model backend",
        if facts.drafter_backends.is_empty() {
            "none".into()
        } else {
            facts.drafter_backends.join(", ")
        },
    ));
    out.push(Fact::new(
        "Memory for KV cache",
        facts
            .available_kv_cache_gib
            .map_or_else(dash, |g| format!("{} GiB", shortest_gib(g))),
    ));
    let graphs = match (facts.cudagraphs, facts.cudagraph_actual_gib) {
        (Some(false), _) => "off".to_string(),
        (_, Some(g)) => format!("on, {} GiB", shortest_gib(g)),
        (Some(true), None) => "on".into(),
        (None, None) => "not in the log".into(),
    };
    out.push(Fact::new("CUDA graphs", graphs));
    out.push(Fact::new(
        "Boot line 'maximum concurrency'",
        match (facts.max_concurrency, facts.max_concurrency_request_len) {
            (Some(x), Some(l)) => format!("{}x at {} tokens", fixed(x, 2), thousands(l as f64)),
            _ => dash(),
        },
    ));
    out.push(Fact::new(
        "Model load",
        match (facts.model_load_gib, facts.model_load_s) {
            (Some(g), Some(s)) => format!("{} GiB in {} s", shortest_gib(g), fixed(s, 0)),
            _ => dash(),
        },
    ));
    out.push(Fact::new("Server settings", settings(facts, engine)));
    out
}

/// GiB figures as printed (two decimals at most, no trailing zeros).
fn shortest_gib(g: f64) -> String {
    let s = fixed(g, 2);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
