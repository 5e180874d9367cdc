//! The browser tests in headless Chromium.

use std::process::Command;

use anyhow::Result;

use crate::tools::*;
use crate::viewer::viewer;
use crate::{cargo, recorded, root, run};

/// The viewer in headless Chromium (tests/browser, `node --test`): one-file reports of
/// every run folder against `inferlint analyze --json`, drop and pick, a broken file, no
/// network, the hostile line, theme and keyboard; and the replay (replay.test.mjs).
pub(crate) fn browser_tests() -> Result<()> {
    ensure_node_tools()?;
    let chromium = chromium()?;
    if !root().join("www/dist/report.html").is_file() {
        viewer()?;
    }
    // The command line with the viewer inside (build.rs picks up www/dist/report.html).
    run(cargo().args(["build", "--release", "-q", "-p", "inferlint"]))?;
    let mut cmd = Command::new("node");
    cmd.args(["--test", "--test-concurrency=1", "--test-reporter=spec"])
        .arg(root().join(NODE_DIR).join("viewer.test.mjs"))
        .arg(root().join(NODE_DIR).join("replay.test.mjs"))
        .env("CHROMIUM", &chromium)
        .env("INFERLINT_BIN", root().join("target/release/inferlint"))
        .env("INFERLINT_PAGE", root().join("www/dist/index.html"));
    if let Some(f) = recorded() {
        cmd.env("INFERLINT_FIXTURES", f);
    }
    run(&mut cmd)
}
