//! The SGLang personality: `sglang serve --model-path M [--enable-metrics] [--port]
//! [--max-running-requests N] ...` (the flags of `python -m sglang.launch_server`).
//! Children `sglang::scheduler` (holds the card) and `sglang::detokenizer`; metrics only
//! with --enable-metrics; /health answers 503 until the server's own warm-up request is done.
//!
//! It follows the real 0.5.23 (checked against `fixtures/real/sglang-*` by
//! `tests/real_0523.rs`): its log lines on the GPU and with `--device cpu`, the running
//! limit lowered to half the pool's tokens, the starts a tiny pool fails (no request fits;
//! the warm-up request refused after "Application startup complete"), its metric families
//! (`sglang_metrics.rs`) with gauges refreshed at the scheduler's log points, and its stop
//! on SIGTERM: a scheduler that "crashed with exit code -15", SIGQUIT, `kill_process_tree`
//! and the launcher killing itself.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::args::Args;
use crate::http::{self, Kind, Server};
use crate::log::{self, Style};
use crate::model::{self, round2};
use crate::procs;
use crate::pylit;
use crate::sched::{self, EngineCfg, Event, Notice, Policy, Submit};
use crate::server::{self, Faults};

pub const DEFAULT_VERSION: &str = "0.5.23";

/// The tokens of SGLang's own warm-up request.
const WARM_UP_PROMPT: usize = 6;

