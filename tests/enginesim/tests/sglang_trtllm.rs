//! The simulated SGLang and TensorRT-LLM: their endpoints, metric quirks and children.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn sglang_metrics_only_with_flag_and_health_after_warmup() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "sgl-nometrics",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    assert_eq!(get(port, "/metrics").unwrap().0, 404);
    assert_eq!(get(port, "/version").unwrap().0, 404);
    let (st, info) = get(port, "/get_server_info").unwrap();
    assert_eq!(st, 200);
    assert!(info.contains("\"version\""), "{info}");
    drop(s);

    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "sgl",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--enable-metrics",
            "--max-running-requests",
            "4",
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let log = s.log_text();
    assert!(log.contains("server_args={'model_path': '/root/models/Qwen3-8B'"));
    assert!(log.contains("The server is fired up and ready to roll!"));
    assert!(log.contains("KV Cache is allocated. dtype: torch.bfloat16, #tokens: "));
    let kids: Vec<String> = children(s.child.id())
        .iter()
        .filter_map(|k| cmdline(*k).first().cloned())
        .collect();
    assert!(
        kids.contains(&"sglang::scheduler".to_string())
            && kids.contains(&"sglang::detokenizer".to_string()),
        "{kids:?}"
    );
    assert!(s.nvidia_smi_used() > 800);
    let before = metrics(port, "/metrics");
    assert_eq!(
        analyzer::Engine::from_metric_names(before.names()),
        Some(analyzer::Engine::Sglang)
    );
    assert!(before.has("sglang:num_retracted_reqs"));
    assert!(!before.has("sglang:num_retracted_requests_total"));
    // The warm-up request is counted as a non-streamed one, as in the fixtures.
    assert_eq!(
        before.total("sglang:num_requests_total", &[("is_streaming", "false")]),
        Some(1.0)
    );
    assert!(
        log.contains("\"GET /health HTTP/1.1\" 503") || before.has("sglang:http_responses_total")
    );
    let (st, body) = post(
        port,
        "/v1/completions",
        r#"{"model":"m","prompt":"a b c","max_tokens":10,"stream":true}"#,
    )
    .unwrap();
    assert_eq!(st, 200);
    assert!(body.contains("data: [DONE]"));
    let after = metrics(port, "/metrics");
    assert_eq!(
        after.total("sglang:num_requests_total", &[("is_streaming", "true")]),
        Some(1.0)
    );
    assert_eq!(
        after.total(
            "sglang:generation_tokens_total",
            &[("is_streaming", "true")]
        ),
        Some(10.0)
    );
}

#[test]
fn sglang_retracts_and_logs_it() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "sgl-retract",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--enable-metrics",
            "--max-total-tokens",
            "2000",
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let hs: Vec<_> = (0..6)
        .map(|_| {
            std::thread::spawn(move || {
                post(
                    port,
                    "/v1/completions",
                    r#"{"model":"m","prompt":"a b c d","max_tokens":600,"ignore_eos":true}"#,
                )
                .unwrap()
                .0
            })
        })
        .collect();
    for h in hs {
        assert_eq!(h.join().unwrap(), 200);
    }
    let m = metrics(port, "/metrics");
    assert!(total(&m, "sglang:num_retracted_requests_total") > 0.0);
    assert!(s
        .log_text()
        .contains("KV cache pool is full. Retract requests. #retracted_reqs: 1"));
    let u = total(&m, "sglang:token_usage");
    assert_eq!((u * 100.0).round() / 100.0, u);
}

