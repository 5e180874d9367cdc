//! `cargo xtask test` and `cargo xtask ci`: every test, the parity and bad-input trials,
//! formatting, lints and the analyzer's wasm build; the real-engine tier when its
//! environment is there (`real.rs`).

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::browser::browser_tests;
use crate::viewer::viewer;
use crate::{cargo, ensure_wasm_target, recorded, root, run};

pub(crate) fn test() -> Result<()> {
    // The viewer first: the command line embeds it (analyzer/cli/build.rs), and the browser
    // tests below open the one-file reports it writes.
    viewer()?;
    run(cargo().args(["test", "--workspace"]))?;
    match recorded() {
        Some(fixtures) => {
            run(cargo().args(["build", "--release", "-q", "-p", "inferlint"]))?;
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
    browser_tests()?;
    crate::real::in_test()
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
    test()
}
