//! The vLLM personality: `vllm serve MODEL [flags]`. An API server process (this one) and
//! an engine child whose command line reads `VLLM::EngineCore`; the child prints the
//! engine's boot lines, holds the card's memory, and prints `[shutdown]` lines on SIGTERM.
//! The scheduler itself runs in the API server (see sched.rs); only the log and the
//! process tree show the split.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::args::Args;
use crate::http::{self, Kind, Server};
use crate::log::{self, Style};
use crate::model::{self, round2};
use crate::procs;
use crate::pylit;
use crate::sched::{self, EngineCfg, Notice, Policy};
use crate::server::{self, Faults};
use crate::vllm032::{self, Flavor};

pub const DEFAULT_VERSION: &str = "0.30.0";

fn api(pid: u32, src: &str, msg: &str) {
    log::vllm("APIServer", pid, "INFO", src, msg);
}

/// The `non-default args` dict as vLLM prints it: argparse order puts the model tag,
/// host and port first, then the model, then the other flags given.
fn non_default_args(a: &Args, model: &str) -> Value {
    let mut m = Map::new();
    m.insert("model_tag".into(), json!(model));
    let flags = a.engine_flags();
    let typed = |key: &str, value: &Option<String>| -> Value {
        match (key, value) {
            ("served_model_name", Some(v)) => json!(v.split_whitespace().collect::<Vec<_>>()),
            ("speculative_config", Some(v)) => serde_json::from_str(v).unwrap_or(json!(v)),
            ("model", Some(v)) | ("host", Some(v)) => json!(v),
            (_, Some(v)) => pylit::guess(v),
            (_, None) => json!(true),
        }
    };
    for first in ["host", "port"] {
        if let Some((_, v)) = flags
            .iter()
            .rev()
            .find(|(n, _)| n.replace('-', "_") == first)
        {
            if !(first == "port" && v.as_deref() == Some("8000")) {
                m.insert(first.into(), typed(first, v));
            }
        }
    }
    m.insert("model".into(), json!(model));
    for (name, value) in &flags {
        let key = name.replace('-', "_");
        if ["host", "port", "model"].contains(&key.as_str()) {
            continue;
        }
        m.insert(key.clone(), typed(&key, value));
    }
    Value::Object(m)
}