fn trt(name: &str, yaml: &str, extra: &[&str]) -> (Sim, u16) {
    let port = free_port();
    let dir = tmpdir(&format!("{name}-cfg"));
    let cfg = dir.join("llm_api.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let p = port.to_string();
    let mut args = vec![
        "serve",
        "/root/models/Qwen3-8B",
        "--config",
        cfg.to_str().unwrap(),
        "--host",
        "127.0.0.1",
        "--port",
        &p,
        "--sim-speed",
        "50",
    ];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let argr: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = Sim::start(name, "trtllm-serve", &argr, port);
    s.wait_ready("/health");
    (s, port)
}

#[test]
fn trtllm_json_metrics_prometheus_path_and_lagging_gauges() {
    let (s, port) = trt(
        "trt",
        "return_perf_metrics: true\nenable_iter_perf_stats: true\nmax_batch_size: 32\n",
        &[],
    );
    let (st, j) = get(port, "/metrics").unwrap();
    assert_eq!(st, 200);
    assert!(j.trim_start().starts_with('['), "{j}");
    let before = metrics(port, "/prometheus/metrics");
    assert_eq!(
        analyzer::Engine::from_metric_names(before.names()),
        Some(analyzer::Engine::Trtllm)
    );
    assert!(before.has("trtllm_num_requests_running") && before.has("trtllm_num_paused_requests"));
    assert!(!before.has("trtllm_request_success_total"));
    for _ in 0..2 {
        assert_eq!(
            post(
                port,
                "/v1/completions",
                r#"{"model":"m","prompt":"a b c","max_tokens":8}"#
            )
            .unwrap()
            .0,
            200
        );
    }
    let after = metrics(port, "/prometheus/metrics");
    assert_eq!(
        after.total(
            "trtllm_request_success_total",
            &[("finished_reason", "length")]
        ),
        Some(2.0)
    );
    assert_eq!(
        total(&after, "trtllm_generation_tokens_total")
            - total(&before, "trtllm_generation_tokens_total"),
        16.0
    );
    // Frozen at the last completion: the finishing request still counts as running.
    assert_eq!(total(&after, "trtllm_num_requests_running"), 1.0);
    let kids: Vec<Vec<String>> = children(s.child.id()).iter().map(|k| cmdline(*k)).collect();
    assert!(kids.iter().any(|c| c == &["prte"]), "{kids:?}");
    assert!(
        kids.iter()
            .any(|c| c == &["python", "-m", "mpi4py.futures.server"]),
        "{kids:?}"
    );
    let log = s.log_text();
    assert!(log.contains("[TensorRT-LLM] TensorRT LLM version: 1.3.0rc29"));
    assert!(log.contains("tokens per block=32"));
    assert!(log.contains("\"POST /v1/completions HTTP/1.1\" 200 OK"));
}

#[test]
fn trtllm_without_iter_stats_has_no_gauges_and_max_utilization_pauses() {
    let (_s, port) = trt("trt-noiter", "return_perf_metrics: true\n", &[]);
    let m = metrics(port, "/prometheus/metrics");
    assert!(!m.has("trtllm_num_requests_running"));
    assert!(m.has("trtllm_generation_tokens_total"));
    drop(_s);

    let yaml = "return_perf_metrics: true\nenable_iter_perf_stats: true\nscheduler_config:\n  capacity_scheduler_policy: MAX_UTILIZATION\n";
    let (s, port) = trt("trt-pause", yaml, &["--sim-kv-blocks", "40"]);
    let hs: Vec<_> = (0..6)
        .map(|_| {
            std::thread::spawn(move || {
                post(
                    port,
                    "/v1/completions",
                    r#"{"model":"m","prompt":"a b c d","max_tokens":300,"ignore_eos":true}"#,
                )
                .unwrap()
                .0
            })
        })
        .collect();
    for h in hs {
        assert_eq!(h.join().unwrap(), 200);
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(s
        .log_text()
        .contains("MaxUtilizationScheduler: request ID "));
    assert!(s.log_text().contains(" -> pause"));
}

/// SGLang's scheduler refreshes its gauges only at its log points (a prefill line, every
/// 40th decode step, going idle): while one request runs, the running gauge still shows
/// what the prefill line showed (none running yet) until the first decode line, then 1,
/// and 0 again once it is idle.
#[test]
fn sglang_gauges_move_at_the_schedulers_log_points() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "sgl-logpoints",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--enable-metrics",
            "--sim-speed",
            "2",
        ],
        port,
    );
    s.wait_ready("/health");
    let running = || total(&metrics(port, "/metrics"), "sglang:num_running_reqs");
    let decode_lines = |s: &Sim| s.log_text().matches("Decode batch").count();
    let before = decode_lines(&s);
    let h = std::thread::spawn(move || {
        post(
            port,
            "/v1/completions",
            r#"{"model":"m","prompt":"a b c","max_tokens":300}"#,
        )
        .unwrap()
        .0
    });
    assert!(wait_until(10, || s
        .log_text()
        .matches("Prefill batch")
        .count()
        >= 2));
    // Running, but the last log point (its prefill line) showed none running. The scrape
    // comes first: a decode line is logged before its gauges change, so none logged after
    // the scrape means the scrape saw the prefill line's values.
    let at_prefill = running();
    assert_eq!(
        decode_lines(&s),
        before,
        "the first decode line came too soon"
    );
    assert_eq!(at_prefill, 0.0);
    assert!(wait_until(10, || decode_lines(&s) > before));
    assert_eq!(running(), 1.0);
    assert_eq!(h.join().unwrap(), 200);
    assert_eq!(running(), 0.0);
}
