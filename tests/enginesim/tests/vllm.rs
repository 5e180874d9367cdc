//! The simulated vLLM: metrics that move, the engine child and its orphaning, the KV
//! shape of the 43 × 784-token fixture, and the bench client against it.

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn metrics_move_and_endpoints_answer() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-basic",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--max-num-seqs",
            "8",
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let (st, models) = get(port, "/v1/models").unwrap();
    assert_eq!(st, 200);
    assert!(models.contains("\"/models/Qwen3-8B\""), "{models}");
    let (st, ver) = get(port, "/version").unwrap();
    assert_eq!((st, ver.contains("0.30.0")), (200, true));
    let before = metrics(port, "/metrics");
    assert_eq!(
        analyzer::Engine::from_metric_names(before.names()),
        Some(analyzer::Engine::Vllm)
    );
    assert!(before.has("vllm:num_preemptions_created"));
    let info = before.info("vllm:cache_config_info", &[]).unwrap();
    assert!(info
        .iter()
        .any(|(k, v)| k == "num_gpu_blocks" && v.chars().all(|c| c.is_ascii_digit())));
    for _ in 0..3 {
        let (st, body) = post(
            port,
            "/v1/completions",
            r#"{"model":"/models/Qwen3-8B","prompt":"one two three four","max_tokens":16}"#,
        )
        .unwrap();
        assert_eq!(st, 200, "{body}");
        assert!(body.contains("\"completion_tokens\":16"), "{body}");
    }
    let after = metrics(port, "/metrics");
    let d = |n: &str| total(&after, n) - total(&before, n);
    assert_eq!(d("vllm:generation_tokens_total"), 48.0);
    assert_eq!(d("vllm:prompt_tokens_total"), 12.0);
    assert_eq!(d("vllm:request_success_total"), 3.0);
    assert_eq!(d("vllm:e2e_request_latency_seconds_count"), 3.0);
    assert!(s
        .log_text()
        .contains("\"POST /v1/completions HTTP/1.1\" 200 OK"));
}

fn engine_core_of(s: &Sim) -> u32 {
    let kids = children(s.child.id());
    *kids
        .iter()
        .find(|k| cmdline(**k).first().map(String::as_str) == Some("VLLM::EngineCore"))
        .expect("engine core child")
}

#[test]
fn engine_child_is_orphaned_by_sigkill_and_stopped_by_sigterm() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-procs",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let core = engine_core_of(&s);
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{core}/comm"))
            .unwrap()
            .trim(),
        "VLLM::EngineCor"
    );
    assert!(s.nvidia_smi_used() > 800);
    // SIGKILL of the API server alone: the engine child stays, holding the card.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGKILL) };
    let _ = s.child.wait();
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(core), "engine core died with its parent");
    assert!(s.nvidia_smi_used() > 800);
    unsafe { libc::kill(core as i32, libc::SIGTERM) };
    assert!(wait_until(5, || !alive(core)));
    assert!(wait_until(5, || s.nvidia_smi_used() == 0));

    // SIGTERM of the server: both go, with [shutdown] lines, and the card reads idle.
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-term",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let core = engine_core_of(&s);
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let pid = s.child.id();
    assert!(
        wait_until(10, || matches!(s.child.try_wait(), Ok(Some(_)))),
        "server did not stop"
    );
    assert!(wait_until(5, || !alive(core)));
    assert!(!alive(pid));
    assert_eq!(s.nvidia_smi_used(), 0);
    assert!(s
        .log_text()
        .contains("[shutdown] EngineCore: trigger received signal=SIGTERM"));
}

