//! Simulated models and how each engine sizes its KV pool from the card's memory.

use crate::gpu;

#[derive(Debug, Clone)]
pub struct Preset {
    #[allow(dead_code)] // documentation of the preset
    pub name: &'static str,
    pub architecture: &'static str,
    /// Hybrid attention/Mamba: vLLM forces one large block and keeps per-request state
    /// blocks in three more cache groups.
    pub hybrid: bool,
    pub weights_gib: f64,
    pub load_s: f64,
    pub consumed_gib: f64,
    pub peak_gib: f64,
    pub cudagraph_gib: f64,
    /// KV bytes per token of attention cache (all layers, K and V).
    pub kv_bytes_per_token: f64,
    /// MiB of one vLLM block across every cache group (hybrid) or of 16 tokens (plain).
    pub vllm_block_mib: f64,
    pub vllm_block_size: usize,
    /// Mamba state blocks each request holds on top of its attention blocks.
    pub state_blocks: usize,
    /// Decode step: base time plus time per running sequence (simulated seconds).
    pub step_base_s: f64,
    pub step_per_seq_s: f64,
    pub prefill_per_token_s: f64,
}

pub const HYBRID_27B: Preset = Preset {
    name: "Qwen3.8-27B-W4A16-AutoRound",
    architecture: "Qwen3_5ForConditionalGeneration",
    hybrid: true,
    weights_gib: 17.71,
    load_s: 79.414045,
    consumed_gib: 18.16,
    peak_gib: 2.06,
    cudagraph_gib: 0.18,
    kv_bytes_per_token: 65536.0,
    vllm_block_mib: 49.75,
    vllm_block_size: 784,
    state_blocks: 3,
    step_base_s: 0.022,
    step_per_seq_s: 0.0006,
    prefill_per_token_s: 0.00004,
};

pub const QWEN3_8B: Preset = Preset {
    name: "Qwen3-8B",
    architecture: "Qwen3ForCausalLM",
    hybrid: false,
    weights_gib: 15.27,
    load_s: 20.69,
    consumed_gib: 16.56,
    peak_gib: 1.3,
    cudagraph_gib: 0.07,
    kv_bytes_per_token: 147456.0,
    vllm_block_mib: 2.25,
    vllm_block_size: 16,
    state_blocks: 0,
    step_base_s: 0.019,
    step_per_seq_s: 0.0001,
    prefill_per_token_s: 0.00002,
};

/// The preset for a model path: `--sim-model-preset`, else a name match, else Qwen3-8B.
pub fn preset_for(model: &str, explicit: Option<&str>, force_hybrid: bool) -> Preset {
    let key = explicit.unwrap_or(model).to_ascii_lowercase();
    let mut p = if key.contains("27b") || key.contains("hybrid") || key.contains("qwen3.8") {
        HYBRID_27B
    } else {
        QWEN3_8B
    };
    if force_hybrid && !p.hybrid {
        p.hybrid = true;
        p.state_blocks = 3;
        p.vllm_block_size = 784;
        p.vllm_block_mib = HYBRID_27B.vllm_block_mib;
    }
    p
}

pub fn total_gib() -> f64 {
    gpu::TOTAL_MIB as f64 / 1024.0
}

pub fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// A small random number in [0, 1) from the clock and pid: starts with the same flags
/// draw different pools under `--sim-pool-jitter`, as real starts do.
pub fn start_noise() -> f64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64 ^ d.as_secs())
        .unwrap_or(7);
    let mut x = t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x % 10_000) as f64 / 10_000.0
}
