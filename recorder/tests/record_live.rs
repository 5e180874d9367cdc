//! `record` end to end against the engine simulator, one engine each, plus the failures
//! a live server shows best (a crash on the probe, a failing start, an engine mismatch,
//! missing metrics, a taken port, usage errors).

mod common;
use analyzer::rules::Tripwire;
use common::*;

use analyzer::json::Json;

const RUN_FILES: [&str; 11] = [
    "after.snapshot.json",
    "before.snapshot.json",
    "bench.json",
    "boot.log",
    "gate.json",
    "load.log",
    "manifest.json",
    "probe.json",
    "processes.json",
    "run.series.jsonl",
    "teardown.json",
];

fn analyzer_beside() -> bool {
    sibling("inferlint").is_file()
}

/// Checks the folder of a completed serve-mode run and returns the verdicts.
fn completed(
    w: &World,
    out: &std::process::Output,
    engine: &str,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let run = w.dir.join("run");
    let so = text(&out.stdout);
    let have = files(&run);
    for f in RUN_FILES {
        assert!(
            have.contains(&f.to_string()),
            "{f} missing from {have:?}\n{so}\n{}",
            text(&out.stderr)
        );
    }
    let m = json(&run.join("manifest.json"));
    let outcome = m.get("outcome").unwrap();
    assert_eq!(
        outcome.get("state").and_then(Json::as_str),
        Some("completed"),
        "{so}"
    );
    assert_eq!(
        m.get("engine").unwrap().get("key").and_then(Json::as_str),
        Some(engine)
    );
    assert_eq!(
        m.get("serve")
            .unwrap()
            .get("ownership")
            .and_then(Json::as_str),
        Some("verified")
    );
    assert_eq!(
        m.get("load")
            .unwrap()
            .get("exit")
            .and_then(Json::as_i64_trunc),
        Some(0)
    );
    let boot = m.get("boot_log").unwrap();
    let ready = boot.get("ready").and_then(Json::as_i64_trunc).unwrap();
    let stop = boot.get("stop").and_then(Json::as_i64_trunc).unwrap();
    assert!(0 < ready && ready <= stop);
    // The series: header naming the engine, rows with latency_s after t_mono_ns.
    let series = std::fs::read_to_string(run.join("run.series.jsonl")).unwrap();
    let mut lines = series.lines();
    assert!(lines
        .next()
        .unwrap()
        .contains(&format!("\"engine\": \"{engine}\"")));
    let row = lines.next().expect("a series row");
    assert!(
        row.starts_with("{\"t_wall\": ")
            && row.contains("\"t_mono_ns\": ")
            && row.contains(", \"latency_s\": "),
        "{row}"
    );
    // The gate and the stop both found a clear card; the server is gone.
    assert_eq!(
        json(&run.join("gate.json"))
            .get("clear")
            .and_then(Json::as_bool),
        Some(true)
    );
    let td = json(&run.join("teardown.json"));
    assert_eq!(td.get("clear").and_then(Json::as_bool), Some(true));
    let pid = m
        .get("serve")
        .unwrap()
        .get("pid")
        .and_then(Json::as_i64_trunc)
        .unwrap() as i32;
    assert!(!alive(pid));
    // The launched process's start time is kept for a later `teardown --run`.
    let ticks = m
        .get("serve")
        .and_then(|s| s.get("start_ticks"))
        .and_then(Json::as_i64_trunc);
    assert!(ticks.is_some_and(|t| t > 0), "serve.start_ticks: {ticks:?}");
    assert!(
        w.scoped_pids().is_empty(),
        "left running: {:?}",
        w.scoped_pids()
    );
    // The probe's stored outcome equals the shared rule on its replies.
    let probe: analyzer::docs::Probe = analyzer::docs::read(
        "probe.json",
        &std::fs::read(run.join("probe.json")).unwrap(),
    )
    .unwrap();
    let rule = analyzer::rules::t07_crash_after_ready::outcome(&probe);
    assert_eq!(probe.message.as_deref(), Some(rule.message.as_str()));
    assert!(rule.passed);
    if analyzer_beside() {
        assert!(run.join("results.json").is_file() && run.join("report.html").is_file());
    } else {
        eprintln!("note: target/debug/inferlint not built: the `inferlint analyze` hand-off was not exercised");
    }
    verdicts(&run).0
}

