//! `cargo xtask demo`: the main job on a machine with no GPU.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{cargo, root, run};

/// The main job on a machine with no GPU: record a 32-request run against the engine
/// simulator's vLLM (a hybrid model with 43 KV blocks of 784 tokens, as on the GPU run this
/// project started from), then let `inferlint analyze` give the verdicts.
pub(crate) fn demo() -> Result<()> {
    run(cargo().args([
        "build",
        "-q",
        "-p",
        "inferlint",
        "-p",
        "enginesim",
        "-p",
        "recorder",
    ]))?;
    let bins = root().join("target/debug");
    let work = root().canonicalize()?.join("target/inferlint-demo");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    // The simulator's vllm and nvidia-smi personalities, on PATH for this command only.
    let links = work.join("bin");
    let st = Command::new(bins.join("inferlint-enginesim"))
        .arg("install")
        .arg(&links)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !st.success() {
        bail!(
            "cannot install the simulator's links in {}",
            links.display()
        );
    }
    let path = std::env::join_paths(
        std::iter::once(links.clone()).chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let model = "/models/Qwen3.8-27B-W4A16-AutoRound";
    let serve = format!(
        "vllm serve {model} --port {port} --max-model-len 16384 --max-num-seqs 32 \
         --gpu-memory-utilization 0.93 --sim-kv-blocks 43 --sim-block-size 784 --sim-hybrid --sim-speed 40"
    );
    let base = format!("http://127.0.0.1:{port}");
    let out = work.join("run");
    let t0 = std::time::Instant::now();
    let mut cmd = Command::new(bins.join("inferlint-recorder"));
    cmd.arg("record")
        .arg("-o")
        .arg(&out)
        .args([
            "--title",
            "demo: Qwen3.8-27B-like hybrid model on a simulated RTX 4090",
        ])
        .args(["--serve", &serve, "--"])
        .args([
            "vllm",
            "bench",
            "serve",
            "--model",
            model,
            "--base-url",
            &base,
        ])
        .args(["--dataset-name", "random", "--random-input-len", "88"])
        .args(["--random-output-len", "1000", "--ignore-eos"])
        .args(["--num-prompts", "32", "--max-concurrency", "32"])
        .env("PATH", path)
        .env("INFERLINT_SIM_GPU_STATE", work.join("gpu"));
    eprintln!(
        "== inferlint-recorder record -o {} --serve \"{serve}\" -- vllm bench serve ...",
        out.display()
    );
    let status = cmd
        .current_dir(root())
        .status()
        .context("cannot run inferlint-recorder")?;
    // The recorder exits 1 because tripwires failed: that is the demo's point. Check that
    // the run was recorded and the verdicts are the GPU run's.
    let results = std::fs::read_to_string(out.join(analyzer::docs::RESULTS))
        .with_context(|| format!("the run was not analyzed (recorder exit {status})"))?;
    let report = analyzer::json::parse(&results).context("results.json is not JSON")?;
    let failed = |id: &str| {
        report
            .get("checks")
            .and_then(analyzer::json::Json::as_array)
            .unwrap_or_default()
            .iter()
            .any(|c| {
                c.get("id").and_then(|v| v.as_str()) == Some(id)
                    && c.get("status").and_then(|v| v.as_str()) == Some("fail")
            })
    };
    eprintln!(
        "== recorded and checked in {:.0} s; the report: {}",
        t0.elapsed().as_secs_f64(),
        out.join(analyzer::docs::REPORT).display()
    );
    if !(failed("T1") && failed("T8")) {
        bail!(
            "expected T1 and T8 to fail, as on the GPU run; see {}",
            out.display()
        );
    }
    eprintln!("== T1 and T8 fail, as on the real GPU run");
    if !root().join("www/dist/report.html").is_file() {
        eprintln!(
            "== report.html is the plain page of verdicts: run `cargo xtask viewer` once (it \
             installs trunk and friends) and the demo's report becomes the interactive one, \
             with charts"
        );
    }
    Ok(())
}
