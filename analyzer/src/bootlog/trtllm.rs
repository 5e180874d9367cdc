//! TensorRT-LLM's boot-log lines, its `LLM Args` settings line and the start identity
//! without pool-derived values (a departure from the reference: docs/tripwires.md#t4).

use std::sync::LazyLock;

use regex::Regex;

use super::pat::{
    compile, count, decimal, decimal_value, groups, not_word, rule, to_f64, to_i64, word,
};
use super::value::FieldValue;
use crate::json::Json;

rule!(VERSION = r"TensorRT LLM version:\p{White_Space}*(\P{White_Space}+)");

/// `TensorRT LLM version: V`: the non-space run after the anchor.
pub(crate) fn version(line: &str) -> Option<FieldValue> {
    let [v] = groups(&VERSION, line)?;
    Some(FieldValue::Text(v.to_string()))
}

rule!(
    KV_POOL = "Allocated ",
    decimal!(),
    r" GiB for max tokens in paged KV cache \(",
    count!(),
    r"\)"
);

/// `Allocated G GiB for max tokens in paged KV cache (T)`.
pub(crate) fn kv_pool(line: &str) -> Option<FieldValue> {
    let [gib, tokens] = groups(&KV_POOL, line)?;
    Some(FieldValue::TrtKvPool {
        gib: to_f64(gib)?,
        tokens: to_i64(tokens)?,
    })
}

rule!(PAGE_SIZE = "tokens per block=", count!());

/// `tokens per block=N`.
pub(crate) fn page_size(line: &str) -> Option<FieldValue> {
    let [n] = groups(&PAGE_SIZE, line)?;
    to_i64(n).map(FieldValue::Int)
}

rule!(
    LIMITS = "max_num_requests=",
    count!(),
    ", max_num_tokens=",
    count!(),
    ", max_batch_size=",
    count!()
);

/// `max_num_requests=N, max_num_tokens=M, max_batch_size=B`.
pub(crate) fn limits(line: &str) -> Option<FieldValue> {
    let [requests, tokens, batch] = groups(&LIMITS, line)?;
    Some(FieldValue::TrtLimits {
        requests: to_i64(requests)?,
        tokens: to_i64(tokens)?,
        batch: to_i64(batch)?,
    })
}

rule!(
    MODEL_LOAD_GIB = "in memory usage profiling: ",
    decimal!(),
    " GiB"
);

/// `… in memory usage profiling: X GiB` (weights inside torch).
pub(crate) fn model_load_gib(line: &str) -> Option<FieldValue> {
    decimal_value(&MODEL_LOAD_GIB, line)
}

/// `LLM Args:` with nothing but whitespace after it; records nothing.
pub(crate) fn llm_args_header(line: &str) -> Option<FieldValue> {
    line.trim_end()
        .ends_with("LLM Args:")
        .then_some(FieldValue::Nothing)
}

/// The settings read from the `LLM Args` line, in this order.
pub(crate) const SETTINGS: [&str; 11] = [
    "attn_backend",
    "max_batch_size",
    "max_num_tokens",
    "max_seq_len",
    "free_gpu_memory_fraction",
    "tokens_per_block",
    "capacity_scheduler_policy",
    "enable_chunked_prefill",
    "speculative_config",
    "kv_cache_dtype",
    "disable_overlap_scheduler",
];

/// For each of [`SETTINGS`]: `KEY=` at a word start, then (after an optional `<Word.`
/// enum prefix and an optional `'`) a run of word characters and dots, captured.
static SETTING_RULES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    SETTINGS
        .iter()
        .map(|key| {
            let before = concat!("(?:^|", not_word!(), ")");
            let after = concat!("=(?:<", word!(), r"+\.)?'?([\p{Alphabetic}\p{N}_.]+)");
            compile(&[before, &regex::escape(key), after].concat())
        })
        .collect()
});

/// The settings object TensorRT-LLM's `llm_args` line gives: the line itself,
/// `model` when the line starts with `model='…'`, and each setting found, as text.
pub(crate) fn settings(llm_args: &str) -> Json {
    let mut pairs = vec![("llm_args".to_string(), Json::Str(llm_args.to_string()))];
    if let Some(rest) = llm_args.strip_prefix("model='") {
        if let Some(end) = rest.find('\'') {
            pairs.push(("model".to_string(), Json::Str(rest[..end].to_string())));
        }
    }
    for (key, rule) in SETTINGS.iter().zip(SETTING_RULES.iter()) {
        if let Some([v]) = groups(rule, llm_args) {
            pairs.push((key.to_string(), Json::Str(v.to_string())));
        }
    }
    Json::Obj(pairs)
}

