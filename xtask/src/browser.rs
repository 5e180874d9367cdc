//! The browser tests in headless Chromium.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::tools::*;
use crate::viewer::viewer;
use crate::{cargo, recorded, root, run, target_dir};

/// The viewer in headless Chromium (tests/browser, `node --test`): one-file reports of
/// every run folder against `inferlint analyze --json`, drop and pick, a broken file, no
/// network, the hostile line, theme and keyboard; and the replay (replay.test.mjs).
pub(crate) fn browser_tests() -> Result<()> {
    if !root().join("www/dist/report.html").is_file() {
        viewer()?;
    }
    // The command line with the viewer inside (build.rs picks up www/dist/report.html).
    run(cargo().args(["build", "--release", "-q", "-p", "inferlint"]))?;
    browser_tests_with(&root().join("target/release/inferlint"))
}

/// The browser tests with a given `inferlint`, built with the viewer inside.
pub(crate) fn browser_tests_with(bin: &Path) -> Result<()> {
    ensure_node_tools()?;
    let chromium = chromium()?;
    let mut cmd = Command::new("node");
    cmd.args(["--test", "--test-concurrency=1", "--test-reporter=spec"])
        .arg(root().join(NODE_DIR).join("viewer.test.mjs"))
        .arg(root().join(NODE_DIR).join("replay.test.mjs"))
        .env("CHROMIUM", &chromium)
        .env("INFERLINT_BIN", bin)
        .env("INFERLINT_PAGE", root().join("www/dist/index.html"));
    if let Some(f) = recorded() {
        cmd.env("INFERLINT_FIXTURES", f);
    }
    run(&mut cmd)
}

/// The run the README's picture shows: the GPU run this project started from, simulated.
const SCREENSHOT_RUN: &str = "fixtures/recorded/vllm";

/// `cargo xtask screenshot`: `docs/report.png`, the first screen of the one-file report of
/// a recorded run, taken in headless Chromium (`tests/browser/screenshot.mjs`).
pub(crate) fn screenshot() -> Result<()> {
    ensure_node_tools()?;
    let chromium = chromium()?;
    if !root().join("www/dist/report.html").is_file() {
        viewer()?;
    }
    run(cargo().args(["build", "--release", "-q", "-p", "inferlint"]))?;
    let work = std::env::temp_dir().join(format!("inferlint-screenshot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    crate::checks::copy_tree(&root().join(SCREENSHOT_RUN), &work)?;
    let page = work.join(analyzer::docs::REPORT);
    // The verdicts make the exit status (1 here: T1 and T8 fail); the page is what counts.
    let status = Command::new(target_dir().join("release/inferlint"))
        .arg("analyze")
        .arg(&work)
        .env("NO_COLOR", "1")
        .env("TZ", "UTC")
        .stdout(std::process::Stdio::null())
        .status()?;
    if !page.is_file() {
        anyhow::bail!("inferlint analyze wrote no page ({status})");
    }
    let result = run(Command::new("node")
        .arg(root().join(NODE_DIR).join("screenshot.mjs"))
        .arg(&page)
        .arg(root().join("docs/report.png"))
        .env("CHROMIUM", &chromium));
    let _ = std::fs::remove_dir_all(&work);
    result
}
