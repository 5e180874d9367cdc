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

fn demo() -> Result<()> {
    // Until the recorder can record a run against the engine simulator, the demo checks
    // a hand-made run folder of the project's own.
    run(cargo().args(["build", "--release", "-q", "-p", "analyzer"]))?;
    let dir = std::env::temp_dir().join("inferlint-demo");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let src = root().join("fixtures/edge/restart");
    for e in std::fs::read_dir(&src)?.flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name()))?;
    }
    let status = Command::new(root().join("target/release/inferlint"))
        .arg("analyze")
        .arg(&dir)
        .status()?;
    eprintln!(
        "== inferlint exited with {status}; the report is in {}",
        dir.display()
    );
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