#[test]
fn vllm_hybrid_model_fails_t1_and_t8_as_on_the_gpu() {
    let w = World::new("vllm");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let model = "/models/Qwen3.8-27B-W4A16-AutoRound";
    let serve = format!(
        "vllm serve {model} --port {port} --max-num-seqs 32 --max-model-len 16384 --sim-kv-blocks 43 --sim-block-size 784 --sim-hybrid --sim-speed 40"
    );
    let mut c = w.recorder();
    c.args([
        "record", "-o", "run", "--title", "t", "--serve", &serve, "--",
    ])
    .args(bench(&base, model, 32, 1000));
    let out = run_bounded(c, 180);
    let v = completed(&w, &out, "vllm");
    for (id, want) in [
        ("T1", "fail"),
        ("T8", "fail"),
        ("T2", "pass"),
        ("T7", "pass"),
        ("T15", "pass"),
        ("T10", "pass"),
        ("T12", "pass"),
    ] {
        assert_eq!(status(&v, id), want, "{id}: {v:?}");
    }
    let code = out.status.code();
    assert_eq!(
        code,
        Some(if analyzer_beside() { 1 } else { 0 }),
        "{}",
        text(&out.stderr)
    );
    let so = text(&out.stdout);
    for line in [
        "== engine: vLLM (from the --serve command)",
        "== is the GPU free?",
        "== start the server (output in ",
        "== probe: one request, then 8 at once",
        "== load: vllm bench serve ",
        "== stop the server",
        "files:  run",
    ] {
        assert!(so.contains(line), "{line} not in\n{so}");
    }
    let m = json(&w.dir.join("run/manifest.json"));
    assert_eq!(
        m.get("requested")
            .unwrap()
            .get("from_load")
            .and_then(Json::as_i64_trunc),
        Some(32)
    );
    assert_eq!(
        m.get("load").unwrap().get("client").and_then(Json::as_str),
        Some("vllm")
    );
    assert_eq!(
        m.get("server_version")
            .unwrap()
            .get("endpoint")
            .and_then(Json::as_str),
        Some("/version")
    );
}

#[test]
fn sglang_end_to_end() {
    let w = World::new("sglang");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!("sglang serve --model-path /root/models/Qwen3-8B --port {port} --enable-metrics --sim-speed 60");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .args(bench(&base, "/root/models/Qwen3-8B", 8, 64));
    let out = run_bounded(c, 180);
    let v = completed(&w, &out, "sglang");
    for (id, want) in [
        ("T1", "pass"),
        ("T2", "pass"),
        ("T7", "pass"),
        ("T15", "pass"),
        ("T10", "pass"),
        ("T14", "not_applicable"),
    ] {
        assert_eq!(status(&v, id), want, "{id}: {v:?}");
    }
    let m = json(&w.dir.join("run/manifest.json"));
    assert_eq!(
        m.get("server_version")
            .unwrap()
            .get("endpoint")
            .and_then(Json::as_str),
        Some("/get_server_info")
    );
}

#[test]
fn trtllm_end_to_end() {
    let w = World::new("trtllm");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    std::fs::write(
        w.dir.join("llm_api.yaml"),
        "return_perf_metrics: true\nenable_iter_perf_stats: true\n",
    )
    .unwrap();
    let serve = format!("trtllm-serve serve /root/models/Qwen3-8B --config llm_api.yaml --port {port} --sim-speed 60");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .args(bench(&base, "/root/models/Qwen3-8B", 8, 64));
    let out = run_bounded(c, 180);
    let v = completed(&w, &out, "trtllm");
    for (id, want) in [
        ("T2", "pass"),
        ("T7", "pass"),
        ("T15", "pass"),
        ("T10", "pass"),
        ("T14", "not_applicable"),
    ] {
        assert_eq!(status(&v, id), want, "{id}: {v:?}");
    }
    let m = json(&w.dir.join("run/manifest.json"));
    assert_eq!(
        m.get("metrics_path").and_then(Json::as_str),
        Some("/prometheus/metrics")
    );
    assert!(json(&w.dir.join("run/before.snapshot.json"))
        .get("url")
        .and_then(Json::as_str)
        .unwrap()
        .ends_with("/prometheus/metrics"));
}

