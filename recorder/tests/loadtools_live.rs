//! The real GuideLLM (0.8.1) and AIPerf (0.13.0) run unmodified through `record --serve`
//! against the engine simulator: the recorder recognises them, makes them save their
//! results into the run folder, and T8 and T15 are decided with counts equal to the
//! tools' own; a GuideLLM sweep is judged phase by phase. They need a Python environment
//! (`INFERLINT_LOADTOOLS_VENV`) and a local tokenizer folder
//! (`INFERLINT_LOADTOOLS_TOKENIZER`, default: `tok` beside the venv); `cargo xtask test`
//! provides both, with AIPerf always and GuideLLM (6.5 GB with its torch) when installed.
//! Each test is ignored in a plain `cargo test` (its reason says what it needs); the
//! tier runs with `--ignored` exactly the tests whose tools its environment holds, and
//! says in one line which it left out and why. A test run without its tool fails.

mod common;
use common::*;

use std::path::PathBuf;

use analyzer::json::Json;

/// The venv and the tokenizer folder; a test asked to run without them fails, saying
/// what is missing.
fn tools(bin: &str) -> (PathBuf, PathBuf) {
    let venv = std::env::var_os("INFERLINT_LOADTOOLS_VENV")
        .map(PathBuf::from)
        .expect("INFERLINT_LOADTOOLS_VENV is not set (a venv with aiperf==0.13.0, and guidellm==0.8.1 for its tests): run `cargo xtask loadtools`");
    let tok = std::env::var_os("INFERLINT_LOADTOOLS_TOKENIZER")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv.with_file_name("tok"));
    assert!(
        venv.join("bin").join(bin).is_file(),
        "{} has no bin/{bin}",
        venv.display()
    );
    assert!(
        tok.join("tokenizer.json").is_file(),
        "no local tokenizer at {}",
        tok.display()
    );
    (venv, tok)
}

/// A port for the simulator: the first free one of `INFERLINT_LOADTOOLS_PORTS` (`FIRST-LAST`,
/// for a machine where only some ports are this job's), else any free one.
fn port() -> u16 {
    let Some(range) = std::env::var("INFERLINT_LOADTOOLS_PORTS").ok() else {
        return free_port();
    };
    let (first, last) = range
        .split_once('-')
        .and_then(|(a, b)| Some((a.parse::<u16>().ok()?, b.parse::<u16>().ok()?)))
        .unwrap_or_else(|| panic!("INFERLINT_LOADTOOLS_PORTS={range}: expected FIRST-LAST"));
    (first..=last)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .unwrap_or_else(|| panic!("no free port in {range}"))
}

fn status(v: &std::collections::BTreeMap<String, Vec<String>>, id: &str) -> String {
    v.get(id).map(|s| s.join(",")).unwrap_or_default()
}

fn evidence(a: &analyzer::Analysis, id: &str, key: &str) -> Option<f64> {
    a.report
        .checks
        .iter()
        .find(|c| c.id() == id)
        .and_then(|c| c.evidence_value(key))
        .as_ref()
        .and_then(Json::as_f64)
}

/// The number at a key path of a JSON value (`"0"` indexes an array).
fn at(v: &Json, path: &[&str]) -> f64 {
    let mut node = v;
    for k in path {
        node = match k.parse::<usize>() {
            Ok(i) => &node.as_array().unwrap()[i],
            Err(_) => node.get(k).unwrap(),
        };
    }
    node.as_f64().unwrap()
}

