//! SGLang's boot-log lines. Sizes are printed in `GB` and kept as printed.

use super::pat::{count, decimal, decimal_value, dict_value, groups, rule, to_f64, to_i64, word};
use super::value::FieldValue;

rule!(SERVER_ARGS = r"(?s)server_args=(\{.*\})\p{White_Space}*$");

/// `server_args={…}` reaching the end of the line, a Python dict literal.
pub(crate) fn server_args(line: &str) -> Option<FieldValue> {
    dict_value(&SERVER_ARGS, line)
}

rule!(
    /// D is a run of non-space characters whose last one is the comma.
    KV_POOL = r"KV Cache is allocated\. dtype: \P{White_Space}+, #tokens: ",
    count!(),
    ", K size: ",
    decimal!(),
    " GB, V size: ",
    decimal!(),
    " GB"
);

/// `KV Cache is allocated. dtype: D, #tokens: T, K size: K GB, V size: V GB`.
pub(crate) fn kv_pool(line: &str) -> Option<FieldValue> {
    let [tokens, k, v] = groups(&KV_POOL, line)?;
    Some(FieldValue::SglangKvPool {
        tokens: to_i64(tokens)?,
        k_gb: to_f64(k)?,
        v_gb: to_f64(v)?,
    })
}

rule!(
    MODEL_LOAD = r"(?s)Load weight end\. elapsed=",
    decimal!(),
    " s,.*?mem usage=",
    decimal!(),
    " GB"
);

/// `Load weight end. elapsed=S s,` … `mem usage=G GB`.
pub(crate) fn model_load(line: &str) -> Option<FieldValue> {
    let [seconds, gib] = groups(&MODEL_LOAD, line)?;
    Some(FieldValue::ModelLoad {
        gib: to_f64(gib)?,
        seconds: to_f64(seconds)?,
    })
}

rule!(
    CUDAGRAPH = r"CUDA graph end\. elapsed=[0-9.]+ s, mem usage=",
    decimal!(),
    " GB"
);

/// `CUDA graph end. elapsed=E s, mem usage=G GB` → G.
pub(crate) fn cudagraph(line: &str) -> Option<FieldValue> {
    decimal_value(&CUDAGRAPH, line)
}

rule!(
    /// REASON: at least one character, the shortest text before ` (`.
    CAPPED = "(?s)capped to ",
    count!(),
    r" by the (.+?) \("
);

/// `capped to N by the REASON (`: REASON the shortest text before ` (`, trimmed.
pub(crate) fn capped(line: &str) -> Option<FieldValue> {
    let [cap, reason] = groups(&CAPPED, line)?;
    Some(FieldValue::RunningCapReason {
        cap: to_i64(cap)?,
        reason: reason.trim().to_string(),
    })
}

rule!(
    LIMITS = "(?s)max_total_num_tokens=",
    count!(),
    ",.*?max_running_requests=",
    count!()
);

/// `max_total_num_tokens=T,` … `max_running_requests=N`.
pub(crate) fn limits(line: &str) -> Option<FieldValue> {
    let [pool_tokens, running_cap] = groups(&LIMITS, line)?;
    Some(FieldValue::SglangLimits {
        pool_tokens: to_i64(pool_tokens)?,
        running_cap: to_i64(running_cap)?,
    })
}

rule!(DEFAULT_BACKEND = "Use (", word!(), "+) backend by default");

/// `Use NAME backend by default`.
pub(crate) fn default_backend(line: &str) -> Option<FieldValue> {
    let [name] = groups(&DEFAULT_BACKEND, line)?;
    Some(FieldValue::Text(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;

    const P: &str = "[2026-10-01 01:41:07] ";

    #[test]
    fn arguments() {
        let l = format!("{P}server_args={{'model_path': '/root/models/Qwen3-8B', 'page_size': 1}}");
        let Some(FieldValue::Dict(d)) = server_args(&l) else {
            panic!()
        };
        assert_eq!(d.get("page_size"), Some(&Json::Int(1)));
        assert_eq!(server_args("server_args={'model_path': '/x'"), None);
    }

    #[test]
    fn pool_and_load() {
        let l = format!(
            "{P}KV Cache is allocated. dtype: torch.bfloat16, #tokens: 32096, K size: 2.20 GB, V size: 2.20 GB"
        );
        assert_eq!(
            kv_pool(&l),
            Some(FieldValue::SglangKvPool {
                tokens: 32096,
                k_gb: 2.2,
                v_gb: 2.2
            })
        );
        assert_eq!(
            kv_pool("KV Cache is allocated. dtype: , #tokens: 1, K size: 1 GB, V size: 1 GB"),
            None
        );
        let l = format!(
            "{P}Load weight end. elapsed=20.69 s, type=Qwen3ForCausalLM, avail mem=7.09 GB, mem usage=15.28 GB."
        );
        assert_eq!(
            model_load(&l),
            Some(FieldValue::ModelLoad {
                gib: 15.28,
                seconds: 20.69
            })
        );
        let l = format!("{P}Capture target prefill CUDA graph end. elapsed=23.90 s, mem usage=0.83 GB, avail mem=1.19 GB.");
        assert_eq!(cudagraph(&l), Some(FieldValue::Float(0.83)));
    }

    #[test]
    fn caps() {
        let l = format!(
            "{P}max_running_requests is capped to 1 by the mamba state cache (max_mamba_cache_size=5, 5 state slots per request). To raise it"
        );
        assert_eq!(
            capped(&l),
            Some(FieldValue::RunningCapReason {
                cap: 1,
                reason: "mamba state cache".into()
            })
        );
        assert_eq!(capped("max_running_requests is capped to 1 by the x"), None);
        let l = format!(
            "{P}max_total_num_tokens=32096, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=32, context_len=16384"
        );
        assert_eq!(
            limits(&l),
            Some(FieldValue::SglangLimits {
                pool_tokens: 32096,
                running_cap: 32
            })
        );
        assert_eq!(
            limits("max_total_num_tokens=1 max_running_requests=2"),
            None
        );
    }

    #[test]
    fn default_backend_line() {
        let l = format!("{P}Attention backend not specified. Use flashinfer backend by default.");
        assert_eq!(
            default_backend(&l),
            Some(FieldValue::Text("flashinfer".into()))
        );
        assert_eq!(
            default_backend("Attention backend not specified. Use it."),
            None
        );
    }
}