pub fn serve(argv: &[String]) -> anyhow::Result<i32> {
    let a = Args::parse(argv);
    let model = a
        .get("model-path")
        .or_else(|| a.get("model"))
        .map(str::to_string)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "sglang serve: error: the following arguments are required: --model-path"
            )
        })?;
    let speed = crate::args::sim_speed(&a)?;
    let faults = Faults::from_args(&a)?;
    let preset = model::preset_for(&model, a.get("sim-model-preset"), false);
    let port: u16 = a.num("port")?.unwrap_or(30000);
    let host = a.get("host").unwrap_or("127.0.0.1").to_string();
    let enable_metrics = a.has("enable-metrics");
    let max_running: Option<usize> = a.num("max-running-requests")?;
    let mem_frac: f64 = a.num("mem-fraction-static")?.unwrap_or(0.88);
    let page_size: usize = a.num("page-size")?.unwrap_or(1);
    let context_arg: Option<usize> = a.num("context-length")?;
    let context_len: usize = context_arg.unwrap_or(16384);
    let backend = a.get("attention-backend").map(str::to_string);
    let served = a.get("served-model-name").unwrap_or(&model).to_string();
    // `--device cpu`: SGLang's CPU engine (no card, no graphs unless compiled).
    let cpu = a.get("device") == Some("cpu");
    // The native-torch attention backend turns graphs off, as does the flag.
    let native = backend.as_deref() == Some("torch_native");
    let disable_cg = a.has("disable-cuda-graph") || native || cpu;
    let mut other = 1.42;
    if faults.pool_jitter {
        other += model::start_noise() * 0.3;
    }
    let kv_gib_raw = (mem_frac * model::total_gib() - preset.weights_gib - other).max(0.05);
    let tokens: usize = match a
        .num::<usize>("max-total-tokens")?
        .or(a.num("sim-kv-tokens")?)
    {
        Some(t) => t,
        None => {
            ((kv_gib_raw * 1073741824.0 / preset.kv_bytes_per_token).floor() as usize) / page_size
                * page_size
        }
    };
    let half_gb = tokens as f64 * preset.kv_bytes_per_token / 2.0 / 1073741824.0;
    // At most half the pool's tokens run at once: a lower limit than the one asked for is
    // said in one line, while server_args keeps the one asked for.
    let running_cap = match max_running {
        Some(asked) => asked.min(tokens / 2),
        None => 256,
    };
    let seed = (model::start_noise() * 2_000_000_000.0) as u64;

    // server_args as SGLang prints them: every setting, defaults included.
    let mut sa = Map::new();
    let mut put = |k: &str, v: Value| {
        sa.insert(k.into(), v);
    };
    put("model_path", json!(model));
    put("tokenizer_path", json!(model));
    put("tokenizer_mode", json!("auto"));
    put("skip_tokenizer_init", json!(false));
    put("load_format", json!("auto"));
    put("trust_remote_code", json!(a.has("trust-remote-code")));
    put(
        "context_length",
        context_arg.map(|c| json!(c)).unwrap_or(Value::Null),
    );
    put("is_embedding", json!(false));
    put("dtype", json!("auto"));
    put("quantization", Value::Null);
    put("kv_cache_dtype", json!("auto"));
    put("served_model_name", json!(served));
    put("host", json!(host));
    put("port", json!(port));
    put("mem_fraction_static", json!(mem_frac));
    put(
        "max_running_requests",
        max_running.map(|v| json!(v)).unwrap_or(Value::Null),
    );
    put(
        "max_total_tokens",
        a.num::<usize>("max-total-tokens")?
            .map(|v| json!(v))
            .unwrap_or(Value::Null),
    );
    put("chunked_prefill_size", json!(4096));
    put("max_prefill_tokens", json!(16384));
    put("schedule_policy", json!("fcfs"));
    put("schedule_conservativeness", json!(1.0));
    put("page_size", json!(page_size));
    put("tp_size", json!(1));
    put("pp_size", json!(1));
    put("stream_interval", json!(1));
    put("random_seed", json!(seed));
    put("log_level", json!("info"));
    put("enable_metrics", json!(enable_metrics));
    put(
        "attention_backend",
        backend.clone().map(Value::from).unwrap_or(Value::Null),
    );
    put("sampling_backend", json!("flashinfer"));
    put(
        "speculative_algorithm",
        a.get("speculative-algorithm")
            .map(Value::from)
            .unwrap_or(Value::Null),
    );
    put("disable_cuda_graph", json!(a.has("disable-cuda-graph")));
    put("device", json!(if cpu { "cpu" } else { "cuda" }));
    let graph_backend = |on: &'static str| if disable_cg { "disabled" } else { on };
    put(
        "cuda_graph_config",
        json!({
            "decode": {"backend": graph_backend("full"), "max_bs": 32},
            "prefill": {"backend": graph_backend("breakable"), "max_bs": 4096},
        }),
    );
    put("disable_radix_cache", json!(a.has("disable-radix-cache")));
    put("cuda_graph_max_bs", json!(32));
    // Flags this simulator does not model are still echoed, as argparse would keep them.
    for (name, value) in a.engine_flags() {
        let key = name.replace('-', "_");
        if key == "model" || sa.contains_key(&key) {
            continue;
        }
        sa.insert(
            key,
            value.as_deref().map(pylit::guess).unwrap_or(json!(true)),
        );
    }
    let server_args = Value::Object(sa);

    let listener = server::bind(&host, port)?;
    if a.has("disable-cuda-graph") {
        log::sglang("\x1b[1;33m'--disable-cuda-graph' is deprecated and will be removed in a future release. Use '--cuda-graph-backend-{decode,prefill}=disabled' instead.\x1b[0m");
    }
    if backend.is_none() {
        log::sglang("Attention backend not specified. Use flashinfer backend by default.");
    }
    if native {
        log::sglang("Cuda graph is disabled because of using torch native attention backend");
    }
    log::sglang(&format!("server_args={}", pylit::repr(&server_args)));
    log::sglang(&format!(
        "[enginesim] simulated pool: {tokens} tokens, page size {page_size}, max_running_requests={running_cap}, sim speed {speed}"));
    // The CPU engine holds no card memory.
    let gpu_mib = if cpu {
        0
    } else {
        ((preset.weights_gib + 2.0 * half_gb + 1.0) * 1024.0).round() as u64
    };
    let sched_cfg = json!({"comm": "sglang::schedul", "gpu_mib": gpu_mib});
    let mut scheduler = procs::spawn(
        "sglang-scheduler",
        "sglang::scheduler",
        &[],
        &sched_cfg,
        true,
        true,
    )?;
    let detok = procs::spawn(
        "sglang-detokenizer",
        "sglang::detokenizer",
        &[],
        &json!({"comm": "sglang::detoken"}),
        false,
        true,
    )?;
    log::sglang(&format!(
        "Load weight begin. avail mem={:.2} GB",
        model::total_gib() - 1.6
    ));
    std::thread::sleep(Duration::from_secs_f64(2.0 / speed));
    if let Some(kind) = &faults.fail_start {
        log::sglang("Scheduler hit an exception: Traceback (most recent call last):");
        for l in crate::bootfail::traceback(kind, "sglang/srt/managers/scheduler.py") {
            log::raw(&l);
        }
        log::sglang("Received sigquit from a child process. It usually means the child failed.");
        procs::kill(scheduler.pid(), libc::SIGTERM);
        procs::kill(detok.pid(), libc::SIGTERM);
        let _ = scheduler.child.wait();
        return Ok(1);
    }
    // On the CPU the "usage" is a difference of free host memory: noise for a small model.
    let (weights_gb, mem_word) = if cpu {
        (0.0, "available_cpu_mem")
    } else {
        (preset.weights_gib, "available_gpu_mem")
    };
    log::sglang(&format!(
        "Load weight end. elapsed={:.2} s, type={}, avail mem={:.2} GB, mem usage={weights_gb:.2} GB.",
        preset.load_s,
        preset.architecture,
        model::total_gib() - 1.6 - weights_gb,
    ));
    log::sglang(&format!(
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: {tokens}, K size: {half_gb:.2} GB, V size: {half_gb:.2} GB"));
    let avail_after = round2((kv_gib_raw - 2.0 * half_gb).max(0.0) + 1.08);
    log::sglang(&format!(
        "Memory pool end. avail mem={:.2} GB",
        avail_after + 0.94
    ));
    // No request fits a pool of one token (0.5.23 asserts it while sizing the pools).
    if tokens / 2 == 0 {
        return Ok(fail_start(
            &mut scheduler,
            detok.pid(),
            &[
                "  File \"/sglang/srt/managers/tp_worker.py\", line 420, in alloc_memory_pool",
                "    assert self.model_runner.max_running_requests > 0, \"max_running_request is zero\"",
                "AssertionError: max_running_request is zero",
            ],
        ));
    }
    if let Some(asked) = max_running.filter(|&m| m > running_cap) {
        log::sglang(&format!(
            "max_running_requests was reduced from the requested {asked} to {running_cap} (per dp worker) due to the available KV cache capacity."
        ));
    }
    if !disable_cg {
        std::thread::sleep(Duration::from_secs_f64(1.0 / speed));
        log::sglang(&format!(
            "Capture target prefill CUDA graph begin. backend=breakable, num_tokens=[4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], avail mem={:.2} GB",
            avail_after + 0.94
        ));
        log::sglang(&format!("Capture target prefill CUDA graph end. elapsed=23.90 s, mem usage=0.83 GB, avail mem={:.2} GB.", avail_after + 0.11));
        log::sglang(&format!(
            "Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem={:.2} GB",
            avail_after + 0.11
        ));
        log::sglang(&format!("Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 12, 16, 24, 32], elapsed=1.11 s, mem usage=0.11 GB, avail mem={avail_after:.2} GB."));
    }
    log::sglang(&format!(
        "max_total_num_tokens={tokens}, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests={running_cap}, context_len={context_len}, {mem_word}={avail_after:.2} GB"));
    if !scheduler.wait_ready() {
        return Ok(1);
    }
    // The longest prompt the pool takes (the server keeps 5 tokens of room); SGLang's own
    // warm-up request must fit it, or the start fails after "startup complete".
    let max_input = context_len.min(tokens).saturating_sub(1).saturating_sub(5);
    let graph_word = if cpu { "cpu graph" } else { "cuda graph" };
    let graphs_on = !disable_cg;
    let pid = std::process::id();
    let rt = server::runtime()?;
    let children = vec![scheduler.pid(), detok.pid()];
    let code = rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let ecfg = EngineCfg {
            policy: Policy::Sglang,
            blocks: tokens,
            block_size: page_size,
            state_blocks: 0,
            max_running: running_cap,
            step_base_s: preset.step_base_s,
            step_per_seq_s: preset.step_per_seq_s,
            prefill_per_token_s: preset.prefill_per_token_s,
            speed,
            prefix_caching: !a.has("disable-radix-cache"),
            throttle: faults.gpu_throttle,
            warmup_cost_s: faults.warmup_cost,
        };
        let engine = sched::start(
            ecfg,
            Box::new(move |n| notice(n, graph_word, graphs_on)),
        );
        let srv = Arc::new(Server {
            kind: Kind::Sglang,
            style: Style::Sglang,
            engine: engine.clone(),
            served_name: served,
            model_path: model.clone(),
            max_model_len: context_len,
            lowers_max_tokens: false,
            version: DEFAULT_VERSION.to_string(),
            start_unix: log::unix_now(),
            metrics: Box::new(crate::sglang_metrics::exposition),
            server_info: server_args.clone(),
            metrics_enabled: enable_metrics,
            healthy: AtomicBool::new(false),
            max_queued: None,
            on_reject: None,
            crash_at: faults.crash_at,
            on_crash: Some(Box::new(move |_| {
                log::sglang("Scheduler hit an exception: Traceback (most recent call last):");
                for l in crate::bootfail::crash_lines().into_iter().skip(1) {
                    log::raw(&l);
                }
                log::sglang(
                    "Received sigquit from a child process. It usually means the child failed.",
                );
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
            trt_iter_json: false,
            pid: children[0],
            api: Default::default(),
            vocab: Default::default(),
            in_flight: Default::default(),
        });
        tokio::spawn(http::serve(listener, srv.clone()));
        log::sglang(&format!("INFO:     Started server process [{pid}]"));
        log::sglang("INFO:     Waiting for application startup.");
        log::sglang("INFO:     Application startup complete.");
        log::sglang(&format!(
            "INFO:     Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)"
        ));
        // The warm-up request SGLang sends itself before /health turns 200.
        let srv2 = srv.clone();
        let (refused_tx, mut refused) = tokio::sync::mpsc::unbounded_channel::<()>();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs_f64(1.0 / speed)).await;
            let peer: std::net::SocketAddr = "127.0.0.1:36487".parse().expect("addr");
            if WARM_UP_PROMPT > max_input {
                // Refused as too long: the start fails although the app said it was up.
                let why = format!("Input length ({WARM_UP_PROMPT} tokens) exceeds the maximum allowed length ({max_input} tokens). Use a shorter input or enable --allow-auto-truncate.");
                log::sglang(&format!("[http_server] Error: {why}"));
                srv2.done(&peer, "POST", "/generate", 400);
                log::sglang("Initialization failed. warmup error: Traceback (most recent call last):");
                log::raw("  File \"/sglang/srt/entrypoints/http_server.py\", line 2501, in _execute_server_warmup");
                log::raw("    assert res.status_code == 200, f\"{res.text}\"");
                log::raw(&format!("AssertionError: {{\"error\":{{\"message\":\"{why}\"}}}}"));
                log::raw("");
                let _ = refused_tx.send(());
                return;
            }
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            srv2.engine.submit(Submit {
                prompt: 6,
                prefix_blocks: Vec::new(),
                max_tokens: 8,
                eos_at: None,
                streaming: false,
                tx,
                arrived: Instant::now(),
            });
            while let Some(ev) = rx.recv().await {
                if matches!(ev, Event::Token { finish: Some(_) } | Event::Error(_)) {
                    break;
                }
            }
            srv2.done(&peer, "POST", "/generate", 200);
            log::sglang("The server is fired up and ready to roll!");
            srv2.healthy.store(true, Ordering::SeqCst);
        });
        let sig = tokio::select! {
            s = server::wait_stop() => s,
            Some(()) = refused.recv() => {
                log::sglang(&format!("kill_process_tree called: parent_pid={pid}, include_parent=True, pid={pid}"));
                kill_tree_and_self(&children);
            }
        };
        if sig == "SIGTERM" {
            stop_on_sigterm(&children, speed).await;
        }
        for c in &children {
            procs::kill(*c, libc::SIGTERM);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        anyhow::Ok(0)
    })?;
    Ok(code)
}

