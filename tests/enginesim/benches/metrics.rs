//! `cargo bench -p enginesim`: how fast the simulated vLLM answers `/metrics` (goal: under
//! 5 ms), idle and while 64 streamed requests run.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::{free_port, get, post, Sim};

fn time_metrics(port: u16, n: usize) -> (f64, f64) {
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        get(port, "/metrics").expect("metrics");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    (ms[n / 2], ms[n * 99 / 100])
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = if quick { 20 } else { 500 };
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "bench-metrics",
        "vllm",
        &[
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &p,
            "--sim-speed",
            "5",
        ],
        port,
    );
    s.wait_ready("/health");
    let (med, p99) = time_metrics(port, n);
    println!("/metrics idle:            median {med:.2} ms, p99 {p99:.2} ms ({n} requests)");
    let load: Vec<_> = (0..64)
        .map(|_| {
            std::thread::spawn(move || {
                let _ = post(
                    port,
                    "/v1/completions",
                    r#"{"model":"/models/Qwen3-8B","prompt":"a b c d","max_tokens":200,"ignore_eos":true}"#,
                );
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (med, p99) = time_metrics(port, n);
    println!("/metrics with 64 running: median {med:.2} ms, p99 {p99:.2} ms ({n} requests)");
    for h in load {
        let _ = h.join();
    }
}