#[test]
fn crash_on_the_first_probe_request_reports_t7_and_stops_cleanly() {
    let w = World::new("crash");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!(
        "vllm serve /models/Qwen3-8B --port {port} --sim-speed 60 --sim-crash-on-first-request"
    );
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .args(bench(&base, "/models/Qwen3-8B", 4, 4000))
        // The client waits 600 s for a dead server by default.
        .args(["--ready-check-timeout-sec", "2"]);
    let out = run_bounded(c, 180);
    let run = w.dir.join("run");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let have = files(&run);
    for f in [
        "manifest.json",
        "gate.json",
        "boot.log",
        "probe.json",
        "processes.json",
        "teardown.json",
    ] {
        assert!(have.contains(&f.to_string()), "{f}: {have:?}");
    }
    // The dead engine fails the health check that ends the probe (the API server answers
    // its metrics a moment longer): the run stops there and the load never runs.
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    assert_eq!(o.get("state").and_then(Json::as_str), Some("problem"));
    assert_eq!(o.get("stage").and_then(Json::as_str), Some("before"));
    assert!(!have.contains(&"load.log".to_string()), "{have:?}");
    let v = verdicts(&run).0;
    assert!(status(&v, "T7").contains("fail"), "{v:?}");
    // T8 and T15 say the server was down rather than judging a load that never ran.
    assert_eq!(status(&v, "T8"), "unknown", "{v:?}");
    assert_eq!(status(&v, "T15"), "unknown", "{v:?}");
    assert!(
        text(&out.stdout).contains("[ T7] TRIPWIRE-FAILED  first request failed: "),
        "{}",
        text(&out.stdout)
    );
    assert!(
        w.scoped_pids().is_empty(),
        "left running: {:?}",
        w.scoped_pids()
    );
}

#[test]
fn a_failing_start_is_t12_with_its_cause() {
    let w = World::new("failstart");
    let port = free_port();
    let serve =
        format!("vllm serve /models/Qwen3-8B --port {port} --sim-speed 60 --sim-fail-start oom");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--", "true"]);
    let out = run_bounded(c, 120);
    let run = w.dir.join("run");
    assert_eq!(out.status.code(), Some(1));
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    assert_eq!(o.get("stage").and_then(Json::as_str), Some("ready"));
    let p = o.get("problem").and_then(Json::as_str).unwrap();
    assert!(
        p.starts_with("the server exited with code 1 before it was ready"),
        "{p}"
    );
    let have = files(&run);
    for f in ["gate.json", "boot.log", "processes.json", "teardown.json"] {
        assert!(have.contains(&f.to_string()), "{f}: {have:?}");
    }
    let (v, a) = verdicts(&run);
    assert_eq!(status(&v, "T12"), "fail", "{v:?}");
    let t12 = a
        .report
        .checks
        .iter()
        .find(|c| c.tripwire == Tripwire::UnexplainedFailure)
        .unwrap();
    assert!(
        t12.message.to_lowercase().contains("memory"),
        "{}",
        t12.message
    );
    // Exactly one stop: the launched process had already exited, so no signal was sent.
    let td = json(&run.join("teardown.json"));
    assert_eq!(td.get("server_exit").and_then(Json::as_i64_trunc), Some(1));
}

#[test]
fn engine_mismatch_stops_before_anything_is_touched() {
    let w = World::new("mismatch");
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--engine",
        "sglang",
        "--serve",
        "vllm serve m",
        "--",
        "true",
    ]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(files(&w.dir.join("run")), vec!["manifest.json"]);
    let m = json(&w.dir.join("run/manifest.json"));
    assert_eq!(
        m.get("outcome")
            .unwrap()
            .get("problem")
            .and_then(Json::as_str),
        Some("the engine named is SGLang, but the --serve command is vLLM's")
    );
}

