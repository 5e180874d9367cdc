//! `cargo xtask test` and `cargo xtask ci`: every test, the parity and bad-input trials
//! (the shared one and the project's `tests/trials/bad_input.py`), formatting, lints, the
//! analyzer's wasm build and a short run of every fuzz target; the real-engine tier when
//! its environment is there (`real.rs`); the fleet tier, its tools installed when missing
//! (`fleet.rs`); the load-tools tier, AIPerf installed when missing and GuideLLM when asked
//! (`loadtools.rs`); the wheel installed as a user installs it (`dist.rs`).

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::browser::browser_tests_with;
use crate::viewer::viewer;
use crate::{cargo, ensure_wasm_target, recorded, root, run};

pub(crate) fn test() -> Result<()> {
    // The viewer first: the command line embeds it (analyzer/cli/build.rs), and the browser
    // tests below open the one-file reports it writes.
    viewer()?;
    run(cargo().args(["test", "--workspace"]))?;
    // The wheel, installed and run as a user would (`dist.rs`). Its release binaries (the
    // ones users get) serve every step below: one release build instead of two.
    let release = crate::dist::in_test()?;
    let bin = release.join("inferlint");
    // The project's own corrupted-input trial: one named case per hostile change.
    run(Command::new("python3")
        .arg(root().join("tests/trials/bad_input.py"))
        .arg(&bin)
        .arg(release.join("inferlint-recorder"))
        .arg(root().join("fixtures/recorded")))?;
    match recorded() {
        Some(fixtures) => {
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
    browser_tests_with(&bin)?;
    crate::fleet::in_test()?;
    crate::real::in_test()?;
    crate::loadtools::in_test()
}

pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
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

pub(crate) fn ci() -> Result<()> {
    ensure_wasm_target()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    crate::tidy::tidy()?;
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
        "--lib",
    ]))?;
    // The page itself exists only in wasm: the workspace's clippy above sees none of it.
    run(cargo().args([
        "clippy",
        "-p",
        "viewer",
        "--target",
        "wasm32-unknown-unknown",
        "--",
        "-D",
        "warnings",
    ]))?;
    // Every fuzz target for a short while (the long run is `cargo xtask fuzz-campaign`);
    // INFERLINT_CI_FUZZ_SECONDS sets the seconds per target, 0 skips it.
    let seconds = std::env::var("INFERLINT_CI_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(crate::fuzz::CI_SECONDS);
    if seconds > 0 {
        crate::fuzz::fuzz(&["--seconds".to_string(), seconds.to_string()], false)?;
    }
    test()
}
