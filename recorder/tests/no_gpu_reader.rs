//! Without `nvidia-smi` (an AMD card, a CPU-only box, a container without the driver
//! tools) the card cannot be read: `gpu-inspect` and `teardown` say "can't tell" at once
//! instead of waiting out their timeouts and reporting a card that is not clear; and the
//! numeric flags refuse values the commands cannot use.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn scratch(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("no-gpu-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The recorder with a PATH that has no `nvidia-smi`, over an empty process table.
fn recorder(tag: &str, args: &[&str]) -> (Output, Duration) {
    let dir = scratch(tag);
    let proc_root = dir.join("proc");
    std::fs::create_dir_all(proc_root.join("self")).unwrap();
    let empty_path = dir.join("bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_inferlint-recorder"))
        .args(args)
        .arg("--proc-root")
        .arg(&proc_root)
        .env("PATH", &empty_path)
        .output()
        .unwrap();
    (out, started.elapsed())
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn gpu_inspect_cant_tell_at_once() {
    let (o, took) = recorder("inspect", &["gpu-inspect"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("[ T2] ????"), "{t}");
    assert!(t.contains("nvidia-smi is not on PATH"), "{t}");
    assert!(!t.contains("TRIPWIRE-FAILED"), "{t}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn teardown_cant_tell_at_once() {
    let (o, took) = recorder("teardown", &["teardown", "--timeout", "120"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("can't tell whether the GPU is free"), "{t}");
    assert!(!t.contains("None MiB"), "{t}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn numeric_flags_refuse_what_cannot_be_used() {
    for args in [
        &["gpu-inspect", "--timeout", "NaN"][..],
        &["gpu-inspect", "--consecutive", "0"],
        &["teardown", "--timeout", "inf"],
        &[
            "watch",
            "http://127.0.0.1:9",
            "-o",
            "x",
            "--interval",
            "1e308",
        ],
        &[
            "watch",
            "http://127.0.0.1:9",
            "-o",
            "x",
            "--duration",
            "NaN",
        ],
        &["probe", "http://127.0.0.1:9", "--concurrency", "0"],
        &["record", "--interval", "0", "--", "true"],
        &["record", "--requested=0", "--", "true"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_inferlint-recorder"))
            .args(args)
            .output()
            .unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains("invalid value"), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{args:?}: {t}");
    }
}

mod common;

/// `record --serve` on a box without `nvidia-smi`: the gate can't tell, so the server is
/// started with a warning (T2 can't tell, never "not free"); `--require-gpu-check`
/// refuses instead, before any server starts.
#[test]
fn record_serve_goes_on_with_a_warning_unless_the_check_is_required() {
    let w = common::World::new("no-gpu-record");
    std::fs::remove_file(w.bin.join("nvidia-smi")).unwrap();
    let port = common::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!(
        "sglang serve --model-path /root/models/Qwen3-8B --port {port} --enable-metrics --sim-speed 60"
    );
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--no-probe", "--serve", &serve, "--"])
        .args(common::bench(&base, "/root/models/Qwen3-8B", 4, 16));
    let out = common::run_bounded(c, 180);
    let said = format!("{}{}", common::text(&out.stdout), common::text(&out.stderr));
    assert!(
        said.contains("warning: can't tell whether the GPU is free"),
        "{said}"
    );
    let gate = common::json(&w.dir.join("run/gate.json"));
    assert!(gate.get("clear").unwrap().is_null(), "{gate:?}");
    assert!(w.dir.join("run/run.series.jsonl").is_file(), "{said}");
    let (v, _) = common::verdicts(&w.dir.join("run"));
    assert_eq!(common::status(&v, "T2"), "unknown", "{v:?}");
    // The card that cannot be read after the stop is not a stop cut short by a signal:
    // the run completed (a real vLLM on a CPU box found this).
    let m = common::json(&w.dir.join("run/manifest.json"));
    let outcome = m.get("outcome").unwrap();
    assert_eq!(
        outcome.get("state").and_then(analyzer::json::Json::as_str),
        Some("completed"),
        "{outcome:?}\n{said}"
    );
    assert!(!said.contains("interrupted"), "{said}");
    assert_ne!(out.status.code(), Some(130), "{said}");
    let teardown = common::json(&w.dir.join("run/teardown.json"));
    assert_eq!(
        teardown
            .get("abandoned")
            .and_then(analyzer::json::Json::as_bool),
        Some(false),
        "{teardown:?}"
    );

    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run2",
        "--require-gpu-check",
        "--serve",
        &format!("vllm serve m --port {}", common::free_port()),
        "--",
        "true",
    ]);
    let out = common::run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    let mut have = common::files(&w.dir.join("run2"));
    have.retain(|f| f != "results.json" && f != "report.html");
    assert_eq!(have, vec!["gate.json", "manifest.json"]);
}
