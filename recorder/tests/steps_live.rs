//! The single-step commands against a live simulated server: `snapshot`, `watch` and
//! `probe`, including admission-control rejections in the burst.

mod common;
use common::*;

use std::process::Stdio;

use analyzer::json::Json;

/// A simulated vLLM, stopped and reaped when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A simulated vLLM in this world, ready.
fn vllm(w: &World, port: u16, extra: &[&str]) -> Server {
    let log = std::fs::File::create(w.dir.join(format!("server-{port}.log"))).unwrap();
    let mut c = w.cmd(w.bin.join("vllm"));
    c.args([
        "serve",
        "/models/Qwen3-8B",
        "--port",
        &port.to_string(),
        "--sim-speed",
        "60",
    ])
    .args(extra)
    .stdout(log.try_clone().unwrap())
    .stderr(log)
    .stdin(Stdio::null());
    let child = c.spawn().unwrap();
    let path = w.dir.join(format!("server-{port}.log"));
    assert!(wait_until(60, || std::fs::read_to_string(&path)
        .unwrap_or_default()
        .contains("Application startup complete")));
    Server(child)
}

#[test]
fn snapshot_watch_and_probe_one_step_each() {
    let w = World::new("steps");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/");
    let _server = vllm(&w, port, &[]);

    let mut c = w.recorder();
    c.args(["snapshot", &base, "-o", "sub/before.snapshot.json"]);
    let out = run_bounded(c, 30);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    assert!(
        so.contains(" samples, scrape 0.0") && so.ends_with("-> sub/before.snapshot.json\n"),
        "{so}"
    );
    let snap = analyzer::snapshot::Snapshot::read(
        "s",
        &std::fs::read(w.dir.join("sub/before.snapshot.json")).unwrap(),
    )
    .unwrap();
    assert!(snap.url.ends_with("/metrics") && snap.t_mono_ns.is_some());

    // Another engine named: refused, nothing written.
    let mut c = w.recorder();
    c.args(["snapshot", &base, "-o", "x.json", "--engine", "sglang"]);
    let out = run_bounded(c, 30);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--engine sglang names SGLang"),
        "{}",
        text(&out.stderr)
    );
    assert!(!w.dir.join("x.json").exists());

    let mut c = w.recorder();
    c.args([
        "watch",
        &base,
        "-o",
        "w.series.jsonl",
        "--interval",
        "0.1",
        "--duration",
        "1.5",
    ]);
    let out = run_bounded(c, 30);
    assert_eq!(out.status.code(), Some(0));
    let series =
        analyzer::series::Series::read("w", &std::fs::read(w.dir.join("w.series.jsonl")).unwrap())
            .unwrap();
    assert!(series.rows.len() >= 5, "{} rows", series.rows.len());
    assert!(series
        .rows
        .iter()
        .all(|r| r.latency_s.is_some() && r.running.is_some()));
    assert_eq!(
        text(&out.stdout),
        format!("{} samples -> w.series.jsonl\n", series.rows.len())
    );

    let mut c = w.recorder();
    c.args(["probe", &base, "-o", "p/probe.json", "--json"]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let arr = analyzer::json::parse(&text(&out.stdout)).unwrap();
    let r = &arr.as_array().unwrap()[0];
    assert_eq!(r.get("id").and_then(Json::as_str), Some("T7"));
    assert_eq!(r.get("status").and_then(Json::as_str), Some("pass"));
    let doc = json(&w.dir.join("p/probe.json"));
    assert_eq!(
        doc.get("burst").and_then(Json::as_array).map(|b| b.len()),
        Some(8)
    );
}

#[test]
fn nothing_listening_fails_snapshot_and_probe() {
    let w = World::new("nothing");
    let base = format!("http://127.0.0.1:{}", free_port());
    let mut c = w.recorder();
    c.args(["snapshot", &base, "-o", "s.json"]);
    let out = run_bounded(c, 30);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(
        e.starts_with(&format!(
            "inferlint: no vLLM, SGLang or TensorRT-LLM metrics at {base} ("
        )),
        "{e}"
    );
    assert!(
        e.contains("for vLLM, ")
            && e.contains("; for SGLang, ")
            && e.contains("; for TensorRT-LLM, "),
        "{e}"
    );
    let mut c = w.recorder();
    c.args(["probe", &base]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("cannot list models: "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_burst_past_the_queue_limit_is_rejected_not_failed() {
    let w = World::new("capped");
    let port = free_port();
    let _server = vllm(
        &w,
        port,
        &["--max-num-seqs", "2", "--max-num-queued-reqs", "2"],
    );
    let mut c = w.recorder();
    c.args([
        "probe",
        &format!("http://127.0.0.1:{port}"),
        "--max-tokens",
        "64",
        "-o",
        "probe.json",
    ]);
    let out = run_bounded(c, 60);
    let so = text(&out.stdout);
    let doc = json(&w.dir.join("probe.json"));
    let rejected = doc
        .get("burst")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .filter(|r| r.get("status").and_then(Json::as_i64_trunc) == Some(503))
        .count();
    assert!(rejected > 0, "{so}");
    assert_eq!(out.status.code(), Some(0), "{so}");
    assert!(
        so.contains(&format!(
            "{rejected} rejected by admission control, server alive"
        )),
        "{so}"
    );
}
