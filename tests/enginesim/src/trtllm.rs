//! The TensorRT-LLM personality: `trtllm-serve serve MODEL --config FILE.yaml [--port]`.
//! Children `prte` and `python -m mpi4py.futures.server` (the latter holds the card).
//! Prometheus text at /prometheus/metrics (with `return_perf_metrics: true`), gauges only
//! with `enable_iter_perf_stats: true` and frozen at the last completion; /metrics is JSON.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::args::Args;
use crate::http::{self, Kind, Server};
use crate::log::{self, Style};
use crate::model;
use crate::procs;
use crate::sched::{self, EngineCfg, Notice, Policy};
use crate::server::{self, Faults};

pub const DEFAULT_VERSION: &str = "1.3.0rc29";
/// GiB free for the KV cache after weights and runtime on the simulated card.
const FREE_AFTER_LOAD_GIB: f64 = 5.77;

/// The flat-or-nested `key: value` YAML the LLM API options use (two levels are enough).
pub fn parse_yaml(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut parent: Option<String> = None;
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or("");
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let Some((k, v)) = line.trim().split_once(':') else {
            continue;
        };
        let (k, v) = (
            k.trim().to_string(),
            v.trim().trim_matches('"').trim_matches('\'').to_string(),
        );
        if !indented {
            parent = if v.is_empty() { Some(k.clone()) } else { None };
            if !v.is_empty() {
                out.insert(k, v);
            }
        } else if let Some(p) = &parent {
            out.insert(format!("{p}.{k}"), v);
        }
    }
    out
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|s| matches!(s.to_ascii_lowercase().as_str(), "true" | "yes" | "1"))
}

