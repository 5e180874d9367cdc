//! vLLM's boot-log lines: one function per field's value rule. Each
//! returns `None` when the rule does not match or its text does not convert.

use super::pat::{
    count, decimal, decimal_value, dict_value, grouped_to_i64, groups, rule, to_f64, to_i64, word,
};
use super::value::FieldValue;

rule!(
    /// The version: no whitespace, up to the next `)`.
    VERSION = r"Initializing a V1 LLM engine \(v([^)\p{White_Space}]+)\)"
);

/// `Initializing a V1 LLM engine (vX)`: X up to the next `)`, without whitespace.
pub(crate) fn version(line: &str) -> Option<FieldValue> {
    let [v] = groups(&VERSION, line)?;
    Some(FieldValue::Text(v.to_string()))
}

rule!(NON_DEFAULT_ARGS = r"(?s)non-default args: (\{.*\})\p{White_Space}*$");

/// `non-default args: {…}` reaching the end of the line, a Python dict literal.
pub(crate) fn non_default_args(line: &str) -> Option<FieldValue> {
    dict_value(&NON_DEFAULT_ARGS, line)
}

rule!(
    BACKEND_WITH_CANDIDATES = "Using (",
    word!(),
    r"+) attention backend out of potential backends: \[([^\]]*)\]"
);

/// `Using NAME attention backend out of potential backends: [LIST]`.
pub(crate) fn backend_with_candidates(line: &str) -> Option<FieldValue> {
    let [name, list] = groups(&BACKEND_WITH_CANDIDATES, line)?;
    let candidates = list
        .split(',')
        .map(|s| s.trim_matches(|c| c == ' ' || c == '\'' || c == '"'))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    Some(FieldValue::Backend {
        name: name.to_string(),
        candidates: Some(candidates),
    })
}

rule!(
    /// The second selection form's anchor.
    ENUM_BACKEND = r"Using AttentionBackendEnum\.", word!(), r"+ backend\."
);
rule!(
    ENUM_BACKEND_AT_END = r"Using AttentionBackendEnum\.(",
    word!(),
    r"+) backend\.\p{White_Space}*$"
);

/// The second selection form. Outer `None`: the anchor (`Using AttentionBackendEnum.` +
/// word + ` backend.`) is absent; inner `None`: present but not at the end of the line.
pub(crate) fn enum_backend(line: &str) -> Option<Option<FieldValue>> {
    if let Some([name]) = groups(&ENUM_BACKEND_AT_END, line) {
        return Some(Some(FieldValue::Backend {
            name: name.to_string(),
            candidates: None,
        }));
    }
    ENUM_BACKEND.is_match(line).then_some(None)
}

rule!(
    BLOCK_SIZE = "Setting attention block size to ",
    count!(),
    " tokens"
);

/// `Setting attention block size to N tokens`.
pub(crate) fn block_size(line: &str) -> Option<FieldValue> {
    let [n] = groups(&BLOCK_SIZE, line)?;
    to_i64(n).map(FieldValue::Int)
}

rule!(
    MAMBA_PADDING = "Padding mamba page size by ",
    decimal!(),
    "%"
);

/// `Padding mamba page size by X%`.
pub(crate) fn mamba_padding(line: &str) -> Option<FieldValue> {
    decimal_value(&MAMBA_PADDING, line)
}

rule!(
    KV_POOL = r"[GC]PU KV cache size: ([0-9,]+) tokens, Maximum concurrency for ([0-9,]+) tokens per request: ",
    decimal!(),
    "x"
);

/// `GPU KV cache size: T tokens, Maximum concurrency for L tokens per request: Xx`; the CPU
/// platform (0.32) prints the same line as `CPU KV cache size: …`.
pub(crate) fn kv_pool(line: &str) -> Option<FieldValue> {
    let [tokens, request_len, concurrency] = groups(&KV_POOL, line)?;
    Some(FieldValue::KvPool {
        tokens: grouped_to_i64(tokens)?,
        request_len: grouped_to_i64(request_len)?,
        concurrency: to_f64(concurrency)?,
    })
}

rule!(
    AVAILABLE_KV = "Available KV cache memory: ",
    decimal!(),
    " GiB"
);

/// `Available KV cache memory: X GiB`.
pub(crate) fn available_kv(line: &str) -> Option<FieldValue> {
    decimal_value(&AVAILABLE_KV, line)
}

rule!(
    CPU_KV_SPACE = r"set \(",
    decimal!(),
    "/",
    decimal!(),
    r"\) GiB for KV cache on node"
);

/// The CPU platform's KV space (0.32, `cpu_worker.py`, printed by the worker):
/// `Explicitly set (X/T) GiB for KV cache on node N.` (`VLLM_CPU_KVCACHE_SPACE` or
/// `--kv-cache-memory-bytes`) or `Auto set (X/T) GiB for KV cache on node N, with …`; X is
/// the memory given to the KV cache, T the node's memory (which moves between starts).
pub(crate) fn cpu_kv_space(line: &str) -> Option<FieldValue> {
    let [kv, _node] = groups(&CPU_KV_SPACE, line)?;
    to_f64(kv).map(FieldValue::Float)
}

