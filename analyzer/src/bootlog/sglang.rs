//! SGLang's boot-log lines. Sizes are printed in `GB` and kept as printed.
//!
//! Release 0.5.23 (checked against a real start on the CPU, and its GPU lines against the
//! format strings it prints them with) adds: `KV size` for a pool of one buffer, the
//! post-capture pool line, `bs=[…]` in the decode graph's end line, CPU graphs
//! (`Capture target decode CPU graph end.`), the limits line's `available_cpu_mem`, and
//! the line saying the running limit was lowered to fit the pool.

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

rule!(
    /// A pool of one buffer (MLA models), and the pool a post-capture resize settles on.
    KV_POOL_ONE = r"(?:KV Cache is allocated|KV cache allocated)\. dtype: \P{White_Space}+, #tokens: ",
    count!(),
    ", KV size: ",
    decimal!(),
    " GB"
);

/// `KV Cache is allocated. dtype: D, #tokens: T, K size: K GB, V size: V GB`, or with one
/// `KV size: S GB`.
pub(crate) fn kv_pool(line: &str) -> Option<FieldValue> {
    if let Some([tokens, k, v]) = groups(&KV_POOL, line) {
        return Some(FieldValue::SglangKvPool {
            tokens: to_i64(tokens)?,
            k_gb: to_f64(k)?,
            v_gb: Some(to_f64(v)?),
        });
    }
    let [tokens, kv] = groups(&KV_POOL_ONE, line)?;
    Some(FieldValue::SglangKvPool {
        tokens: to_i64(tokens)?,
        k_gb: to_f64(kv)?,
        v_gb: None,
    })
}

/// `Post-capture KV sizing: KV cache allocated. dtype: D, #tokens: T, KV size: S GB, …`:
/// the pool after the graphs were captured (0.5.23's post-capture sizing).
pub(crate) fn post_capture_pool(line: &str) -> Option<FieldValue> {
    let [tokens, kv] = groups(&KV_POOL_ONE, line)?;
    Some(FieldValue::SglangKvPool {
        tokens: to_i64(tokens)?,
        k_gb: to_f64(kv)?,
        v_gb: None,
    })
}

rule!(
    /// On the CPU the usage is a difference of free host memory, which other processes
    /// move: 0.5.23 printed `mem usage=-0.02 GB` for a tiny model.
    MODEL_LOAD = r"(?s)Load weight end\. elapsed=",
    decimal!(),
    " s,.*?mem usage=",
    r"(-?[0-9.]+)",
    " GB"
);

/// `Load weight end. elapsed=S s,` … `mem usage=G GB` (G kept as printed, a sign too).
pub(crate) fn model_load(line: &str) -> Option<FieldValue> {
    let [seconds, gib] = groups(&MODEL_LOAD, line)?;
    Some(FieldValue::ModelLoad {
        gib: to_f64(gib)?,
        seconds: to_f64(seconds)?,
    })
}

rule!(
    /// 0.5.23 prints the decode graph's batch sizes first (`bs=[1, 2, 4], `).
    CUDAGRAPH = r"(?:CUDA|CPU) graph end\. (?:bs=\[[^\]]*\], )?elapsed=[0-9.]+ s, mem usage=",
    decimal!(),
    " GB"
);

/// `CUDA graph end. [bs=[…], ]elapsed=E s, mem usage=G GB` → G; also `CPU graph end.`.
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

rule!(CONTEXT_LEN = "context_len=", count!());

/// `max_total_num_tokens=T,` … `max_running_requests=N`, and `context_len=C` when the
/// line gives it.
pub(crate) fn limits(line: &str) -> Option<FieldValue> {
    let [pool_tokens, running_cap] = groups(&LIMITS, line)?;
    let context_len = match groups(&CONTEXT_LEN, line) {
        Some([c]) => Some(to_i64(c)?),
        None => None,
    };
    Some(FieldValue::SglangLimits {
        pool_tokens: to_i64(pool_tokens)?,
        running_cap: to_i64(running_cap)?,
        context_len,
    })
}

