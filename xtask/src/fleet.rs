//! The fleet tier: many simulated replicas behind a real router, read through a real
//! Prometheus (`recorder/tests/fleet_live.rs`). Debian's `prometheus` package is
//! installed when missing (as root; its services left disabled, its port 9090 and
//! `/var/lib/prometheus` never used) and PyPI's `vllm-router`, pinned, into a virtual
//! environment under `target/fleet/` when missing.
//!
//! `cargo xtask fleet` installs what is missing and runs the tier; `--save` also
//! refreshes `fixtures/fleet/tiny-pool/`. `cargo xtask test` runs it too, saying in one
//! line that it ran and how long it took, or why not.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};

use crate::{cargo, root, run};

/// The router's release on PyPI.
const VLLM_ROUTER: &str = "0.1.17";
/// Debian's Prometheus binary.
const PROMETHEUS: &str = "/usr/bin/prometheus";
/// Written into the environment once the install finished; holds what was installed.
const STAMP: &str = ".inferlint-fleet";
/// Where `--save` puts the tiny-pool run.
const FIXTURE: &str = "fixtures/fleet/tiny-pool";

fn venv() -> PathBuf {
    crate::tools::tier_home("fleet").join("venv")
}

fn stamp_text() -> String {
    format!("vllm-router=={VLLM_ROUTER}\n")
}

/// The router in the environment, when installed at the pinned version.
fn installed_router() -> Option<PathBuf> {
    let venv = venv();
    let bin = venv.join("bin/vllm-router");
    let stamp = std::fs::read_to_string(venv.join(STAMP)).ok()?;
    (stamp == stamp_text() && bin.is_file()).then_some(bin)
}

/// `vllm-router`, installed into `target/fleet/venv` when missing.
fn ensure_router() -> Result<PathBuf> {
    if let Some(bin) = installed_router() {
        return Ok(bin);
    }
    let venv = venv();
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(&venv);
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip")).args([
        "install",
        "--quiet",
        &format!("vllm-router=={VLLM_ROUTER}"),
    ]))?;
    std::fs::write(venv.join(STAMP), stamp_text())?;
    eprintln!(
        "== fleet: vllm-router {VLLM_ROUTER} installed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    installed_router().ok_or_else(|| anyhow::anyhow!("vllm-router missing after its install"))
}

/// Prometheus: $INFERLINT_PROMETHEUS, else Debian's, installed when missing and allowed
/// (root), its services disabled so nothing listens on 9090 at the next boot.
fn ensure_prometheus() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("INFERLINT_PROMETHEUS") {
        return Ok(PathBuf::from(p));
    }
    if Path::new(PROMETHEUS).is_file() {
        return Ok(PathBuf::from(PROMETHEUS));
    }
    if !crate::tools::is_root() {
        bail!("prometheus is missing: install it (apt-get install --no-install-recommends prometheus) or set INFERLINT_PROMETHEUS");
    }
    let started = Instant::now();
    run(Command::new("apt-get").arg("update"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends", "prometheus"])
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    // Best effort: a machine without SysV links or systemd has nothing to disable.
    let _ = Command::new("update-rc.d")
        .args(["prometheus", "disable"])
        .status();
    let _ = Command::new("systemctl")
        .args(["disable", "--now", "prometheus"])
        .status();
    eprintln!(
        "== fleet: Debian's prometheus installed in {:.0} s (its service disabled)",
        started.elapsed().as_secs_f64()
    );
    Ok(PathBuf::from(PROMETHEUS))
}

/// Runs the tier's tests with the tools.
fn run_tier(prometheus: &Path, router: &Path, save: bool) -> Result<()> {
    let started = Instant::now();
    // The simulator the replicas are, and the recorder the tests call.
    run(cargo().args([
        "build",
        "-q",
        "-p",
        "enginesim",
        "-p",
        "recorder",
        "-p",
        "inferlint",
    ]))?;
    let mut c = cargo();
    c.args([
        "test",
        "-p",
        "recorder",
        "--test",
        "fleet_live",
        "--",
        "--ignored",
        "--nocapture",
    ])
    .env("INFERLINT_PROMETHEUS", prometheus)
    .env("INFERLINT_VLLM_ROUTER", router);
    if save {
        c.env("INFERLINT_FLEET_SAVE", root().join(FIXTURE));
    }
    run(&mut c)?;
    eprintln!(
        "== fleet tier: ran, passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask fleet [--save]`.
pub(crate) fn fleet(args: &[String]) -> Result<()> {
    if let Some(other) = args.iter().find(|a| *a != "--save") {
        bail!("cargo xtask fleet: unknown option {other} (--save)");
    }
    let prometheus = ensure_prometheus()?;
    let router = ensure_router()?;
    run_tier(&prometheus, &router, args.iter().any(|a| a == "--save"))
}

/// The tier inside `cargo xtask test`: the tools installed when missing and allowed,
/// else one line saying why it did not run.
pub(crate) fn in_test() -> Result<()> {
    let tools = ensure_prometheus().and_then(|p| Ok((p, ensure_router()?)));
    match tools {
        Ok((prometheus, router)) => run_tier(&prometheus, &router, false),
        Err(why) => {
            eprintln!("== fleet tier: not run: {why:#}");
            Ok(())
        }
    }
}