#[test]
fn hybrid_pool_shape_preempts_and_bench_counts_agree() {
    let port = free_port();
    let p = port.to_string();
    let model = "/models/Qwen3.8-27B-W4A16-AutoRound";
    let mut s = Sim::start(
        "vllm-shape",
        "vllm",
        &[
            "serve",
            model,
            "--port",
            &p,
            "--max-model-len",
            "16384",
            "--served-model-name",
            "qwen38",
            "--gpu-memory-utilization",
            "0.93",
            "--max-num-seqs",
            "32",
            "--sim-kv-blocks",
            "43",
            "--sim-block-size",
            "784",
            "--sim-hybrid",
            "--sim-speed",
            "40",
        ],
        port,
    );
    s.wait_ready("/health");
    let log = s.log_text();
    assert!(log.contains("Setting attention block size to 784 tokens"));
    assert!(log.contains("GPU KV cache size: 33,712 tokens"), "{log}");
    let before = metrics(port, "/metrics");
    let out = s.dir.join("run");
    let bench = Command::new(s.dir.join("bin/vllm"))
        .args([
            "bench",
            "serve",
            "--model",
            model,
            "--served-model-name",
            "qwen38",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
            "--dataset-name",
            "random",
            "--random-input-len",
            "88",
            "--random-output-len",
            "1000",
            "--ignore-eos",
            "--num-prompts",
            "32",
            "--max-concurrency",
            "32",
            "--save-result",
            "--result-dir",
        ])
        .arg(&out)
        .args(["--result-filename", "bench.json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Sample the gauges while the load runs, as the recorder's series does.
    let mut samples = Vec::new();
    let t0 = std::time::Instant::now();
    let mut bench = bench;
    while bench.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(120), "bench too slow");
        let m = metrics(port, "/metrics");
        samples.push((
            total(&m, "vllm:num_requests_running"),
            total(&m, "vllm:kv_cache_usage_perc"),
            total(&m, "vllm:num_requests_waiting"),
        ));
        std::thread::sleep(Duration::from_millis(10));
    }
    let load = bench.wait_with_output().unwrap();
    let load = String::from_utf8_lossy(&load.stdout).to_string();
    assert!(
        load.contains("Initial test run completed. Starting main benchmark run..."),
        "{load}"
    );
    let after = metrics(port, "/metrics");
    let peak = samples.iter().map(|x| x.0).fold(0.0, f64::max);
    assert!((8.0..=11.0).contains(&peak), "peak running {peak}");
    // The ceiling falls as outputs grow: with the pool full, fewer run than at the peak.
    let low_full = samples
        .iter()
        .filter(|x| x.1 >= 0.9 && x.2 > 0.0)
        .map(|x| x.0)
        .fold(f64::MAX, f64::min);
    assert!(low_full < peak, "no falling ceiling: {samples:?}");
    // Every reading is a whole number of blocks out of 42 (the null block excluded).
    for (_, u, _) in &samples {
        let b = u * 42.0;
        assert!((b - b.round()).abs() < 1e-6, "usage {u} is not k/42");
    }
    let d = |n: &str| total(&after, n) - total(&before, n);
    assert!(d("vllm:num_preemptions_total") > 0.0);
    assert_eq!(d("vllm:generation_tokens_total"), 33000.0);
    assert_eq!(d("vllm:request_success_total"), 33.0);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    assert_eq!(r["completed"], 32);
    assert_eq!(r["failed"], 0);
    assert_eq!(r["total_output_tokens"], 32000);
    assert_eq!(r["total_input_tokens"], 2816);
    assert_eq!(r["max_concurrency"], 32);
    for k in [
        "duration",
        "output_throughput",
        "mean_ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "mean_tpot_ms",
    ] {
        assert!(r[k].as_f64().unwrap() > 0.0, "{k}");
    }
}

#[test]
fn admission_control_rejects_past_the_queue_limit() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-capped",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--max-num-seqs",
            "2",
            "--max-num-queued-reqs",
            "2",
            "--sim-speed",
            "5",
        ],
        port,
    );
    s.wait_ready("/health");
    let hs: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                post(
                    port,
                    "/v1/completions",
                    r#"{"model":"m","prompt":"a b","max_tokens":64,"ignore_eos":true}"#,
                )
                .unwrap()
                .0
            })
        })
        .collect();
    let codes: Vec<u16> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(codes.contains(&503) && codes.contains(&200), "{codes:?}");
    let log = s.log_text();
    assert!(log.contains("Request queue full - rejecting request"));
    assert!(log.contains("vllm.exceptions.QueueOverflowError: The engine is currently busy"));
}