/// A start that fails in the scheduler while it sizes the pools: its traceback, then the
/// launcher's SIGQUIT handler takes the tree down (itself too, with SIGKILL).
fn fail_start(scheduler: &mut procs::Spawned, detok: u32, lines: &[&str]) -> i32 {
    log::sglang("Scheduler hit an exception: Traceback (most recent call last):");
    for l in lines {
        log::raw(l);
    }
    log::raw("");
    log::sglang("Received sigquit from a child process. It usually means the child failed.");
    let pid = std::process::id();
    log::sglang(&format!(
        "kill_process_tree called: parent_pid={pid}, include_parent=True, pid={pid}"
    ));
    procs::kill(detok, libc::SIGKILL);
    procs::kill(scheduler.pid(), libc::SIGKILL);
    let _ = scheduler.child.wait();
    kill_tree_and_self(&[]);
}

/// SIGKILL to the children, then to the launcher itself (`kill_process_tree` with
/// `include_parent=True`): the launcher's exit is "killed by SIGKILL".
fn kill_tree_and_self(children: &[u32]) -> ! {
    for c in children {
        procs::kill(*c, libc::SIGKILL);
    }
    procs::kill(std::process::id(), libc::SIGKILL);
    // SIGKILL cannot be caught; this is not reached.
    std::process::exit(137)
}