pub fn serve(argv: &[String]) -> anyhow::Result<i32> {
    let a = Args::parse(argv);
    let model = a
        .positionals()
        .first()
        .map(|s| s.to_string())
        .or_else(|| a.get("model").map(str::to_string))
        .ok_or_else(|| {
            anyhow::anyhow!("vllm serve: error: the following arguments are required: model_tag")
        })?;
    let speed = crate::args::sim_speed(&a)?;
    let faults = Faults::from_args(&a)?;
    let version = a.get("sim-version").unwrap_or(DEFAULT_VERSION).to_string();
    let fl = Flavor::of(&version);
    log::set_bare_non_logger(fl.v032);
    let preset = model::preset_for(&model, a.get("sim-model-preset"), a.has("sim-hybrid"));
    let port: u16 = a.num("port")?.unwrap_or(8000);
    let host = a.get("host").unwrap_or("127.0.0.1").to_string();
    let max_model_len: usize = a.num("max-model-len")?.unwrap_or(16384);
    let max_num_seqs: usize = a.num("max-num-seqs")?.unwrap_or(256);
    // 0.32 raised the default to 0.92.
    let util: f64 = a
        .num("gpu-memory-utilization")?
        .unwrap_or(if fl.v032 { 0.92 } else { 0.9 });
    let max_queued: Option<usize> = a.num("max-num-queued-reqs")?;
    let served = a
        .get("served-model-name")
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or(&model)
        .to_string();
    let eager = a.has("enforce-eager");
    let backend = a.get("attention-backend").map(str::to_string);
    let spec = a.get("speculative-config").map(str::to_string);

    // Sizing: what is left of utilization × card after weights, activations and graphs.
    let user_block_size = a.get("block-size").is_some();
    let block_size: usize = match a.num::<usize>("sim-block-size")? {
        Some(b) => b,
        None if preset.hybrid => preset.vllm_block_size,
        // The CPU platform's default block is 128 tokens.
        None => a
            .num("block-size")?
            .unwrap_or(if fl.cpu { 128 } else { 16 }),
    };
    let mut consumed = preset.consumed_gib;
    if faults.pool_jitter {
        consumed = round2(consumed + model::start_noise() * 0.3);
    }
    let cg = if eager { 0.0 } else { preset.cudagraph_gib };
    let desired = util * model::total_gib();
    let per_block_mib = preset.vllm_block_mib * block_size as f64 / preset.vllm_block_size as f64;
    let blocks_gib = |n: usize| round2(n as f64 * per_block_mib / 1024.0);
    // What profiling leaves for the KV cache, and the blocks that makes.
    // The CPU platform gives the cache a fixed space instead (VLLM_CPU_KVCACHE_SPACE).
    let (kv_space_gib, kv_space_explicit) = vllm032::cpu_kv_space();
    let profiled_gib = if fl.cpu {
        kv_space_gib
    } else {
        round2(desired - consumed - preset.peak_gib).max(0.0)
    };
    let profiled_blocks = (profiled_gib * 1024.0 / per_block_mib).floor() as usize;
    // `--num-gpu-blocks-override` sizes the pool as in vLLM (profiling still runs and
    // is logged); the simulator's own `--sim-kv-blocks` wins over it and skips profiling.
    let override_blocks: Option<usize> = a.num("num-gpu-blocks-override")?;
    let (num_blocks, avail_gib, alloc_gib) =
        match (a.num::<usize>("sim-kv-blocks")?, override_blocks) {
            (Some(n), _) => (n, blocks_gib(n), blocks_gib(n)),
            (None, Some(n)) => (n, profiled_gib, blocks_gib(n)),
            (None, None) => (profiled_blocks, profiled_gib, profiled_gib),
        };
    anyhow::ensure!(
        num_blocks >= 2,
        "the simulated pool has {num_blocks} blocks; need at least 2"
    );
    let kv_tokens = num_blocks * block_size;
    // The CPU platform holds no card memory.
    let gpu_mib = if fl.cpu {
        0
    } else {
        ((consumed + alloc_gib + cg) * 1024.0).round() as u64 + 600
    };
    let nda = non_default_args(&a, &model);

    let pid = std::process::id();
    let listener = server::bind(&host, port)?;
    api(pid, "api_utils.py:347", "");
    api(pid, "api_utils.py:347", "       █     █     █▄   ▄█");
    api(
        pid,
        "api_utils.py:347",
        &format!(" ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}"),
    );
    api(
        pid,
        "api_utils.py:347",
        &format!("  █▄█▀ █     █     █     █  model   {model}"),
    );
    api(pid, "api_utils.py:347", "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀");
    api(pid, "api_utils.py:347", "");
    api(
        pid,
        "api_utils.py:286",
        &format!("non-default args: {}", pylit::repr(&nda)),
    );
    api(
        pid,
        fl.tag("model.py:692", "model.py:733"),
        &format!("Resolved architecture: {}", preset.architecture),
    );
    api(
        pid,
        fl.tag("model.py:2030", "model.py:2152"),
        &format!("Using max model len {max_model_len}"),
    );
    if fl.cpu && !block_size.is_multiple_of(32) {
        log::vllm("APIServer", pid, "WARNING", "cpu.py:296", "CPU backend prefers block_size is multiples of 32, otherwise the performance is not optimized.");
    }
    api(pid, "scheduler.py:230", &format!(
        "[enginesim] simulated pool: {num_blocks} blocks of {block_size} tokens (1 reserved null block), hybrid={}, max_num_seqs={max_num_seqs}, sim speed {speed}",
        preset.hybrid));

    let cfg = json!({
        "comm": "VLLM::EngineCor",
        "version": version, "model": model, "max_model_len": max_model_len, "speed": speed,
        "block_size": block_size, "hybrid": preset.hybrid, "num_blocks": num_blocks, "kv_tokens": kv_tokens,
        "avail_gib": avail_gib, "consumed_gib": consumed, "peak_gib": preset.peak_gib, "cg_gib": cg,
        "weights_gib": preset.weights_gib, "load_s": preset.load_s, "util": util, "desired_gib": round2(desired),
        "eager": eager, "backend": backend, "spec": spec, "gpu_mib": gpu_mib,
        "override_from": override_blocks.map(|_| profiled_blocks),
        "cpu": fl.cpu, "v032": fl.v032, "kv_space_gib": kv_space_gib, "kv_space_explicit": kv_space_explicit,
        "fail_start": faults.fail_start, "drafter_ignores_backend": faults.drafter_ignores_backend,
    });
    // 0.32 starts Python's multiprocessing resource tracker beside its engine.
    let _tracker = if fl.v032 {
        Some(procs::spawn(
            "resource-tracker",
            "python",
            &[
                "-B",
                "-c",
                "from multiprocessing.resource_tracker import main;main(32)",
            ],
            &json!({"comm": "python"}),
            false,
            true,
        )?)
    } else {
        None
    };
    let mut child = procs::spawn(
        "vllm-engine-core",
        "VLLM::EngineCore",
        &[],
        &cfg,
        true,
        false,
    )?;
    let core_pid = child.pid();
    if !child.wait_ready() {
        let _ = child.child.wait();
        if fl.v032 {
            vllm032::failed_start_tail(pid);
            return Ok(1);
        }
        for l in [
            "Traceback (most recent call last):",
            "  File \"/opt/venv/bin/vllm\", line 10, in <module>",
            "    sys.exit(main())",
            "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/utils.py\", line 1138, in wait_for_engine_startup",
            "    raise RuntimeError(",
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
        ] {
            log::raw(&format!("(APIServer pid={pid}) {l}"));
        }
        return Ok(1);
    }
    api(
        pid,
        fl.tag("entry.py:135", "entry.py:136"),
        "Supported tasks: ['generate']",
    );
    api(
        pid,
        fl.tag("entry.py:139", "entry.py:140"),
        &format!("Starting vLLM server on http://{host}:{port}"),
    );
    api(
        pid,
        fl.tag("launcher.py:61", "launcher.py:186"),
        "Available routes are:",
    );
    for (r, m) in [
        ("/load", "GET"),
        ("/version", "GET"),
        ("/health", "GET"),
        ("/metrics", "GET"),
        ("/tokenize", "POST"),
        ("/detokenize", "POST"),
        ("/v1/models", "GET"),
        ("/v1/chat/completions", "POST"),
        ("/v1/completions", "POST"),
        ("/v1/chat/completions/render", "POST"),
        ("/v1/completions/render", "POST"),
    ] {
        // 0.32 lists GET routes as "HEAD, GET".
        let m = if fl.v032 && m == "GET" {
            "HEAD, GET"
        } else {
            m
        };
        api(
            pid,
            fl.tag("launcher.py:70", "launcher.py:195"),
            &format!("Route: {r}, Methods: {m}"),
        );
    }

    let rt = server::runtime()?;
    let child = Arc::new(Mutex::new(child));
    let slow_stop = faults.slow_stop;
    let code = rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let ecfg = EngineCfg {
            policy: Policy::Vllm,
            blocks: num_blocks - 1,
            block_size,
            state_blocks: preset.state_blocks,
            max_running: max_num_seqs,
            step_base_s: preset.step_base_s,
            step_per_seq_s: preset.step_per_seq_s,
            prefill_per_token_s: preset.prefill_per_token_s,
            speed,
            prefix_caching: !a.has("no-enable-prefix-caching"),
            throttle: faults.gpu_throttle,
            warmup_cost_s: faults.warmup_cost,
        };
        // vLLM preempts silently: nothing is logged. A batch size met for the first time
        // is compiled now, and the engine core says so.
        let engine = sched::start(
            ecfg,
            Box::new(move |n: Notice| {
                if let Notice::WarmUp { batch, seconds } = n {
                    log::vllm("EngineCore", core_pid, "INFO", "backends.py:400", &format!(
                        "Compiling a graph for compile range (1, {batch}) takes {seconds:.2} s"));
                }
            }),
        );
        let stopping = Arc::new(AtomicBool::new(false));
        let st2 = stopping.clone();
        // vLLM reads it as an integer: "1" keeps the API server alive after its engine died.
        let keep_alive = std::env::var("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH")
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .is_some_and(|v| v != 0);
        let on_crash: http::CrashFn = Box::new(move |_n| {
            st2.store(true, Ordering::SeqCst);
            if fl.cpu {
                // The worker's and the engine's lines come from the engine child, first.
                procs::kill(core_pid, libc::SIGUSR1);
                procs::wait_gone(core_pid, Duration::from_secs(2));
            } else {
                for l in crate::bootfail::crash_lines() {
                    log::vllm("EngineCore", core_pid, "ERROR", "core.py:1366", &l);
                }
                procs::kill(core_pid, libc::SIGUSR1);
            }
            let src = fl.tag("async_llm.py:708", "async_llm.py:906");
            log::vllm("APIServer", pid, "ERROR", src, "AsyncLLM output_handler failed.");
            log::vllm("APIServer", pid, "ERROR", src, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
            if keep_alive {
                // Kept alive: it goes on answering (every generation request with a 500)
                // and logging, until it is stopped.
                return;
            }
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                log::vllm_uvicorn(std::process::id(), "Shutting down");
                if fl.v032 {
                    // 0.32's API server ends cleanly after its engine died: status 0.
                    log::vllm_uvicorn(std::process::id(), &format!("Finished server process [{pid}]"));
                    log::vllm("APIServer", pid, "WARNING", "utils.py:653", &format!("[shutdown] Process manager: force killing remaining process EngineCore pid {core_pid}"));
                    std::process::exit(0);
                }
                std::process::exit(1);
            });
        });
        let on_reject: http::RejectFn = Box::new(move |id, cur, max| {
            api(pid, "async_llm.py:331", &format!("Request queue full - rejecting request {id} (current={cur}, n=1, max={max})."));
            let e = |m: &str| log::vllm("APIServer", pid, "ERROR", "serving.py:498", m);
            e("Error in completion stream generator.");
            e("Traceback (most recent call last):");
            e("  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/async_llm.py\", line 339, in check_admission");
            e("    raise QueueOverflowError()");
            e("vllm.exceptions.QueueOverflowError: The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.");
        });
        let srv = Arc::new(Server {
            kind: Kind::Vllm,
            style: Style::Vllm(pid),
            engine: engine.clone(),
            served_name: served,
            model_path: model.clone(),
            max_model_len,
            lowers_max_tokens: fl.v032,
            version,
            start_unix: log::unix_now(),
            metrics: Box::new(crate::metrics::vllm),
            server_info: json!({"gpu_memory_utilization": util, "kv_pool_tokens": kv_tokens,
                "num_gpu_blocks_override": override_blocks,
                "user_specified_block_size": user_block_size,
                // The CPU platform reports the space it reserved, not the pool's size.
                "kv_cache_memory_bytes": fl.cpu.then_some((kv_space_gib * 1073741824.0) as u64)}),
            metrics_enabled: true,
            healthy: AtomicBool::new(true),
            max_queued,
            on_reject: Some(on_reject),
            crash_at: faults.crash_at,
            on_crash: Some(on_crash),
            metrics_stall_after: faults.metrics_stall_after,
            metrics_stall_for: faults.metrics_stall_for,
            engine_dead: AtomicBool::new(false),
            scrapes: AtomicU64::new(0),
            requests_seen: AtomicU64::new(0),
            rejections: AtomicU64::new(0),
            http: Mutex::new(Default::default()),
            trt_iter_json: false,
            pid,
            api: http::ApiOptions {
                prompt_tokens_details: a.has("enable-prompt-tokens-details"),
                load_tracking: a.has("enable-server-load-tracking"),
                force_include_usage: a.has("enable-force-include-usage"),
            },
            vocab: Default::default(),
            in_flight: Default::default(),
        });
        tokio::spawn(http::serve(listener, srv.clone()));
        log::vllm_uvicorn(pid, &format!("Started server process [{pid}]"));
        log::vllm_uvicorn(pid, "Waiting for application startup.");
        log::vllm_uvicorn(pid, "Application startup complete.");
        tokio::spawn(stats_logger(engine.clone(), pid, speed, fl));
        // The engine child dying on its own kills the server, as EngineDeadError does.
        let (c2, s3) = (child.clone(), stopping.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let exited = c2.lock().unwrap().child.try_wait().ok().flatten().is_some();
                if exited && !s3.load(Ordering::SeqCst) {
                    log::vllm("APIServer", pid, "ERROR", "async_llm.py:708", "AsyncLLM output_handler failed.");
                    log::vllm("APIServer", pid, "ERROR", "async_llm.py:708", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
                    std::process::exit(1);
                }
            }
        });
        let sig = server::wait_stop().await;
        stopping.store(true, Ordering::SeqCst);
        let _ = sig;
        if let Some(s) = slow_stop {
            tokio::time::sleep(Duration::from_secs_f64(s)).await;
        }
        if fl.v032 {
            api(pid, "launcher.py:254", "[shutdown] API server: shutdown triggered");
            api(pid, "utils.py:628", "[shutdown] Process manager: send sigterm to process EngineCore");
        }
        procs::kill(core_pid, libc::SIGTERM);
        for _ in 0..100 {
            if child.lock().unwrap().child.try_wait().ok().flatten().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        log::vllm_uvicorn(pid, "Shutting down");
        log::vllm_uvicorn(pid, "Waiting for application shutdown.");
        log::vllm_uvicorn(pid, "Application shutdown complete.");
        log::vllm_uvicorn(pid, &format!("Finished server process [{pid}]"));
        anyhow::Ok(0)
    })?;
    Ok(code)
}