#[test]
fn streams_256_at_once() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-256",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--max-num-seqs",
            "256",
            "--sim-speed",
            "20",
        ],
        port,
    );
    s.wait_ready("/health");
    let out = s.dir.join("run");
    let st = Command::new(s.dir.join("bin/vllm"))
        .args([
            "bench",
            "serve",
            "--model",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--random-input-len",
            "32",
            "--random-output-len",
            "64",
            "--ignore-eos",
            "--num-prompts",
            "256",
            "--max-concurrency",
            "256",
            "--ready-check-timeout-sec",
            "0",
            "--save-result",
            "--result-filename",
            "b.json",
            "--result-dir",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("b.json")).unwrap()).unwrap();
    assert_eq!(r["completed"], 256);
    assert_eq!(r["total_output_tokens"], 256 * 64);
    assert!(r["max_concurrent_requests"].as_u64().unwrap() > 200);
}

#[test]
fn an_api_server_kept_alive_after_its_engine_died_fails_every_request_and_logs_it() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start_with(
        "vllm-keep-alive",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
        ],
        port,
        &[("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH", "1")],
    );
    // Without a crash the variable changes nothing.
    s.wait_ready("/health");
    let ask = r#"{"model":"m","prompt":"a","max_tokens":4}"#;
    assert_eq!(post(port, "/v1/completions", ask).unwrap().0, 200);
    drop(s);

    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start_with(
        "vllm-keep-alive-crash",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--sim-crash-at-request",
            "2",
        ],
        port,
        &[("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH", "1")],
    );
    s.wait_ready("/health");
    assert_eq!(post(port, "/v1/completions", ask).unwrap().0, 200);
    assert_eq!(post(port, "/v1/completions", ask).unwrap().0, 500);
    // Well past the moment a server not kept alive exits, it still answers: 500s, a
    // failing health check, and its metrics.
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(matches!(s.child.try_wait(), Ok(None)), "it lives on");
    for _ in 0..3 {
        assert_eq!(post(port, "/v1/completions", ask).unwrap().0, 500);
    }
    assert_eq!(get(port, "/health").unwrap().0, 503);
    assert_eq!(get(port, "/metrics").unwrap().0, 200);
    let log = s.log_text();
    let dead = log
        .find("EngineDeadError")
        .expect("the fatal error is logged");
    let after = &log[dead..];
    // The crashing request's own line, then the three sent after it.
    assert_eq!(
        after
            .matches("\"POST /v1/completions HTTP/1.1\" 500")
            .count(),
        4,
        "request lines follow the fatal error:\n{log}"
    );
}

#[test]
fn a_stalled_metrics_endpoint_answers_late_or_never() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-metrics-late",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--sim-metrics-stall-after",
            "1",
            "--sim-metrics-stall-for",
            "0.6",
        ],
        port,
    );
    s.wait_ready("/health");
    let t0 = std::time::Instant::now();
    assert_eq!(get(port, "/metrics").unwrap().0, 200);
    assert!(t0.elapsed().as_secs_f64() < 0.5);
    let t1 = std::time::Instant::now();
    assert_eq!(get(port, "/metrics").unwrap().0, 200);
    assert!(t1.elapsed().as_secs_f64() >= 0.6, "{:?}", t1.elapsed());
}

#[test]
fn crash_on_first_request_and_failed_start() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-crash",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--sim-crash-on-first-request",
        ],
        port,
    );
    s.wait_ready("/health");
    let (st, _) = post(
        port,
        "/v1/completions",
        r#"{"model":"m","prompt":"a","max_tokens":4}"#,
    )
    .unwrap();
    assert_eq!(st, 500);
    assert!(wait_until(5, || matches!(s.child.try_wait(), Ok(Some(_)))));
    assert!(s
        .log_text()
        .contains("torch.AcceleratorError: CUDA error: an illegal memory access was encountered"));

    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "vllm-fail",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--sim-fail-start",
            "ld",
        ],
        port,
    );
    assert!(wait_until(10, || matches!(s.child.try_wait(), Ok(Some(_)))));
    assert_eq!(s.child.try_wait().unwrap().unwrap().code(), Some(1));
    let log = s.log_text();
    assert!(log.contains("/usr/bin/ld: cannot find -lcudart"));
    assert!(!log.contains("Application startup complete"));
}
