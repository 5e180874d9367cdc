//! `cargo xtask first-paint [--samples N] [--runs N] [--keep]`: the one-file report of a
//! long synthetic recording (24 hours at 4 Hz unless told), its size and its time to first
//! complete paint in headless Chromium, with where the time went. A measurement printed,
//! never a timed assertion (the size limit is `analyzer/cli/tests/long_run.rs`'s).

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::tools::*;
use crate::viewer::viewer;
use crate::{cargo, root, run};

/// 24 hours at 4 readings a second.
const DAY: usize = 345_600;

pub(crate) fn first_paint(args: &[String]) -> Result<()> {
    let mut samples = DAY;
    let mut runs = 3;
    let mut keep = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut number = |what: &str| -> Result<usize> {
            it.next()
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("{what} takes a number"))
        };
        match a.as_str() {
            "--samples" => samples = number("--samples")?,
            "--runs" => runs = number("--runs")?,
            "--keep" => keep = true,
            other => bail!("unknown argument {other} (--samples N, --runs N, --keep)"),
        }
    }
    ensure_node_tools()?;
    let chromium = chromium()?;
    if !root().join("www/dist/report.html").is_file() {
        viewer()?;
    }
    run(cargo().args(["build", "--release", "-q", "-p", "inferlint"]))?;
    let dir = root().join(format!("target/first-paint/{samples}"));
    run(cargo()
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "viewer",
            "--example",
            "long_run",
            "--",
        ])
        .arg(&dir)
        .arg(samples.to_string()))?;
    let html = dir.join(analyzer::docs::REPORT);
    let started = std::time::Instant::now();
    let status = Command::new(root().join("target/release/inferlint"))
        .args(["analyze", "--requested", "32", "--html"])
        .arg(&html)
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .status()
        .context("cannot run inferlint")?;
    if status.code().is_none_or(|c| c > 2) {
        bail!("inferlint analyze failed ({status})");
    }
    eprintln!(
        "== analyze --html took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let measured = run(Command::new("node")
        .arg(root().join(NODE_DIR).join("first_paint.mjs"))
        .args(["--runs", &runs.to_string()])
        .arg(&html)
        .env("CHROMIUM", &chromium));
    if !keep {
        std::fs::remove_dir_all(&dir)?;
    }
    measured
}