rule!(
    /// REASON: the shortest text before the closing `.`.
    LOWERED = r"(?s)max_running_requests was reduced from the requested ",
    count!(),
    " to ",
    count!(),
    r" (?:\(per dp worker\) )?due to the (.+?)\."
);

/// `max_running_requests was reduced from the requested R to N (per dp worker) due to the
/// REASON.` → the limit N it settled on and why (R is the one in `server_args`).
pub(crate) fn lowered(line: &str) -> Option<FieldValue> {
    let [_, cap, reason] = groups(&LOWERED, line)?;
    Some(FieldValue::RunningCapReason {
        cap: to_i64(cap)?,
        reason: reason.trim().to_string(),
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
                v_gb: Some(2.2)
            })
        );
        // 0.5.23: a pool of one buffer, and the pool after a post-capture resize.
        let one = format!(
            "{P}KV Cache is allocated. dtype: torch.bfloat16, #tokens: 500000, KV size: 17.16 GB"
        );
        assert_eq!(
            kv_pool(&one),
            Some(FieldValue::SglangKvPool {
                tokens: 500000,
                k_gb: 17.16,
                v_gb: None
            })
        );
        let post = format!("{P}Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 31744, KV size: 4.36 GB, avail mem=1.02 GB");
        assert_eq!(
            post_capture_pool(&post),
            Some(FieldValue::SglangKvPool {
                tokens: 31744,
                k_gb: 4.36,
                v_gb: None
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
        // A real 0.5.23 start on the CPU: the weights' size is noise there.
        let l = format!("{P}Load weight end. elapsed=0.13 s, type=LlamaForCausalLM, avail mem=19.91 GB, mem usage=-0.02 GB.");
        assert_eq!(
            model_load(&l),
            Some(FieldValue::ModelLoad {
                gib: -0.02,
                seconds: 0.13
            })
        );
        let l = format!("{P}Capture target prefill CUDA graph end. elapsed=23.90 s, mem usage=0.83 GB, avail mem=1.19 GB.");
        assert_eq!(cudagraph(&l), Some(FieldValue::Float(0.83)));
        // 0.5.23's decode graphs name their batch sizes first; on the CPU they are CPU graphs.
        let l = format!("{P}Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 12, 16, 24, 32], elapsed=1.11 s, mem usage=0.11 GB, avail mem=1.08 GB.");
        assert_eq!(cudagraph(&l), Some(FieldValue::Float(0.11)));
        let l = format!("{P}Capture target decode CPU graph end. bs=[1, 2], elapsed=40.02 s, mem usage=0.00 GB, avail mem=20.10 GB.");
        assert_eq!(cudagraph(&l), Some(FieldValue::Float(0.0)));
        assert_eq!(
            cudagraph("CUDA graph end. bs=[1, elapsed=1.0 s, mem usage=0.1 GB"),
            None
        );
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
                running_cap: 32,
                context_len: Some(16384)
            })
        );
        // 0.5.23 on the CPU (a real start's line).
        let l = format!(
            "{P}max_total_num_tokens=600, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=8, context_len=1024, available_cpu_mem=20.84 GB"
        );
        assert_eq!(
            limits(&l),
            Some(FieldValue::SglangLimits {
                pool_tokens: 600,
                running_cap: 8,
                context_len: Some(1024)
            })
        );
        // The limit lowered to fit the pool (a real start's line: 10 tokens, 8 asked).
        let l = format!(
            "{P}max_running_requests was reduced from the requested 8 to 5 (per dp worker) due to the available KV cache capacity."
        );
        assert_eq!(
            lowered(&l),
            Some(FieldValue::RunningCapReason {
                cap: 5,
                reason: "available KV cache capacity".into()
            })
        );
        assert_eq!(
            lowered("max_running_requests was reduced from the requested 8 to x due to the y."),
            None
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