pub fn serve(argv: &[String]) -> anyhow::Result<i32> {
    let a = Args::parse(argv);
    let model = a
        .positionals()
        .first()
        .map(|s| s.to_string())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "Usage: trtllm-serve serve [OPTIONS] MODEL\nError: Missing argument 'MODEL'."
            )
        })?;
    let speed = crate::args::sim_speed(&a)?;
    let faults = Faults::from_args(&a)?;
    let preset = model::preset_for(&model, a.get("sim-model-preset"), false);
    let yaml = match a.get("config").or_else(|| a.get("extra-llm-api-options")) {
        Some(p) => parse_yaml(
            &std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("cannot read {p}: {e}"))?,
        ),
        None => BTreeMap::new(),
    };
    let port: u16 = a.num("port")?.unwrap_or(8000);
    let host = a.get("host").unwrap_or("localhost").to_string();
    let y = |k: &str| yaml.get(k).cloned();
    let max_batch: usize = a
        .num("max-batch-size")?
        .or(y("max_batch_size").and_then(|v| v.parse().ok()))
        .unwrap_or(2048);
    let max_num_tokens: usize = a
        .num("max-num-tokens")?
        .or(y("max_num_tokens").and_then(|v| v.parse().ok()))
        .unwrap_or(8192);
    let max_seq_len: usize = a
        .num("max-seq-len")?
        .or(y("max_seq_len").and_then(|v| v.parse().ok()))
        .unwrap_or(16384);
    let frac: String = a
        .get("kv-cache-free-gpu-memory-fraction")
        .map(str::to_string)
        .or(y("kv_cache_config.free_gpu_memory_fraction"))
        .unwrap_or_else(|| "0.9".into());
    let frac_f: f64 = frac
        .parse()
        .map_err(|_| anyhow::anyhow!("free_gpu_memory_fraction: not a number: {frac}"))?;
    let tpb: usize = y("kv_cache_config.tokens_per_block")
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let policy_name = y("scheduler_config.capacity_scheduler_policy")
        .unwrap_or_else(|| "GUARANTEED_NO_EVICT".into());
    let policy = match policy_name.as_str() {
        "MAX_UTILIZATION" => Policy::TrtMaxUtil,
        "GUARANTEED_NO_EVICT" => Policy::TrtNoEvict,
        other => anyhow::bail!("capacity_scheduler_policy {other} is not simulated"),
    };
    let perf = truthy(yaml.get("return_perf_metrics"));
    let iter_stats = truthy(yaml.get("enable_iter_perf_stats"));
    let attn = y("attn_backend").unwrap_or_else(|| "TRTLLM".into());
    let mut free_gib = FREE_AFTER_LOAD_GIB;
    if faults.pool_jitter {
        free_gib -= model::start_noise() * 0.4;
    }
    let kv_gib = frac_f * free_gib;
    let (max_tokens, pool_tokens) = match a.num::<usize>("sim-kv-blocks")? {
        Some(b) => (b * tpb + 3, b * tpb),
        None => {
            let t = (kv_gib * 1073741824.0 / preset.kv_bytes_per_token).floor() as usize;
            (t, t / tpb * tpb)
        }
    };
    let blocks = pool_tokens / tpb;
    let bytes = (pool_tokens as f64 * preset.kv_bytes_per_token) as u64;
    let alloc_gib = bytes as f64 / 1073741824.0;

    let listener = server::bind(&host, port)?;
    log::raw(&format!(
        "[TensorRT-LLM] TensorRT LLM version: {DEFAULT_VERSION}"
    ));
    log::trt('I', &format!("[enginesim] simulated pool: {blocks} blocks of {tpb} tokens, max_batch_size={max_batch}, policy {policy_name}, sim speed {speed}"));
    let worker_cfg = json!({"comm": "python", "gpu_mib": ((preset.weights_gib + 1.62 + alloc_gib) * 1024.0).round() as u64});
    let prte = procs::spawn(
        "trt-prte",
        "prte",
        &[],
        &json!({"comm": "prte"}),
        false,
        true,
    )?;
    let mut worker = procs::spawn(
        "trt-worker",
        "python",
        &["-m", "mpi4py.futures.server"],
        &worker_cfg,
        true,
        true,
    )?;
    log::trt('I', "[_torch] Using LLM with PyTorch backend");
    std::thread::sleep(Duration::from_secs_f64(2.0 / speed));
    if let Some(kind) = &faults.fail_start {
        for l in crate::bootfail::traceback(
            kind,
            "tensorrt_llm/_torch/pyexecutor/py_executor_creator.py",
        ) {
            log::raw(&l);
        }
        procs::kill(prte.pid(), libc::SIGTERM);
        procs::kill(worker.pid(), libc::SIGTERM);
        let _ = worker.child.wait();
        return Ok(1);
    }
    log::trt('I', &format!("[_torch] Memory used at after loading weights (inside torch) in memory usage profiling: {:.2} GiB", preset.weights_gib + 0.04));
    log::trt('I', "[_torch] Memory used at after loading weights (outside torch) in memory usage profiling: 1.62 GiB");
    let dry = 17408usize.min(pool_tokens);
    log::raw(&format!("[TRT-LLM] [I] [batchmgr][RANK 0] Max KV cache blocks per sequence: {} [window size={max_seq_len}], tokens per block={tpb}, primary blocks={}, secondary blocks=0, max sequence length={max_seq_len}", max_seq_len / tpb, dry / tpb));
    log::raw(&format!("[TRT-LLM] [I] [batchmgr][RANK 0] [MemUsageChange] Allocated {:.2} GiB for max tokens in paged KV cache ({dry}).", dry as f64 * preset.kv_bytes_per_token / 1073741824.0));
    log::trt('I', &format!("[_torch] max_seq_len={max_seq_len}, max_num_requests={max_batch}, max_num_tokens={max_num_tokens}, max_batch_size={max_batch}"));
    std::thread::sleep(Duration::from_secs_f64(1.0 / speed));
    log::raw(&format!("[TRT-LLM] [I] [batchmgr][RANK 0] Max KV cache blocks per sequence: {} [window size={max_seq_len}], tokens per block={tpb}, primary blocks={blocks}, secondary blocks=0, max sequence length={max_seq_len}", max_seq_len / tpb));
    log::raw(&format!("[TRT-LLM] [I] [batchmgr][RANK 0] [MemUsageChange] Allocated {alloc_gib:.2} GiB for max tokens in paged KV cache ({pool_tokens})."));
    log::trt('I', &format!("[_torch] max_seq_len={max_seq_len}, max_num_requests={max_batch}, max_num_tokens={max_num_tokens}, max_batch_size={max_batch}"));
    log::trt('I', "[_torch] LLM Args:");
    log::raw(&format!(
        "model='{model}' tokenizer=None tokenizer_mode='auto' skip_tokenizer_init=False trust_remote_code=False tensor_parallel_size=1 dtype='auto' pipeline_parallel_size=1 gpus_per_node=1 load_format=<LoadFormat.AUTO: 0> enable_lora=False kv_cache_config=KvCacheConfig(enable_block_reuse=True, max_tokens={max_tokens}, max_attention_window=None, sink_token_length=None, free_gpu_memory_fraction={frac}, host_cache_size=None, enable_partial_reuse=True, copy_on_partial_reuse=True, use_uvm=False, max_gpu_total_bytes={bytes}, dtype='auto', tokens_per_block={tpb}) enable_chunked_prefill=False guided_decoding_backend=None scheduler_config=SchedulerConfig(capacity_scheduler_policy=<CapacitySchedulerPolicy.{policy_name}: '{policy_name}'>, context_chunking_policy=None, dynamic_batch_config=None) speculative_config=None max_batch_size={max_batch} max_input_len=1024 max_seq_len={max_seq_len} max_beam_width=1 max_num_tokens={max_num_tokens} backend='pytorch' return_perf_metrics={} attn_backend='{attn}' disable_overlap_scheduler=False enable_iter_perf_stats={} print_iter_log=False",
        if perf { "True" } else { "False" }, if iter_stats { "True" } else { "False" }));
    if !worker.wait_ready() {
        return Ok(1);
    }
    let pid = std::process::id();
    let children = vec![prte.pid(), worker.pid()];
    let rt = server::runtime()?;
    let served = std::path::Path::new(&model)
        .file_name()
        .map(|f| f.to_string_lossy().to_lowercase())
        .unwrap_or(model.clone());
    let code = rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let ecfg = EngineCfg {
            policy,
            blocks,
            block_size: tpb,
            state_blocks: 0,
            max_running: max_batch,
            step_base_s: preset.step_base_s,
            step_per_seq_s: preset.step_per_seq_s,
            prefill_per_token_s: preset.prefill_per_token_s,
            speed,
            prefix_caching: true,
            throttle: faults.gpu_throttle,
            warmup_cost_s: faults.warmup_cost,
        };
        let engine = sched::start(ecfg, Box::new(|n: Notice| {
            if let Notice::Preempted { seq, .. } = n {
                log::raw(&format!("[TRT-LLM] [I] [batchmgr][RANK 0] MaxUtilizationScheduler: request ID {seq} -> pause"));
            }
            // A batch size met for the first time: warmed up (graph captured) now.
            if let Notice::WarmUp { batch, seconds } = n {
                log::raw(&format!("[TRT-LLM] [I] [_torch] [warmup][rank=0] CUDA graph warmup for batch size={batch}: done in {seconds:.1}s"));
            }
        }));
        let srv = Arc::new(Server {
            kind: Kind::Trt,
            style: Style::Trt,
            engine,
            served_name: served,
            model_path: model.clone(),
            max_model_len: max_seq_len,
            lowers_max_tokens: false,
            version: DEFAULT_VERSION.to_string(),
            start_unix: log::unix_now(),
            metrics: Box::new(crate::metrics::trt),
            server_info: json!({"return_perf_metrics": perf, "enable_iter_perf_stats": iter_stats, "free_gpu_memory_fraction": frac}),
            metrics_enabled: true,
            healthy: AtomicBool::new(true),
            max_queued: None,
            on_reject: None,
            crash_at: faults.crash_at,
            on_crash: Some(Box::new(|_| {
                for l in crate::bootfail::crash_lines().into_iter().skip(1) {
                    log::raw(&l);
                }
                log::trt('E', "[executor] Executor worker died; shutting down the server.");
                std::thread::spawn(|| {
                    std::thread::sleep(Duration::from_millis(300));
                    std::process::exit(1);
                });
            })),
            metrics_stall_after: faults.metrics_stall_after,
            metrics_stall_for: faults.metrics_stall_for,
            engine_dead: AtomicBool::new(false),
            scrapes: AtomicU64::new(0),
            requests_seen: AtomicU64::new(0),
            rejections: AtomicU64::new(0),
            http: Mutex::new(Default::default()),
            trt_iter_json: iter_stats,
            pid,
            api: Default::default(),
            vocab: Default::default(),
            in_flight: Default::default(),
        });
        tokio::spawn(http::serve(listener, srv));
        log::raw(&format!("INFO:     Started server process [{pid}]"));
        log::raw("INFO:     Waiting for application startup.");
        log::raw("INFO:     Application startup complete.");
        log::raw(&format!("INFO:     Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)"));
        let _ = server::wait_stop().await;
        for c in &children {
            procs::kill(*c, libc::SIGTERM);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        anyhow::Ok(0)
    })?;
    let _: Value = Value::Null;
    Ok(code)
}