/// vLLM's periodic `Engine 000:` line, every 10 simulated seconds while busy.
async fn stats_logger(engine: Arc<sched::Shared>, pid: u32, speed: f64, fl: Flavor) {
    let period = Duration::from_secs_f64(10.0 / speed);
    let (mut lp, mut lg, mut lq, mut lh) = (0u64, 0u64, 0u64, 0u64);
    let mut was_busy = false;
    loop {
        tokio::time::sleep(period).await;
        let st = engine.stats.lock().unwrap().clone();
        let busy = st.running + st.waiting > 0;
        if busy || was_busy || st.live_prompt_tokens != lp {
            let (dq, dh) = (st.prefix_queries - lq, st.prefix_hits - lh);
            api(pid, fl.tag("loggers.py:315", "loggers.py:335"), &format!(
                "Engine 000: Avg prompt throughput: {:.1} tokens/s, Avg generation throughput: {:.1} tokens/s, Running: {} reqs, Waiting: {} reqs, {} KV cache usage: {:.1}%, Prefix cache hit rate: {:.1}%",
                (st.live_prompt_tokens - lp) as f64 / 10.0,
                (st.live_generation_tokens - lg) as f64 / 10.0,
                st.running, st.waiting, fl.device(), st.usage() * 100.0,
                if dq > 0 { dh as f64 / dq as f64 * 100.0 } else { 0.0 }));
        }
        was_busy = busy;
        lp = st.live_prompt_tokens;
        lg = st.live_generation_tokens;
        lq = st.prefix_queries;
        lh = st.prefix_hits;
    }
}

