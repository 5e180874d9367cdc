//! The analyzer reads each simulated engine's boot log as that engine, with the facts the
//! simulator was configured with.

mod common;
use analyzer::Engine;
use common::*;

fn facts_of(name: &str, prog: &str, args: &[&str], port: u16) -> analyzer::bootlog::BootFacts {
    let mut s = Sim::start(name, prog, args, port);
    s.wait_ready("/health");
    analyzer::bootlog::read_facts(&s.log_text(), None)
}

#[test]
fn vllm_boot_facts() {
    let port = free_port();
    let p = port.to_string();
    let f = facts_of(
        "facts-vllm",
        "vllm",
        &[
            "serve",
            "/models/Qwen3.8-27B-W4A16-AutoRound",
            "--port",
            &p,
            "--max-num-seqs",
            "32",
            "--gpu-memory-utilization",
            "0.93",
            "--sim-speed",
            "50",
        ],
        port,
    );
    assert_eq!(f.engine, Some(Engine::Vllm));
    assert_eq!(f.vllm_version.as_deref(), Some("0.30.0"));
    assert_eq!(f.attention_block_size, Some(784));
    assert_eq!(f.kv_pool_tokens, Some(43 * 784));
    assert_eq!(f.available_kv_cache_gib, Some(2.09));
    assert_eq!(f.selected_backends, vec!["FLASH_ATTN".to_string()]);
    assert!(f.ready);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
}

#[test]
fn sglang_boot_facts() {
    let port = free_port();
    let p = port.to_string();
    let f = facts_of(
        "facts-sgl",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--max-running-requests",
            "32",
            "--max-total-tokens",
            "32096",
            "--sim-speed",
            "50",
        ],
        port,
    );
    assert_eq!(f.engine, Some(Engine::Sglang));
    assert_eq!(f.kv_pool_tokens, Some(32096));
    assert_eq!(f.running_cap, Some(32));
    assert_eq!(f.page_size, Some(1));
    assert!(f.ready);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
}

#[test]
fn trtllm_boot_facts() {
    let port = free_port();
    let dir = tmpdir("facts-trt-cfg");
    let cfg = dir.join("c.yaml");
    std::fs::write(
        &cfg,
        "return_perf_metrics: true\nenable_iter_perf_stats: true\nmax_batch_size: 32\n",
    )
    .unwrap();
    let p = port.to_string();
    let f = facts_of(
        "facts-trt",
        "trtllm-serve",
        &[
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
        ],
        port,
    );
    assert_eq!(f.engine, Some(Engine::Trtllm));
    assert_eq!(f.engine_version.as_deref(), Some("1.3.0rc29"));
    assert_eq!(f.page_size, Some(32));
    assert_eq!(f.running_cap, Some(32));
    assert!(f.ready);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
}
