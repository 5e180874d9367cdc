//! Build tasks, so a fresh machine needs nothing but cargo:
//!   cargo xtask demo   the main job on this machine (see README)
//!   cargo xtask test   every test, then the parity and bad-input trials
//!   cargo xtask ci     formatting, lints, the architecture invariants (`tidy`), the
//!                      wasm builds, then `test`
//!   cargo xtask tidy   the architecture invariants of ARCHITECTURE.md, on the source
//!   cargo xtask fuzz   every fuzz target for a short while (part of `ci`);
//!                      fuzz-campaign for a long run (see fuzz.rs)
//!   cargo xtask viewer the browser viewer, built and inlined into one offline page
//!                      (www/dist/index.html, www/dist/report.html), installing the
//!                      pinned tools it needs when they are missing
//!   cargo xtask first-paint [--samples N] [--runs N] [--keep]
//!                      the one-file report of a 24-hour recording (or N readings):
//!                      its size and time to first paint in headless Chromium
//!   cargo xtask real   the real-engine tier: a real vLLM (CPU) installed under
//!                      target/real when missing, and the recorder's tests against it
//!                      (`--save` refreshes fixtures/real/)
//!   cargo xtask fleet  the fleet tier: simulated replicas behind vllm-router, read
//!                      through Debian's Prometheus (installed when missing)
//!                      (`--save` refreshes fixtures/fleet/tiny-pool/)
//!   cargo xtask screenshot  docs/report.png, the README's picture of a report, taken
//!                      in headless Chromium
//!   cargo xtask dist   the Python wheels (both commands, the viewer inside, manylinux2014)
//!                      into target/dist/, maturin and zig installed from PyPI when missing;
//!                      `--test` builds the x86_64 one and runs it installed, as `test` does
//!   cargo xtask loadtools  the load-tools tier: AIPerf (and GuideLLM with `--all`)
//!                      installed under target/loadtools when missing, and the
//!                      recorder's live tests with them against the simulator

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

mod browser;
mod checks;
mod cites;
mod demo;
mod dist;
mod dist_test;
mod first_paint;
mod fleet;
mod fuzz;
mod layers;
mod loadtools;
mod real;
mod tidy;
mod tools;
mod viewer;

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs a command in the project root, echoing it; fails on a non-zero exit.
pub(crate) fn run(cmd: &mut Command) -> Result<()> {
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

/// Cargo's target folder: `$CARGO_TARGET_DIR`, else the project's `target/`.
pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => root().join(d),
        None => root().join("target"),
    }
}

pub(crate) fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The recorded GPU runs: $INFERLINT_FIXTURES, else ../shared/fixtures.
pub(crate) fn recorded() -> Option<PathBuf> {
    let dir = std::env::var_os("INFERLINT_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/fixtures"));
    dir.join("expected-verdicts.json").is_file().then_some(dir)
}

pub(crate) fn ensure_wasm_target() -> Result<()> {
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

fn main() -> Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("demo") => demo::demo(),
        Some("dist") => dist::dist(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("test") => checks::test(),
        Some("ci") => checks::ci(),
        Some("tidy") => tidy::tidy(),
        Some("viewer") => viewer::viewer(),
        Some("viewer-inline") => viewer::finish_viewer(),
        Some("browser-tests") => browser::browser_tests(),
        Some("screenshot") => browser::screenshot(),
        Some("fuzz") => fuzz::fuzz(&std::env::args().skip(2).collect::<Vec<_>>(), false),
        Some("fuzz-campaign") => fuzz::fuzz(&std::env::args().skip(2).collect::<Vec<_>>(), true),
        Some("first-paint") => {
            first_paint::first_paint(&std::env::args().skip(2).collect::<Vec<_>>())
        }
        Some("real") => real::real(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("fleet") => fleet::fleet(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("loadtools") => loadtools::loadtools(&std::env::args().skip(2).collect::<Vec<_>>()),
        _ => {
            eprintln!(
                "usage: cargo xtask demo | test | ci | tidy | dist [--test] | screenshot | viewer | browser-tests | real | fleet | loadtools | \
                 first-paint [--samples N] [--runs N] [--keep] | \
                 fuzz [--seconds N] [TARGET...] | fuzz-campaign [--seconds N] [TARGET...]"
            );
            std::process::exit(2);
        }
    }
}