/// SGLang 0.5.23's stop on SIGTERM, as the real one logs it: it reads like a crash (the
/// scheduler "crashed with exit code -15", SIGQUIT) and ends with the launcher killing its
/// tree and itself. The children got the SIGTERM with their group.
async fn stop_on_sigterm(children: &[u32], speed: f64) -> ! {
    let pid = std::process::id();
    log::sglang("SIGTERM received. signum=None frame=None. Draining requests and shutting down...");
    if let Some(&sched) = children.first() {
        procs::kill(sched, libc::SIGTERM);
        log::sglang(&format!(
            "Subprocess scheduler_0 (pid={sched}) crashed with exit code -15. Triggering SIGQUIT for cleanup..."
        ));
    }
    log::sglang("SIGQUIT received. signum=None, frame=None. It usually means one child failed.");
    log::sglang("Sleeping 5 seconds before crash diagnostics to let GPU activity settle.");
    tokio::time::sleep(Duration::from_secs_f64(5.0 / speed.max(1.0))).await;
    log::sglang("No live scheduler processes found; skipping py-spy and CUDA coredump.");
    log::sglang(&format!(
        "kill_process_tree called: parent_pid={pid}, include_parent=True, pid={pid}"
    ));
    kill_tree_and_self(children)
}

/// The scheduler's log lines; `graph` is the batch lines' graph word (`cuda graph`,
/// `cpu graph`), `graphs_on` whether batches run as graphs.
fn notice(n: Notice, graph: &str, graphs_on: bool) {
    let on = if graphs_on { "True" } else { "False" };
    match n {
        Notice::Preempted { freed_tokens, .. } => log::sglang(&format!(
            "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: {freed_tokens}, #new_token_ratio: 0.7000 -> 1.0000")),
        Notice::Prefill { new_seqs, new_tokens, cached_tokens, running, waiting, usage } => log::sglang(&format!(
            "Prefill batch, #new-seq: {new_seqs}, #new-token: {}, #cached-token: {cached_tokens}, token usage: {usage:.2}, #running-req: {running}, #queue-req: {waiting}, #pending-token: 0, {graph}: {on}, input throughput (token/s): 0.00", new_tokens - cached_tokens)),
        Notice::Decode { running, tokens, usage, waiting, gen_per_s } => log::sglang(&format!(
            "Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2}, {graph}: {on}, gen throughput (token/s): {gen_per_s:.2}, #queue-req: {waiting}")),
        // A batch size met for the first time: its CUDA graph is captured now.
        Notice::WarmUp { batch, seconds } => {
            log::sglang(&format!("Capture cuda graph begin. This can take up to several minutes. bs=[{batch}], avail mem=1.20 GB"));
            log::sglang(&format!("Capture cuda graph end. Time elapsed: {seconds:.2} s. mem usage=0.05 GB. avail mem=1.15 GB."));
        }
    }
}
