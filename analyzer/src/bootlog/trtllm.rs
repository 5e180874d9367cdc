//! TensorRT-LLM's boot-log lines (bootlog.md §2.5), its `LLM Args` settings line (§2.7)
//! and the start identity without pool-derived values (§6, README departure 4).

use super::fields::Val;
use super::lines::{is_word, word_before};
use super::pat::{after_each, to_f64, to_i64, Cur};
use crate::json::Json;

/// `TensorRT LLM version: V`: the non-space run after the anchor.
pub(crate) fn version(line: &str) -> Option<Val> {
    after_each(line, "TensorRT LLM version:", |mut c| {
        c.ws();
        c.run1(|ch| !ch.is_whitespace())
            .map(|v| Val::Str(v.to_string()))
    })
}

/// `Allocated G GiB for max tokens in paged KV cache (T)`.
pub(crate) fn kv_pool(line: &str) -> Option<Val> {
    let (g, t) = after_each(line, "Allocated ", |mut c| {
        let g = c.decimal()?;
        if !c.lit(" GiB for max tokens in paged KV cache (") {
            return None;
        }
        let t = c.count()?;
        c.lit(")").then_some((g, t))
    })?;
    Some(Val::TrtPool {
        gib: to_f64(g)?,
        tokens: to_i64(t)?,
    })
}

/// `tokens per block=N`.
pub(crate) fn page_size(line: &str) -> Option<Val> {
    let n = after_each(line, "tokens per block=", |mut c| c.count())?;
    to_i64(n).map(Val::Int)
}

/// `max_num_requests=N, max_num_tokens=M, max_batch_size=B`.
pub(crate) fn limits(line: &str) -> Option<Val> {
    let (n, m, b) = after_each(line, "max_num_requests=", |mut c| {
        let n = c.count()?;
        if !c.lit(", max_num_tokens=") {
            return None;
        }
        let m = c.count()?;
        if !c.lit(", max_batch_size=") {
            return None;
        }
        Some((n, m, c.count()?))
    })?;
    Some(Val::TrtLimits {
        requests: to_i64(n)?,
        tokens: to_i64(m)?,
        batch: to_i64(b)?,
    })
}

/// `… in memory usage profiling: X GiB` (weights inside torch).
pub(crate) fn model_load_gib(line: &str) -> Option<Val> {
    super::vllm::decimal_between(line, "in memory usage profiling: ", " GiB")
}

/// `LLM Args:` with nothing but whitespace after it; records nothing.
pub(crate) fn llm_args_header(line: &str) -> Option<Val> {
    line.trim_end()
        .ends_with("LLM Args:")
        .then_some(Val::Nothing)
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

/// `KEY=` at a word start, then (after an optional `<Word.` enum prefix and an optional
/// `'`) a run of word characters and dots; the first occurrence that reads wins.
fn setting<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.match_indices(key).find_map(|(i, m)| {
        if word_before(line, i) {
            return None;
        }
        let mut c = Cur {
            s: line,
            i: i + m.len(),
        };
        if !c.lit("=") {
            return None;
        }
        let save = c;
        let enum_prefix = c.lit("<") && c.word().is_some() && c.lit(".");
        if !enum_prefix {
            c = save;
        }
        c.lit("'");
        c.run1(|ch| is_word(ch) || ch == '.')
    })
}

/// The settings object TensorRT-LLM's `llm_args` line gives (§2.7): the line itself,
/// `model` when the line starts with `model='…'`, and each setting found, as text.
pub(crate) fn settings(llm_args: &str) -> Json {
    let mut pairs = vec![("llm_args".to_string(), Json::Str(llm_args.to_string()))];
    if let Some(rest) = llm_args.strip_prefix("model='") {
        if let Some(end) = rest.find('\'') {
            pairs.push(("model".to_string(), Json::Str(rest[..end].to_string())));
        }
    }
    for key in SETTINGS {
        if let Some(v) = setting(llm_args, key) {
            pairs.push((key.to_string(), Json::Str(v.to_string())));
        }
    }
    Json::Obj(pairs)
}

/// The `llm_args` text without the values derived from the pool a start drew: each
/// `max_tokens=` and `max_gpu_total_bytes=` at a word start (not after a letter, digit or
/// `_`) loses the text up to the next `,`, `)` or whitespace.
pub(crate) fn without_pool_values(llm_args: &str) -> String {
    let mut out = String::with_capacity(llm_args.len());
    let mut i = 0;
    let b = llm_args.as_bytes();
    while i < b.len() {
        let rest = &llm_args[i..];
        let key = ["max_tokens=", "max_gpu_total_bytes="]
            .into_iter()
            .find(|k| rest.starts_with(k));
        let at_word_start = !llm_args[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        match key {
            Some(k) if at_word_start => {
                out.push_str(k);
                let v = &rest[k.len()..];
                let n = v
                    .char_indices()
                    .find(|&(_, c)| c == ',' || c == ')' || c.is_whitespace())
                    .map_or(v.len(), |(k, _)| k);
                i += k.len() + n;
            }
            _ => {
                let ch = rest.chars().next().map_or(1, char::len_utf8);
                out.push_str(&rest[..ch]);
                i += ch;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            version("[TensorRT-LLM] TensorRT LLM version: 1.3.0rc29"),
            Some(Val::Str("1.3.0rc29".into()))
        );
        assert_eq!(
            kv_pool("[TRT-LLM] [I] [batchmgr][RANK 0] [MemUsageChange] Allocated 5.19 GiB for max tokens in paged KV cache (37760)."),
            Some(Val::TrtPool { gib: 5.19, tokens: 37760 })
        );
        assert_eq!(
            page_size("Max KV cache blocks per sequence: 512 [window size=16384], tokens per block=32, primary"),
            Some(Val::Int(32))
        );
        assert_eq!(
            limits("[_torch] max_seq_len=16384, max_num_requests=32, max_num_tokens=8192, max_batch_size=32"),
            Some(Val::TrtLimits { requests: 32, tokens: 8192, batch: 32 })
        );
        assert_eq!(
            model_load_gib("Memory used at after loading weights (inside torch) in memory usage profiling: 15.31 GiB"),
            Some(Val::Float(15.31))
        );
        assert_eq!(
            llm_args_header("[I] [_torch] LLM Args:  "),
            Some(Val::Nothing)
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