#[test]
#[ignore = "needs GuideLLM 0.8.1: cargo xtask loadtools --all"]
fn guidellm_concurrent_run_decides_t8_and_t15() {
    let (venv, tok) = tools("guidellm");
    let w = World::new("guidellm");
    let port = port();
    let serve = format!("vllm serve m --port {port} --max-model-len 4096");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .arg(venv.join("bin/guidellm"))
        .args(["run", "--backend"])
        .arg(format!(
            "kind=openai_http,target=http://127.0.0.1:{port},model=m"
        ))
        .args(["--profile", "kind=concurrent,streams=16"])
        .args(["--constraint", "kind=max_requests,count=48"])
        .args([
            "--data",
            "kind=synthetic_text,prompt_tokens=88,output_tokens=100",
        ])
        .arg("--tokenizer")
        .arg(format!("kind=hf_auto,model={}", tok.display()))
        .arg("--disable-progress")
        // No hub: the tokenizer is local. Fewer worker processes start faster on 2 cores.
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1")
        .env("GUIDELLM__MAX_WORKER_PROCESSES", "2");
    let out = run_bounded(c, 600);
    let run = w.dir.join("run");
    assert!(
        run.join("bench.json").is_file(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let m = json(&run.join("manifest.json"));
    let load = m.get("load").unwrap();
    assert_eq!(load.get("client").and_then(Json::as_str), Some("guidellm"));
    let (v, a) = verdicts(&run);
    assert_eq!(status(&v, "T8"), "pass", "{v:?}");
    assert_eq!(status(&v, "T15"), "pass", "{v:?}");
    let own = json(&run.join("bench.json"));
    let b = ["benchmarks", "0", "metrics"];
    let completed = at(&own, &[&b[..], &["request_totals", "successful"]].concat());
    let tokens = at(
        &own,
        &[&b[..], &["output_token_count", "successful", "total_sum"]].concat(),
    );
    assert_eq!(completed, 48.0);
    assert_eq!(evidence(&a, "T15", "client_completed"), Some(completed));
    assert_eq!(evidence(&a, "T15", "server_finished"), Some(completed));
    assert_eq!(evidence(&a, "T15", "client_output_tokens"), Some(tokens));
    assert_eq!(evidence(&a, "T15", "server_output_tokens"), Some(tokens));
    assert_eq!(evidence(&a, "T8", "requested"), Some(16.0));
}

#[test]
#[ignore = "needs AIPerf 0.13.0: cargo xtask loadtools"]
fn aiperf_concurrency_run_decides_t8_and_t15() {
    let (venv, tok) = tools("aiperf");
    let w = World::new("aiperf");
    let port = port();
    let serve = format!("vllm serve m --port {port} --max-model-len 4096");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .arg(venv.join("bin/aiperf"))
        .args(["profile", "--model", "m", "--url"])
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--endpoint-type", "chat", "--streaming"])
        .args(["--concurrency", "8", "--request-count", "24"])
        .args([
            "--synthetic-input-tokens-mean",
            "88",
            "--output-tokens-mean",
            "100",
        ])
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--ui", "none"])
        // AIPerf 0.13 refuses a local tokenizer folder under the hub's offline switches.
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("TRANSFORMERS_OFFLINE");
    let out = run_bounded(c, 600);
    let run = w.dir.join("run");
    assert!(
        run.join("bench.json").is_file(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(run.join("aiperf/profile_export_aiperf.json").is_file());
    let (v, a) = verdicts(&run);
    assert_eq!(status(&v, "T8"), "pass", "{v:?}");
    assert_eq!(status(&v, "T15"), "pass", "{v:?}");
    let own = json(&run.join("bench.json"));
    let completed = at(&own, &["request_count", "avg"]);
    assert_eq!(completed, 24.0);
    assert_eq!(evidence(&a, "T15", "client_completed"), Some(completed));
    assert_eq!(evidence(&a, "T15", "server_finished"), Some(completed));
    assert_eq!(
        evidence(&a, "T15", "client_output_tokens"),
        Some(at(&own, &["total_usage_completion_tokens", "avg"]))
    );
    assert_eq!(evidence(&a, "T8", "requested"), Some(8.0));

    // AIPerf's artifact directory alone: its own scrape of the server decides T1, T8 and
    // T15, agreeing with the recording.
    let (alone, a) = verdicts(&run.join("aiperf"));
    for id in ["T1", "T8", "T15"] {
        assert_eq!(status(&alone, id), "pass", "{id}: {alone:?}");
    }
    assert_eq!(evidence(&a, "T15", "server_finished"), Some(completed));
    assert!(evidence(&a, "T8", "sampled_every_ms").is_some());
}

/// A GuideLLM sweep (2 streams, then 16) against a server that runs at most 10 at once
/// (how `fixtures/loadtools/recorded/guidellm-sweep-2-16` was made): one run folder, two
/// phases cut by GuideLLM's own times, the first reaching what it asked for and the second
/// capped; each phase's output tokens agree with the server's over its window.
#[test]
#[ignore = "needs GuideLLM 0.8.1: cargo xtask loadtools --all"]
fn guidellm_sweep_is_judged_phase_by_phase() {
    let (venv, tok) = tools("guidellm");
    let w = World::new("guidellm-sweep");
    let port = port();
    let serve = format!("vllm serve m --port {port} --max-model-len 4096 --max-num-seqs 10");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .arg(venv.join("bin/guidellm"))
        .args(["run", "--backend"])
        .arg(format!(
            "kind=openai_http,target=http://127.0.0.1:{port},model=m"
        ))
        .args(["--profile", "kind=concurrent,streams[0]=2,streams[1]=16"])
        .args(["--constraint", "kind=max_requests,count=16"])
        .args([
            "--data",
            "kind=synthetic_text,prompt_tokens=88,output_tokens=50",
        ])
        .arg("--tokenizer")
        .arg(format!("kind=hf_auto,model={}", tok.display()))
        .arg("--disable-progress")
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1")
        .env("GUIDELLM__MAX_WORKER_PROCESSES", "2");
    let out = run_bounded(c, 900);
    let run = w.dir.join("run");
    assert!(
        run.join("bench.json").is_file(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (v, a) = verdicts(&run);
    // Judged against the highest at run level: 16 asked for, 10 ran.
    assert_eq!(status(&v, "T8"), "fail", "{v:?}");
    let phases = &a.report.phases;
    assert_eq!(phases.len(), 2, "{phases:?}");
    let phase_status = |i: usize, id: &str| {
        phases[i]
            .checks
            .iter()
            .find(|c| c.id() == id)
            .map(|c| c.status.as_str())
            .unwrap_or("")
    };
    assert_eq!(phase_status(0, "T8"), "pass", "{:?}", phases[0]);
    assert_eq!(phase_status(1, "T8"), "fail", "{:?}", phases[1]);
    assert_eq!((phases[0].ran, phases[1].ran), (Some(2.0), Some(10.0)));
    for (i, p) in phases.iter().enumerate() {
        assert_eq!(phase_status(i, "T15"), "pass", "{p:?}");
        assert_eq!(phase_status(i, "T1"), "pass", "{p:?}");
    }
    assert_eq!(a.exit_status(false), 1);
}

/// Each phase's (T8 status, peak running) of an analysed folder.
fn phase_t8(a: &analyzer::Analysis) -> Vec<(String, Option<f64>)> {
    a.report
        .phases
        .iter()
        .map(|p| {
            let t8 = p.checks.iter().find(|c| c.id() == "T8").unwrap();
            (t8.status.as_str().to_string(), p.ran)
        })
        .collect()
}

/// An AIPerf list of concurrencies (2, then 16) against a server that runs at most 10
/// (how `fixtures/loadtools/recorded/aiperf-sweep-2-16` was made): AIPerf writes one
/// artifact folder per step and no summary of its own; the recorder copies each step's
/// summary and per-request export in, and each phase is cut by its requests' own times.
#[test]
#[ignore = "needs AIPerf 0.13.0: cargo xtask loadtools"]
fn aiperf_concurrency_list_is_judged_phase_by_phase() {
    let (venv, tok) = tools("aiperf");
    let w = World::new("aiperf-sweep");
    let port = port();
    let serve = format!("vllm serve m --port {port} --max-model-len 4096 --max-num-seqs 10");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .arg(venv.join("bin/aiperf"))
        .args(["profile", "--model", "m", "--url"])
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--endpoint-type", "chat", "--streaming"])
        .args(["--concurrency", "2,16", "--request-count", "24"])
        .args([
            "--synthetic-input-tokens-mean",
            "32",
            "--output-tokens-mean",
            "64",
        ])
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--ui", "none"])
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("TRANSFORMERS_OFFLINE");
    let out = run_bounded(c, 900);
    let run = w.dir.join("run");
    for f in [
        "bench-1.json",
        "bench-2.json",
        "bench-1.requests.jsonl",
        "bench-2.requests.jsonl",
    ] {
        assert!(
            run.join(f).is_file(),
            "{f}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (v, a) = verdicts(&run);
    assert_eq!(status(&v, "T8"), "fail", "{v:?}");
    assert_eq!(
        phase_t8(&a),
        [("pass".into(), Some(2.0)), ("fail".into(), Some(10.0))]
    );
    assert_eq!(a.exit_status(false), 1);
}

/// Two `vllm bench serve` runs in one `record`, separated by `--then` (how
/// `fixtures/loadtools/recorded/vllm-runs-2-16` was made), with the real client: a vLLM
/// install's `vllm` named by `INFERLINT_VLLM_CLIENT` (run as a client only; the simulator
/// serves). Each run saves its own result and its start and end are in the manifest.
#[test]
#[ignore = "needs a real vllm for `vllm bench serve`: cargo xtask real, then cargo xtask loadtools"]
fn several_vllm_bench_serve_runs_are_judged_phase_by_phase() {
    let vllm = std::env::var_os("INFERLINT_VLLM_CLIENT")
        .map(PathBuf::from)
        .expect("INFERLINT_VLLM_CLIENT is not set (a vllm executable to run `vllm bench serve`)");
    let tok = std::env::var_os("INFERLINT_LOADTOOLS_TOKENIZER")
        .map(PathBuf::from)
        .expect("INFERLINT_LOADTOOLS_TOKENIZER is not set (a local tokenizer folder)");
    let w = World::new("vllm-runs");
    let port = port();
    let serve = format!("vllm serve m --port {port} --max-model-len 4096 --max-num-seqs 10");
    let client = |concurrency: &str, prompts: &str| -> Vec<std::ffi::OsString> {
        let mut a: Vec<std::ffi::OsString> = vec![vllm.clone().into()];
        a.extend(
            [
                "bench",
                "serve",
                "--backend",
                "openai",
                "--base-url",
                &format!("http://127.0.0.1:{port}"),
                "--model",
                "m",
                "--dataset-name",
                "random",
                "--random-input-len",
                "32",
                "--random-output-len",
                "64",
                "--num-prompts",
                prompts,
                "--max-concurrency",
                concurrency,
                "--tokenizer",
            ]
            .map(std::ffi::OsString::from),
        );
        a.push(tok.clone().into());
        a
    };
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--"])
        .args(client("2", "24"))
        .arg("--then")
        .args(client("16", "40"))
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1");
    let out = run_bounded(c, 900);
    let run = w.dir.join("run");
    assert!(
        run.join("bench-1.json").is_file() && run.join("bench-2.json").is_file(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let m = json(&run.join("manifest.json"));
    for i in ["0", "1"] {
        assert!(
            at(&m, &["load", "runs", i, "ended_wall"])
                > at(&m, &["load", "runs", i, "started_wall"])
        );
    }
    let (v, a) = verdicts(&run);
    assert_eq!(status(&v, "T8"), "fail", "{v:?}");
    assert_eq!(
        phase_t8(&a),
        [("pass".into(), Some(2.0)), ("fail".into(), Some(10.0))]
    );
    assert_eq!(a.exit_status(false), 1);
}