fn core(pid: u32, src: &str, msg: &str) {
    log::vllm("EngineCore", pid, "INFO", src, msg);
}

fn pause(speed: f64, sim_s: f64) {
    std::thread::sleep(Duration::from_secs_f64(sim_s / speed));
}

/// The engine child: boot lines, memory, then wait for the stop.
pub fn engine_core_main(c: &Value) -> i32 {
    let pid = std::process::id();
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let f = |k: &str| c.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let u = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    let b = |k: &str| c.get(k).and_then(Value::as_bool).unwrap_or(false);
    let speed = f("speed").max(1e-6);
    let model = s("model");
    let fail = c
        .get("fail_start")
        .and_then(Value::as_str)
        .map(str::to_string);
    let spec = c.get("spec").and_then(Value::as_str).map(str::to_string);
    let backend = c.get("backend").and_then(Value::as_str).map(str::to_string);
    let eager = b("eager");
    if b("v032") {
        log::set_bare_non_logger(true);
    }
    if b("cpu") {
        return engine_core_cpu(c);
    }
    let die = |kind: &str| -> i32 {
        for l in crate::bootfail::traceback(kind, "vllm/v1/engine/core.py") {
            log::vllm("EngineCore", pid, "ERROR", "core.py:1366", &l);
        }
        log::vllm(
            "EngineCore",
            pid,
            "ERROR",
            "core.py:1366",
            "EngineCore failed to start.",
        );
        1
    };
    let v032 = b("v032");
    core(pid, if v032 { "core.py:133" } else { "core.py:123" }, &format!(
        "Initializing a V1 LLM engine (v{}) with config: model='{model}', speculative_config={}, tokenizer='{model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len={}, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager={}, kv_cache_dtype=auto, {}, seed=0, served_model_name={model}, enable_prefix_caching=True",
        s("version"), spec.as_deref().map(|_| "SpeculativeConfig(method='mtp')").unwrap_or("None"), u("max_model_len"), if eager { "True" } else { "False" },
        if v032 { config_platform(false, eager) } else { "device_config=cuda".to_string() }));
    core(pid, "parallel_state.py:1827", "world_size=1 rank=0 local_rank=0 distributed_init_method=file:///tmp/vllm_dist backend=nccl");
    if matches!(
        fail.as_deref(),
        Some("cuda") | Some("accelerator") | Some("assert")
    ) {
        pause(speed, 1.0);
        return die(fail.as_deref().unwrap_or("cuda"));
    }
    core(pid, "model_runner.py:396", "Loading model from scratch...");
    match &backend {
        Some(bk) => core(pid, "cuda.py:536", &format!("Using AttentionBackendEnum.{bk} backend.")),
        None => core(pid, "cuda.py:538", "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION']."),
    }
    pause(speed, 2.0);
    core(
        pid,
        "default_loader.py:430",
        &format!("Loading weights took {:.2} seconds", f("load_s") - 2.3),
    );
    core(
        pid,
        "model_runner.py:428",
        &format!(
            "Model loading took {:.2} GiB memory and {:.6} seconds",
            f("weights_gib"),
            f("load_s")
        ),
    );
    if spec.is_some() {
        core(pid, "eagle.py:1024", "Loading drafter model...");
        if c.get("drafter_ignores_backend")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            core(pid, "cuda.py:538", "Using FLASHINFER attention backend out of potential backends: ['FLASHINFER', 'TRITON_ATTN'].");
        } else if let Some(bk) = &backend {
            core(
                pid,
                "cuda.py:536",
                &format!("Using AttentionBackendEnum.{bk} backend."),
            );
        } else {
            core(pid, "cuda.py:538", "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].");
        }
    }
    if fail.as_deref() == Some("oom") {
        return die("oom");
    }
    if b("hybrid") {
        core(pid, "interface.py:933", &format!("Setting attention block size to {} tokens to ensure that attention page size is >= mamba page size.", u("block_size")));
        core(pid, "interface.py:957", "Padding mamba page size by 0.13% to ensure that mamba page size and attention page size are exactly equal.");
    }
    pause(speed, 1.0);
    if eager {
        core(
            pid,
            "compilation.py:412",
            "Cudagraph is disabled under eager mode",
        );
    } else {
        core(pid, "decorators.py:313", "Directly load AOT compilation from path /root/.cache/vllm/torch_compile_cache/torch_aot_compile/rank_0_0/model");
        core(pid, "monitor.py:53", "torch.compile took 4.07 s in total");
    }
    let kv_tokens = u("kv_tokens");
    let mml = u("max_model_len");
    core(
        pid,
        "gpu_worker.py:640",
        &format!("Available KV cache memory: {:.2} GiB", f("avail_gib")),
    );
    if let Some(from) = c.get("override_from").and_then(Value::as_u64) {
        core(
            pid,
            "kv_cache_utils.py:2619",
            &format!(
                "Overriding num_gpu_blocks={from} with num_gpu_blocks_override={}",
                u("num_blocks")
            ),
        );
    }
    if fail.as_deref() == Some("kv") || kv_tokens < mml {
        return die("kv");
    }
    core(
        pid,
        "kv_cache_utils.py:2395",
        &format!(
            "GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {:.2}x",
            thousands(kv_tokens),
            thousands(mml),
            kv_tokens as f64 / mml.max(1) as f64
        ),
    );
    if matches!(fail.as_deref(), Some("ld") | Some("headers")) {
        pause(speed, 0.5);
        return die(fail.as_deref().unwrap_or("ld"));
    }
    if !eager {
        pause(speed, 1.0);
        core(
            pid,
            "model_runner.py:1066",
            &format!(
                "Graph capturing finished in 3 secs, took {:.2} GiB",
                f("cg_gib")
            ),
        );
        core(pid, "gpu_worker.py:825", &format!("CUDA graph pool memory: {:.2} GiB (actual), 0.21 GiB (estimated), difference: {:.2} GiB.", f("cg_gib"), (0.21 - f("cg_gib")).abs()));
    }
    core(pid, "gpu_worker.py:888", &format!(
        "Free memory on device (22.45/23.99 GiB) on startup. Desired GPU memory utilization is ({}, {:.2} GiB). Actual usage is {:.2} GiB for consumed memory (weights + non-torch), {:.2} GiB for peak activation, and {:.2} GiB for CUDAGraph memory.",
        f("util"), f("desired_gib"), f("consumed_gib"), f("peak_gib"), f("cg_gib")));
    core(
        pid,
        "core.py:372",
        "init engine (profile, create kv cache, warmup model) took 23.12 s",
    );
    if b("hybrid") {
        let bs = u("block_size");
        core(
            pid,
            "kv_cache_utils.py:748",
            &format!("kv cache group sizes [{bs}, {bs}, {bs}, {bs}]"),
        );
    }
    let _ = crate::gpu::register(u("gpu_mib"));
    procs::signal_ready();
    let sig = procs::wait_signal();
    if sig == libc::SIGUSR1 {
        // Crash: the server in front already printed the traceback.
        crate::gpu::unregister();
        return 1;
    }
    let name = if sig == libc::SIGHUP {
        "SIGHUP"
    } else {
        "SIGTERM"
    };
    core(
        pid,
        "core.py:1342",
        &format!("[shutdown] EngineCore: trigger received signal={name}"),
    );
    core(
        pid,
        "core.py:1493",
        "[shutdown] EngineCore: start mode=abort timeout=0s",
    );
    core(
        pid,
        "core.py:1524",
        "[shutdown] EngineCore: request processing complete; starting resource teardown",
    );
    core(
        pid,
        "core.py:1355",
        "[shutdown] EngineCore: exiting busy loop",
    );
    crate::gpu::unregister();
    0
}

pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The engine configuration line's settings that tell the platform and CUDA graphs.
fn config_platform(cpu: bool, eager: bool) -> String {
    let mode = if cpu || eager {
        "<CUDAGraphMode.NONE: 0>"
    } else {
        "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>"
    };
    format!(
        "device_config={}, compilation_config={{'mode': <CompilationMode.VLLM_COMPILE: 3>, 'cudagraph_mode': {mode}, 'cudagraph_capture_sizes': []}}",
        if cpu { "cpu" } else { "cuda" }
    )
}

/// The engine child on vLLM 0.32's CPU platform: its worker grandchild loads the model and
/// reserves the KV space; the engine sizes the pool, prints it, and fails as the real one
/// does on a block size the CPU backend refuses or a model length the pool cannot hold.
fn engine_core_cpu(c: &Value) -> i32 {
    let pid = std::process::id();
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let u = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    let eager = c.get("eager").and_then(Value::as_bool).unwrap_or(false);
    let model = s("model");
    core(pid, "core.py:133", &format!(
        "Initializing a V1 LLM engine (v{}) with config: model='{model}', speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len={}, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager={}, kv_cache_dtype=auto, {}, seed=0, served_model_name={model}, enable_prefix_caching=True",
        s("version"), u("max_model_len"), if eager { "True" } else { "False" }, config_platform(true, eager)));
    core(
        pid,
        "ompmultiprocessing.py:185",
        "OpenMP thread binding info: ",
    );
    core(
        pid,
        "ompmultiprocessing.py:185",
        "\tlocal_rank=0, core ids=[0]",
    );
    let mut cfg = c.clone();
    cfg["comm"] = Value::from("VLLM::Worker");
    procs::keep_ready_fd_private();
    let mut worker = match procs::spawn("vllm-worker", "VLLM::Worker", &[], &cfg, true, true) {
        Ok(w) => w,
        Err(_) => return 1,
    };
    let worker_pid = worker.pid();
    let stop_worker = |w: &mut procs::Spawned| {
        procs::kill(w.pid(), libc::SIGKILL);
        let _ = w.child.wait();
    };
    if !worker.wait_ready() {
        let _ = worker.child.wait();
        return 1;
    }
    let blocks = u("num_blocks");
    let bs = u("block_size");
    if let Some(from) = c.get("override_from").and_then(Value::as_u64) {
        core(
            pid,
            "kv_cache_utils.py:2619",
            &format!("Overriding num_gpu_blocks={from} with num_gpu_blocks_override={blocks}"),
        );
    }
    let mml = u("max_model_len");
    // One block is the null block: the usable pool is one block smaller.
    let usable = blocks.saturating_sub(1) * bs;
    if mml > usable {
        vllm032::max_len_failure(pid, mml, usable);
        stop_worker(&mut worker);
        return 1;
    }
    let kv_tokens = u("kv_tokens");
    core(
        pid,
        "kv_cache_utils.py:2327",
        &format!(
            "CPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {:.2}x",
            thousands(kv_tokens),
            thousands(mml),
            kv_tokens as f64 / mml.max(1) as f64
        ),
    );
    if !bs.is_multiple_of(32) {
        vllm032::block_size_failure(worker_pid, pid, bs as usize);
        stop_worker(&mut worker);
        log::raw("Process EngineCore:");
        return 1;
    }
    core(
        pid,
        "core.py:402",
        "init engine (profile, create kv cache, warmup model) took 20.55 s",
    );
    procs::signal_ready();
    let sig = procs::wait_signal();
    if sig == libc::SIGUSR1 {
        vllm032::cpu_crash_lines(worker_pid, pid);
        stop_worker(&mut worker);
        return 1;
    }
    let name = if sig == libc::SIGHUP {
        "SIGHUP"
    } else {
        "SIGTERM"
    };
    core(
        pid,
        "core.py:1454",
        &format!("[shutdown] EngineCore: trigger received signal={name}"),
    );
    log::vllm(
        "APIServer",
        std::os::unix::process::parent_id(),
        "WARNING",
        "system_utils.py:225",
        &format!("[shutdown] force killing sub process VLLM::Worker pid {worker_pid}"),
    );
    stop_worker(&mut worker);
    0
}