#[test]
fn sglang_without_metrics_gets_the_flag_hint_and_no_load() {
    let w = World::new("nometrics");
    let port = free_port();
    let serve =
        format!("sglang serve --model-path /root/models/Qwen3-8B --port {port} --sim-speed 60");
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--no-probe",
        "--serve",
        &serve,
        "--",
        "true",
    ]);
    let out = run_bounded(c, 120);
    assert_eq!(out.status.code(), Some(1));
    let m = json(&w.dir.join("run/manifest.json"));
    let p = m
        .get("outcome")
        .unwrap()
        .get("problem")
        .and_then(Json::as_str)
        .unwrap()
        .to_string();
    assert!(
        p.starts_with(&format!(
            "no vLLM, SGLang or TensorRT-LLM metrics at http://127.0.0.1:{port} ("
        )),
        "{p}"
    );
    assert!(p.ends_with("): start SGLang with --enable-metrics"), "{p}");
    assert!(!files(&w.dir.join("run")).contains(&"load.log".to_string()));
    assert!(w.scoped_pids().is_empty());
}

#[test]
fn a_taken_port_refuses_the_start() {
    let w = World::new("port");
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--serve",
        &format!("vllm serve m --port {port}"),
        "--",
        "true",
    ]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(1));
    let mut have = files(&w.dir.join("run"));
    have.retain(|f| f != "results.json" && f != "report.html");
    assert_eq!(have, vec!["gate.json", "manifest.json"]);
    let m = json(&w.dir.join("run/manifest.json"));
    assert_eq!(
        m.get("outcome")
            .unwrap()
            .get("stage")
            .and_then(Json::as_str),
        Some("port")
    );
}

#[test]
fn usage_errors_touch_nothing() {
    let w = World::new("usage");
    let out = run_bounded(
        {
            let mut c = w.recorder();
            c.args(["record", "-o", "run"]);
            c
        },
        30,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("after --"));
    assert!(!w.dir.join("run").exists());
    std::fs::create_dir_all(w.dir.join("old")).unwrap();
    std::fs::write(w.dir.join("old/boot.log"), "x").unwrap();
    let out = run_bounded(
        {
            let mut c = w.recorder();
            c.args(["record", "-o", "old", "--", "true"]);
            c
        },
        30,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(files(&w.dir.join("old")), vec!["boot.log"]);
    let out = run_bounded(
        {
            let mut c = w.recorder();
            c.arg("recrod");
            c
        },
        30,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("record"),
        "{}",
        text(&out.stderr)
    );
    let out = run_bounded(w.recorder(), 30);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn attach_mode_copies_the_boot_log_and_has_no_gate() {
    let w = World::new("attach");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let log = std::fs::File::create(w.dir.join("server.log")).unwrap();
    let mut server = w.cmd(w.bin.join("vllm"));
    server
        .args([
            "serve",
            "/models/Qwen3-8B",
            "--port",
            &port.to_string(),
            "--sim-speed",
            "60",
        ])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(std::process::Stdio::null());
    let mut server = server.spawn().unwrap();
    assert!(wait_until(60, || std::fs::read_to_string(
        w.dir.join("server.log")
    )
    .unwrap_or_default()
    .contains("Application startup complete")));
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--url",
        &base,
        "--boot-log",
        "server.log",
        "--",
    ])
    .args(bench(&base, "/models/Qwen3-8B", 6, 32));
    let out = run_bounded(c, 120);
    let run = w.dir.join("run");
    let have = files(&run);
    for f in [
        "after.snapshot.json",
        "before.snapshot.json",
        "bench.json",
        "boot.log",
        "load.log",
        "manifest.json",
        "probe.json",
        "run.series.jsonl",
    ] {
        assert!(
            have.contains(&f.to_string()),
            "{f}: {have:?}\n{}",
            text(&out.stdout)
        );
    }
    for f in ["gate.json", "teardown.json", "processes.json"] {
        assert!(!have.contains(&f.to_string()), "{f} in attach mode");
    }
    let m = json(&run.join("manifest.json"));
    assert_eq!(m.get("mode").and_then(Json::as_str), Some("attach"));
    assert_eq!(
        m.get("engine").unwrap().get("from").and_then(Json::as_str),
        Some("metrics")
    );
    let v = verdicts(&run).0;
    for (id, want) in [("T7", "pass"), ("T10", "pass"), ("T15", "pass")] {
        assert!(status(&v, id).split(',').all(|s| s == want), "{id}: {v:?}");
    }
    assert!(!v.contains_key("T2"));
    // Attach mode never stops the server.
    assert!(matches!(server.try_wait(), Ok(None)));
    let _ = server.kill();
    let _ = server.wait();
}
