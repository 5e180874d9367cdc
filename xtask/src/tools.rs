//! The pinned tools the viewer and its browser tests need, installed only when missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::{cargo, ensure_wasm_target, root, run};

// The browser viewer: tools, build, inlining into one file, browser tests.
//
// Every tool comes from crates.io, npm or Debian, pinned, and is installed only when it is
// missing (or at another version); nothing is downloaded at build time (trunk runs
// offline). Each pin's reason is written beside it.

/// trunk: 0.22 needs a newer rustc than the project's.
pub(crate) const TRUNK: &str = "0.21.14";
/// The npm tools (binaryen's wasm-opt 132, playwright-core) live here.
pub(crate) const NODE_DIR: &str = "tests/browser";

pub(crate) fn output(cmd: &mut Command) -> Option<String> {
    let o = cmd.output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

pub(crate) fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
        .join("bin")
}

/// PATH with cargo's bin folder and the npm tools first.
pub(crate) fn tool_path() -> std::ffi::OsString {
    let mut dirs = vec![cargo_bin(), root().join(NODE_DIR).join("node_modules/.bin")];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

pub(crate) fn tool(name: &str) -> Command {
    let mut c = Command::new(name);
    c.env("PATH", tool_path());
    c
}

/// The wasm-bindgen crate version in Cargo.lock: the CLI must be exactly that version.
pub(crate) fn locked_version(krate: &str) -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == format!("name = \"{krate}\"") {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    bail!("{krate} is not in Cargo.lock")
}

pub(crate) fn has_version(name: &str, version: &str) -> bool {
    output(tool(name).arg("--version")).is_some_and(|v| v.split_whitespace().any(|w| w == version))
}

pub(crate) fn ensure_viewer_tools() -> Result<()> {
    ensure_wasm_target()?;
    if !has_version("trunk", TRUNK) {
        run(cargo().args(["install", "trunk", "--version", TRUNK, "--locked"]))?;
    }
    let wb = locked_version("wasm-bindgen")?;
    if !has_version("wasm-bindgen", &wb) {
        // Without --locked: its own lockfile pins a crate version this registry lacks.
        run(cargo().args(["install", "wasm-bindgen-cli", "--version", &wb]))?;
    }
    ensure_node_tools()
}

/// npm's binaryen (wasm-opt 132; Debian's binaryen makes a wasm that fails to start) and
/// playwright-core, from tests/browser/package-lock.json.
pub(crate) fn ensure_node_tools() -> Result<()> {
    let dir = root().join(NODE_DIR);
    let bin = dir.join("node_modules/.bin");
    if bin.join("wasm-opt").exists() && dir.join("node_modules/playwright-core").is_dir() {
        return Ok(());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir))
}

/// Chromium for the browser tests: Debian's, installed when missing and allowed (root).
pub(crate) fn chromium() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).is_file() {
            return Ok(PathBuf::from(p));
        }
    }
    if !is_root() {
        bail!("Chromium is missing: install it (apt-get install chromium) or set CHROMIUM");
    }
    run(Command::new("apt-get").arg("update"))?;
    run(Command::new("apt-get").args(["install", "-y", "chromium"]))?;
    Ok(PathBuf::from("/usr/bin/chromium"))
}

/// Whether this process runs as root (may install Debian packages).
pub(crate) fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_some_and(|u| u.trim() == "0")
}

/// Where a heavy tier keeps its environment: `target/<name>` under the project, as a
/// plain path (it ends up in the recorded folders' commands and logs).
pub(crate) fn tier_home(name: &str) -> PathBuf {
    let root = std::fs::canonicalize(root()).unwrap_or_else(|_| root());
    root.join("target").join(name)
}

/// A heavy tier's Python environment: the one `$var` names (used as it is, never changed),
/// else `target/<name>/venv`; and whether `$var` named it.
pub(crate) fn tier_venv(var: &str, name: &str) -> (PathBuf, bool) {
    match std::env::var_os(var) {
        Some(v) => (PathBuf::from(v), true),
        None => (tier_home(name).join("venv"), false),
    }
}

/// `pip install` with an environment's own Python (quiet about pip's own version); the
/// caller adds what to install.
pub(crate) fn pip_install(venv: &Path) -> Command {
    let mut c = Command::new(venv.join("bin/python"));
    c.args(["-m", "pip", "--disable-pip-version-check", "install"]);
    c
}

/// A Python's "major.minor", when it runs.
pub(crate) fn python_version(python: &str) -> Option<String> {
    output(Command::new(python).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]))
        .map(|v| v.trim().to_string())
}
