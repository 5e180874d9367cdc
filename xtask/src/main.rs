//! Build tasks, so a fresh machine needs nothing but cargo:
//!   cargo xtask demo   the main job on this machine (see README)
//!   cargo xtask test   every test, then the parity and bad-input trials
//!   cargo xtask ci     formatting, lints, the wasm build, then `test`

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs a command in the project root, echoing it; fails on a non-zero exit.
fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}").replace('"', "");
    eprintln!("== {shown}");
    let status = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The recorded GPU runs: $INFERLINT_FIXTURES, else ../shared/fixtures.
fn recorded() -> Option<PathBuf> {
    let dir = std::env::var_os("INFERLINT_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/fixtures"));
    dir.join("expected-verdicts.json").is_file().then_some(dir)
}

fn ensure_wasm_target() -> Result<()> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown") => Ok(()),
        Ok(_) => run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"])),
        Err(_) => {
            eprintln!("== rustup not found: assuming the wasm32 target is installed");
            Ok(())
        }
    }
}

/// The main job on a machine with no GPU: record a 32-request run against the engine
/// simulator's vLLM (a hybrid model with 43 KV blocks of 784 tokens, as on the GPU run this
/// project started from), then let `inferlint analyze` give the verdicts.
fn demo() -> Result<()> {
    run(cargo().args([
        "build",
        "-q",
        "-p",
        "analyzer",
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
    let results = std::fs::read_to_string(out.join("results.json"))
        .with_context(|| format!("the run was not analyzed (recorder exit {status})"))?;
    let failed = |id: &str| {
        results
            .split(&format!("\"id\": \"{id}\""))
            .nth(1)
            .and_then(|rest| rest.split("\"status\": \"").nth(1))
            .is_some_and(|s| s.starts_with("fail"))
    };
    eprintln!(
        "== recorded and checked in {:.0} s; the report: {}",
        t0.elapsed().as_secs_f64(),
        out.join("report.html").display()
    );
    if !(failed("T1") && failed("T8")) {
        bail!(
            "expected T1 and T8 to fail, as on the GPU run; see {}",
            out.display()
        );
    }
    eprintln!("== T1 and T8 fail, as on the real GPU run");
    Ok(())
}

fn test() -> Result<()> {
    run(cargo().args(["test", "--workspace"]))?;
    match recorded() {
        Some(fixtures) => {
            run(cargo().args(["build", "--release", "-q", "-p", "analyzer"]))?;
            let bin = root().join("target/release/inferlint");
            // The trials run on a copy (`analyze` writes results.json into each folder),
            // laid out as shared/ is: the parity tool finds ../fixtures beside itself.
            let work =
                std::env::temp_dir().join(format!("inferlint-trials-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&work);
            copy_tree(&fixtures, &work.join("fixtures"))?;
            copy_tree(&fixtures.join("../tools"), &work.join("tools"))?;
            let parity = run(Command::new("python3")
                .arg(work.join("tools/parity"))
                .arg(&bin));
            let bad = run(Command::new("python3")
                .arg(work.join("tools/bad-input"))
                .arg(&bin)
                .arg(work.join("fixtures"))
                .arg("300"));
            let _ = std::fs::remove_dir_all(&work);
            parity?;
            bad?;
        }
        None => eprintln!("== recorded GPU runs not found: parity and bad-input trials skipped"),
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), dst)?;
        }
    }
    Ok(())
}

fn ci() -> Result<()> {
    ensure_wasm_target()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().args([
        "build",
        "-p",
        "analyzer",
        "--target",
        "wasm32-unknown-unknown",
        "--no-default-features",
        "--lib",
    ]))?;
    test()
}

fn main() -> Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("demo") => demo(),
        Some("test") => test(),
        Some("ci") => ci(),
        _ => {
            eprintln!("usage: cargo xtask demo | test | ci");
            std::process::exit(2);
        }
    }
}