rule!(
    /// A pool-derived setting at a word start, and its value up to the next `,`, `)` or
    /// whitespace.
    POOL_VALUE = "(^|",
    not_word!(),
    r")(max_tokens=|max_gpu_total_bytes=)[^,)\p{White_Space}]*"
);

/// The `llm_args` text without the values derived from the pool a start drew: each
/// `max_tokens=` and `max_gpu_total_bytes=` at a word start (not after a letter, digit or
/// `_`) loses the text up to the next `,`, `)` or whitespace.
pub(crate) fn without_pool_values(llm_args: &str) -> String {
    POOL_VALUE.replace_all(llm_args, "${1}${2}").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            version("[TensorRT-LLM] TensorRT LLM version: 1.3.0rc29"),
            Some(FieldValue::Text("1.3.0rc29".into()))
        );
        assert_eq!(
            kv_pool("[TRT-LLM] [I] [batchmgr][RANK 0] [MemUsageChange] Allocated 5.19 GiB for max tokens in paged KV cache (37760)."),
            Some(FieldValue::TrtKvPool { gib: 5.19, tokens: 37760 })
        );
        assert_eq!(
            page_size("Max KV cache blocks per sequence: 512 [window size=16384], tokens per block=32, primary"),
            Some(FieldValue::Int(32))
        );
        assert_eq!(
            limits("[_torch] max_seq_len=16384, max_num_requests=32, max_num_tokens=8192, max_batch_size=32"),
            Some(FieldValue::TrtLimits { requests: 32, tokens: 8192, batch: 32 })
        );
        assert_eq!(
            model_load_gib("Memory used at after loading weights (inside torch) in memory usage profiling: 15.31 GiB"),
            Some(FieldValue::Float(15.31))
        );
        assert_eq!(
            llm_args_header("[I] [_torch] LLM Args:  "),
            Some(FieldValue::Nothing)
        );
        assert_eq!(llm_args_header("[I] [_torch] LLM Args: x"), None);
    }

    #[test]
    fn settings_line() {
        let l = "model='/root/models/Qwen3-8B' tokenizer=None kv_cache_config=KvCacheConfig(max_tokens=37763, \
                 free_gpu_memory_fraction=0.9, max_gpu_total_bytes=5568485529, dtype='auto', tokens_per_block=32) \
                 scheduler_config=SchedulerConfig(capacity_scheduler_policy=<CapacitySchedulerPolicy.GUARANTEED_NO_EVICT: 'GUARANTEED_NO_EVICT'>) \
                 speculative_config=None max_batch_size=32 max_num_tokens=8192 cuda_graph_config=X(max_batch_size=128) attn_backend='TRTLLM' \
                 build_config=B(max_num_tokens=None)";
        let s = settings(l);
        assert_eq!(
            s.get("model").and_then(Json::as_str),
            Some("/root/models/Qwen3-8B")
        );
        assert_eq!(s.get("attn_backend").and_then(Json::as_str), Some("TRTLLM"));
        assert_eq!(
            s.get("capacity_scheduler_policy").and_then(Json::as_str),
            Some("GUARANTEED_NO_EVICT")
        );
        assert_eq!(s.get("max_batch_size").and_then(Json::as_str), Some("32"));
        assert_eq!(s.get("max_num_tokens").and_then(Json::as_str), Some("8192"));
        assert_eq!(
            s.get("free_gpu_memory_fraction").and_then(Json::as_str),
            Some("0.9")
        );
        assert_eq!(
            s.get("speculative_config").and_then(Json::as_str),
            Some("None")
        );
        assert!(!s.has("kv_cache_dtype"));
        let keys: Vec<_> = s
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(&keys[..3], ["llm_args", "model", "attn_backend"]);
    }

    #[test]
    fn pool_values_leave_the_identity() {
        let l = "kv_cache_config=KvCacheConfig(max_tokens=37763, max_gpu_total_bytes=5568485529) max_num_tokens=8192 x_max_tokens=5 max_tokens=9";
        assert_eq!(
            without_pool_values(l),
            "kv_cache_config=KvCacheConfig(max_tokens=, max_gpu_total_bytes=) max_num_tokens=8192 x_max_tokens=5 max_tokens="
        );
        assert_eq!(without_pool_values("é max_tokens=1)"), "é max_tokens=)");
    }
}