rule!(
    CPU_MLA_BACKEND = "Using (",
    word!(),
    r"+_MLA) backend\.\p{White_Space}*$"
);

/// The CPU platform names its backend only for MLA models: `Using CPU_MLA backend.` or
/// `Using AMX_MLA backend.` at the end of the line. Every other model gets `CPU_ATTN`
/// without a line (see `derive`).
pub(crate) fn cpu_mla_backend(line: &str) -> Option<FieldValue> {
    let [name] = groups(&CPU_MLA_BACKEND, line)?;
    Some(FieldValue::Backend {
        name: name.to_string(),
        candidates: None,
    })
}

rule!(
    MODEL_LOAD = "Model loading took ",
    decimal!(),
    " GiB memory and ",
    decimal!(),
    " seconds"
);

/// `Model loading took G GiB memory and S seconds`.
pub(crate) fn model_load(line: &str) -> Option<FieldValue> {
    let [gib, seconds] = groups(&MODEL_LOAD, line)?;
    Some(FieldValue::ModelLoad {
        gib: to_f64(gib)?,
        seconds: to_f64(seconds)?,
    })
}

rule!(
    CUDAGRAPH_ESTIMATED = "Estimated CUDA graph memory: ",
    decimal!(),
    " GiB total"
);

/// `Estimated CUDA graph memory: X GiB total`.
pub(crate) fn cudagraph_estimated(line: &str) -> Option<FieldValue> {
    decimal_value(&CUDAGRAPH_ESTIMATED, line)
}

rule!(
    CUDAGRAPH_ACTUAL = "CUDA graph pool memory: ",
    decimal!(),
    r" GiB \(actual\)"
);

/// `CUDA graph pool memory: X GiB (actual)`.
pub(crate) fn cudagraph_actual(line: &str) -> Option<FieldValue> {
    decimal_value(&CUDAGRAPH_ACTUAL, line)
}

rule!(
    MEMORY_SPLIT = "Actual usage is ",
    decimal!(),
    r" GiB for consumed memory \(weights \+ non-torch\), ",
    decimal!(),
    " GiB for peak activation"
);

/// `Actual usage is C GiB for consumed memory (weights + non-torch), P GiB for peak activation`.
pub(crate) fn memory_split(line: &str) -> Option<FieldValue> {
    let [consumed, peak] = groups(&MEMORY_SPLIT, line)?;
    Some(FieldValue::MemorySplit {
        consumed_gib: to_f64(consumed)?,
        peak_activation_gib: to_f64(peak)?,
    })
}

rule!(
    COMPILE_SECONDS = r"torch\.compile took ",
    decimal!(),
    " s in total"
);

/// `torch.compile took X s in total`.
pub(crate) fn compile_seconds(line: &str) -> Option<FieldValue> {
    decimal_value(&COMPILE_SECONDS, line)
}

rule!(
    /// The word right before the anchor, and the word after a later `setting …=`.
    CUDAGRAPH_DOWNGRADE = "(?s)(",
    word!(),
    "+) is not supported with spec-decode.*?setting cudagraph_mode=(",
    word!(),
    "+)"
);

