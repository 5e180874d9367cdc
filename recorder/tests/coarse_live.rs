//! T24 recorded end to end against the engine simulator at its real speed: the same short
//! load read every 2 s (a reading or two inside it) fails or warns, and read every 0.1 s
//! passes.

mod common;
use common::*;

use analyzer::Status;

const MODEL: &str = "/root/models/Qwen3-8B";

/// Records `vllm bench serve` of 24 requests, 6 at once, read every `interval` s.
fn record(name: &str, interval: &str) -> (World, analyzer::Report) {
    let w = World::new(name);
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 --sim-speed 1");
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--interval",
        interval,
        "--serve",
        &serve,
        "--",
    ])
    .args([
        "vllm",
        "bench",
        "serve",
        "--model",
        MODEL,
        "--base-url",
        &base,
        "--dataset-name",
        "random",
        "--random-input-len",
        "88",
        "--random-output-len",
        "32",
        "--ignore-eos",
        "--num-prompts",
        "24",
        "--max-concurrency",
        "6",
    ]);
    let report = recorded_report(&w, c, 240);
    (w, report)
}

#[test]
fn t24_a_short_load_read_every_2_s_is_too_coarse_and_every_0_1_s_is_not() {
    let (_w, fine) = record("t24-fine", "0.1");
    let t24 = check_of(&fine, "T24");
    eprintln!("read every 0.1 s: T24 {:?}: {}", t24.status, t24.message);
    assert_eq!(t24.status, Status::Pass, "{}", t24.message);
    let (_w, coarse) = record("t24-coarse", "2");
    let t24 = check_of(&coarse, "T24");
    eprintln!("read every 2 s: T24 {:?}: {}", t24.status, t24.message);
    // One reading, or two, fall inside a load of a few seconds: too few to hold.
    assert_eq!(t24.status, Status::Fail, "{}", t24.message);
    assert!(
        t24.message.contains("read at a finer --interval"),
        "{}",
        t24.message
    );
    let n = t24
        .evidence_value("readings_in_load")
        .and_then(|j| j.as_f64())
        .unwrap();
    assert!(n < 10.0, "{}", t24.message);
    // T8 does not blame the server on readings that could not see the load.
    let t8 = check_of(&coarse, "T8");
    eprintln!("read every 2 s: T8 {:?}: {}", t8.status, t8.message);
    assert_ne!(t8.status, Status::Fail, "{}", t8.message);
}
