//! Signals and teardown on live simulated servers: SIGINT and SIGTERM to `record` during
//! the load, and the orphaned `VLLM::EngineCore` that a SIGKILL of the
//! API server leaves holding the card, found and stopped by `teardown` while a bystander
//! whose command line says "vllm serve" survives (T2, T3: docs/tripwires.md#t3).

mod common;
use common::*;

use std::os::unix::process::CommandExt;
use std::process::Stdio;

use analyzer::json::Json;

/// Starts `record` with a long load; returns it once the load is running.
fn record_in_load(w: &World, port: u16) -> std::process::Child {
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!("vllm serve /models/Qwen3-8B --port {port} --max-num-seqs 8 --sim-speed 2");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--no-probe", "--serve", &serve, "--"])
        .args(bench(&base, "/models/Qwen3-8B", 64, 2000))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group, so "Ctrl-C" can go to the whole group as a terminal would.
        .process_group(0);
    let child = c.spawn().unwrap();
    let series = w.dir.join("run/run.series.jsonl");
    assert!(
        wait_until(90, || std::fs::read_to_string(&series)
            .is_ok_and(|s| s.lines().count() >= 4)),
        "the load did not start"
    );
    child
}

fn check_interrupted(w: &World, mut child: std::process::Child) {
    let code = wait_until(60, || matches!(child.try_wait(), Ok(Some(_))));
    assert!(code, "record did not end after the signal");
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130));
    let run = w.dir.join("run");
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    assert_eq!(o.get("state").and_then(Json::as_str), Some("interrupted"));
    assert_eq!(o.get("stage").and_then(Json::as_str), Some("load"));
    let have = files(&run);
    for f in [
        "after.snapshot.json",
        "before.snapshot.json",
        "boot.log",
        "gate.json",
        "load.log",
        "manifest.json",
        "processes.json",
        "run.series.jsonl",
        "teardown.json",
    ] {
        assert!(have.contains(&f.to_string()), "{f}: {have:?}");
    }
    let pid = m
        .get("serve")
        .unwrap()
        .get("pid")
        .and_then(Json::as_i64_trunc)
        .unwrap() as i32;
    assert!(!alive(pid), "the server still runs");
    assert!(
        wait_until(10, || w.scoped_pids().is_empty()),
        "left running: {:?}",
        w.scoped_pids()
    );
    let td = json(&run.join("teardown.json"));
    assert_eq!(td.get("clear").and_then(Json::as_bool), Some(true));
    // The analyzer reads the partial folder.
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T2"), "pass");
    assert_eq!(
        analyzer::json::parse(&analyzer::json::to_compact(&a.report))
            .unwrap()
            .get("schema")
            .and_then(Json::as_str),
        Some("inferlint.report/1")
    );
}

#[test]
fn sigterm_during_the_load_stops_the_server_and_keeps_the_folder() {
    let w = World::new("sigterm");
    let child = record_in_load(&w, free_port());
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    check_interrupted(&w, child);
}

#[test]
fn ctrl_c_to_the_group_during_the_load_stops_the_server_and_keeps_the_folder() {
    let w = World::new("sigint");
    let child = record_in_load(&w, free_port());
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    check_interrupted(&w, child);
}

#[test]
fn sighup_during_the_boot_wait_stops_the_server_before_it_was_ready() {
    let w = World::new("sighup");
    let port = free_port();
    let serve = format!("vllm serve /models/Qwen3-8B --port {port} --sim-speed 0.05");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let boot = w.dir.join("run/boot.log");
    assert!(
        wait_until(30, || boot.is_file()),
        "the server did not start"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    assert!(wait_until(60, || matches!(child.try_wait(), Ok(Some(_)))));
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let run = w.dir.join("run");
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    assert_eq!(o.get("state").and_then(Json::as_str), Some("interrupted"));
    assert_eq!(o.get("stage").and_then(Json::as_str), Some("ready"));
    let have = files(&run);
    for f in ["boot.log", "gate.json", "processes.json", "teardown.json"] {
        assert!(have.contains(&f.to_string()), "{f}: {have:?}");
    }
    assert!(!have.contains(&"load.log".to_string()));
    assert!(
        wait_until(10, || w.scoped_pids().is_empty()),
        "left running: {:?}",
        w.scoped_pids()
    );
}

fn engine_core(parent: u32) -> Option<i32> {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| stat[i + 2..].to_string()) else {
            continue;
        };
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == parent && cmd.starts_with(b"VLLM::EngineCore") {
            return Some(pid);
        }
    }
    None
}