/// `FROM is not supported with spec-decode … setting cudagraph_mode=TO`.
pub(crate) fn cudagraph_downgrade(line: &str) -> Option<FieldValue> {
    let [from, to] = groups(&CUDAGRAPH_DOWNGRADE, line)?;
    Some(FieldValue::CudagraphDowngrade {
        from: from.to_string(),
        to: to.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;

    const P: &str = "(EngineCore pid=164098) INFO 09-07 23:15:06 [x.py:1] ";

    #[test]
    fn version_line() {
        let l = format!("{P}Initializing a V1 LLM engine (v0.28.0) with config: model='/m'");
        assert_eq!(version(&l), Some(FieldValue::Text("0.28.0".into())));
        assert_eq!(version("Initializing a V1 LLM engine (v 1) x"), None);
        assert_eq!(version("Initializing a V1 LLM engine (v) x"), None);
        assert_eq!(version("Initializing a V1 LLM engine (v1"), None);
    }

    #[test]
    fn arguments_line() {
        let l = format!("{P}non-default args: {{'model': '/m', 'max_num_seqs': 32}}  ");
        let Some(FieldValue::Dict(d)) = non_default_args(&l) else {
            panic!()
        };
        assert_eq!(d.get("max_num_seqs"), Some(&Json::Int(32)));
        assert_eq!(
            non_default_args("non-default args: {'model': '/m', 'x"),
            None
        );
        assert_eq!(non_default_args("non-default args: {'a': 1} tail"), None);
        assert_eq!(non_default_args("non-default args: {'a': f(1)}"), None);
        assert_eq!(non_default_args("non-default args: {1, 2}"), None);
    }

    #[test]
    fn backend_lines() {
        let l = format!(
            "{P}Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'FLASHINFER']."
        );
        assert_eq!(
            backend_with_candidates(&l),
            Some(FieldValue::Backend {
                name: "FLASH_ATTN".into(),
                candidates: Some(vec!["FLASH_ATTN".into(), "FLASHINFER".into()])
            })
        );
        assert_eq!(
            enum_backend(&format!(
                "{P}Using AttentionBackendEnum.TRITON_ATTN backend. "
            )),
            Some(Some(FieldValue::Backend {
                name: "TRITON_ATTN".into(),
                candidates: None
            }))
        );
        assert_eq!(
            enum_backend("Using AttentionBackendEnum.FLASH_ATTN for MMEncoderAttention."),
            None
        );
        assert_eq!(
            enum_backend("Using backend AttentionBackendEnum.FLASH_ATTN for vit attention"),
            None
        );
        assert_eq!(
            enum_backend("Using AttentionBackendEnum.X backend. and more"),
            Some(None)
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kv_pool("GPU KV cache size: 31,554 tokens, Maximum concurrency for 16,384 tokens per request: 1.93x"),
            Some(FieldValue::KvPool {
                tokens: 31554,
                request_len: 16384,
                concurrency: 1.93
            })
        );
        assert_eq!(kv_pool("GPU KV cache size: 31.5k tokens (1.93x)"), None);
        assert_eq!(
            kv_pool(
                "GPU KV cache size: , tokens, Maximum concurrency for 1 tokens per request: 1x"
            ),
            None
        );
        assert_eq!(
            block_size("Setting attention block size to 784 tokens to ensure"),
            Some(FieldValue::Int(784))
        );
        assert_eq!(
            mamba_padding("Padding mamba page size by 0.13% to"),
            Some(FieldValue::Float(0.13))
        );
        assert_eq!(mamba_padding("Padding mamba page size by 1.2.3% to"), None);
        assert_eq!(
            model_load("Model loading took 17.71 GiB memory and 75.250819 seconds"),
            Some(FieldValue::ModelLoad {
                gib: 17.71,
                seconds: 75.250819
            })
        );
        assert_eq!(
            memory_split("Actual usage is 17.95 GiB for consumed memory (weights + non-torch), 1.86 GiB for peak activation, and"),
            Some(FieldValue::MemorySplit {
                consumed_gib: 17.95,
                peak_activation_gib: 1.86
            })
        );
        assert_eq!(
            cudagraph_estimated("Estimated CUDA graph memory: 0.20 GiB total"),
            Some(FieldValue::Float(0.2))
        );
        assert_eq!(
            cudagraph_estimated("Estimated CUDA graph memory: 0.20 GiB"),
            None
        );
        assert_eq!(
            cudagraph_actual("CUDA graph pool memory: 0.18 GiB (actual), 0.2"),
            Some(FieldValue::Float(0.18))
        );
        assert_eq!(
            compile_seconds("torch.compile took 60.37 s in total"),
            Some(FieldValue::Float(60.37))
        );
    }

    /// vLLM 0.32's CPU platform (fixtures/real/): the pool line's device word, the KV
    /// space its worker prints, and the backend MLA models name.
    #[test]
    fn cpu_platform_lines() {
        assert_eq!(
            kv_pool("CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 256 tokens per request: 4096.00x"),
            Some(FieldValue::KvPool {
                tokens: 1_048_576,
                request_len: 256,
                concurrency: 4096.0
            })
        );
        assert_eq!(
            cpu_kv_space("Explicitly set (1.0/22.71) GiB for KV cache on node 0."),
            Some(FieldValue::Float(1.0))
        );
        assert_eq!(
            cpu_kv_space("Auto set (3.5/22.71) GiB for KV cache on node 1, with 4.0 GiB requested memory for the worker. 0.5 GiB memory was consumed by non-kv usages."),
            Some(FieldValue::Float(3.5))
        );
        assert_eq!(
            cpu_kv_space("Explicitly set (1.0.1/22.71) GiB for KV cache on node 0."),
            None
        );
        assert_eq!(cpu_kv_space("set (/) GiB for KV cache on node 0"), None);
        assert_eq!(
            cpu_mla_backend("Using CPU_MLA backend."),
            Some(FieldValue::Backend {
                name: "CPU_MLA".into(),
                candidates: None
            })
        );
        assert_eq!(cpu_mla_backend("Using AMX_MLA backend. later"), None);
    }

    #[test]
    fn downgrade() {
        let l = "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE";
        assert_eq!(
            cudagraph_downgrade(l),
            Some(FieldValue::CudagraphDowngrade {
                from: "FULL_AND_PIECEWISE".into(),
                to: "PIECEWISE".into()
            })
        );
        assert_eq!(
            cudagraph_downgrade("X is not supported with spec-decode"),
            None
        );
    }
}