#[test]
fn sigkill_orphans_the_engine_core_gpu_inspect_refuses_and_teardown_stops_only_it() {
    let w = World::new("orphan");
    let port = free_port();
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
        .stdin(Stdio::null())
        .process_group(0);
    let mut server = server.spawn().unwrap();
    assert!(wait_until(60, || std::fs::read_to_string(
        w.dir.join("server.log")
    )
    .unwrap_or_default()
    .contains("Application startup complete")));
    let mut core = None;
    assert!(wait_until(10, || {
        core = engine_core(server.id());
        core.is_some()
    }));
    let core = core.unwrap();
    // A bystander whose command line mentions "vllm serve", as `pkill -f` would see it.
    let mut bystander = w.cmd("bash");
    bystander
        .args(["-c", "exec -a 'tail -f vllm serve.log' sleep 120"])
        .stdin(Stdio::null());
    let mut bystander = bystander.spawn().unwrap();
    assert!(wait_until(5, || std::fs::read(format!(
        "/proc/{}/cmdline",
        bystander.id()
    ))
    .is_ok_and(|c| c.starts_with(b"tail -f vllm serve.log"))));

    // SIGKILL of the API server alone: its engine child stays and holds the card.
    unsafe { libc::kill(server.id() as i32, libc::SIGKILL) };
    let _ = server.wait();
    assert!(alive(core));
    assert!(w.gpu_used() > 800);

    let mut c = w.recorder();
    c.args(["gpu-inspect", "--timeout", "3", "-o", "gate.json"]);
    let out = run_bounded(c, 60);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{so}");
    assert!(so.contains("GPU 0   NVIDIA GeForce RTX 4090"), "{so}");
    assert!(so.contains("[ T2] TRIPWIRE-FAILED  card not clear; refusing to boot. not clear after 3s: last reading "), "{so}");
    assert!(so.contains("MiB used, 1 server processes alive"), "{so}");
    let (v, _) = verdicts_of_gate(&w);
    assert_eq!(v, "fail");

    let mut c = w.recorder();
    c.args(["teardown", "--timeout", "20", "-o", "teardown.json"]);
    let out = run_bounded(c, 90);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{so}\n{}", text(&out.stderr));
    assert!(
        so.contains(&format!("target  pid={core:<8}VLLM::EngineCore")),
        "{so}"
    );
    assert_eq!(so.matches("target  pid=").count(), 1, "{so}");
    assert!(
        so.contains("(pkill -f 'vllm serve' would miss 1 and wrongly hit 1)"),
        "{so}"
    );
    assert!(
        so.contains("[ T2] PASS  2 consecutive clear readings"),
        "{so}"
    );
    assert!(!alive(core));
    assert!(alive(bystander.id() as i32), "the bystander was signalled");
    assert!(w.gpu_used() <= 800);
    let td = json(&w.dir.join("teardown.json"));
    assert_eq!(td.get("clear").and_then(Json::as_bool), Some(true));
    let _ = bystander.kill();
    let _ = bystander.wait();
}

/// T2 as the analyzer reads it from a `gate.json` alone.
fn verdicts_of_gate(w: &World) -> (String, ()) {
    let bytes = std::fs::read(w.dir.join("gate.json")).unwrap();
    let doc: analyzer::docs::Gate = analyzer::docs::read("gate.json", &bytes).unwrap();
    let r = analyzer::rules::t02_orphaned_engine::from_gate(&doc);
    (r.status.as_str().to_string(), ())
}
