//! Build facts for the `inferlint` command line: the browser viewer, when it has been
//! built, and the git commit the binaries were built from (both shown by `--version`).
//!
//! `cargo xtask viewer` builds the viewer (trunk, wasm) and inlines it into one file,
//! `www/dist/report.html`; `inferlint analyze` then writes that page with the run's files
//! inside (`src/html.rs`). Without it (a plain `cargo build`) the command line falls back
//! to its plain static page, so building never needs the viewer. `INFERLINT_VIEWER_HTML`
//! names another built page.
//!
//! The commit comes from `git` when the source is a checkout; a build without git or
//! outside a checkout (a source archive) says "unknown", and `INFERLINT_COMMIT` set by
//! whoever builds overrides both.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(inferlint_viewer)");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    viewer(&manifest);
    commit(&manifest);
}

fn viewer(manifest: &Path) {
    println!("cargo:rerun-if-env-changed=INFERLINT_VIEWER_HTML");
    let www = manifest.join("../../www");
    // A folder is watched by the newest change inside it, so the page appearing, changing
    // or going away all rerun this script (www/ always exists; www/dist may not).
    if www.is_dir() {
        println!("cargo:rerun-if-changed={}", www.display());
    }
    let page = std::env::var_os("INFERLINT_VIEWER_HTML")
        .map(PathBuf::from)
        .unwrap_or_else(|| www.join("dist/report.html"));
    if page.is_file() {
        let page = page.canonicalize().unwrap_or(page);
        println!("cargo:rustc-cfg=inferlint_viewer");
        println!("cargo:rustc-env=INFERLINT_VIEWER_HTML={}", page.display());
    }
}

/// Sets `INFERLINT_COMMIT` for the crate: the short commit hash, or "unknown".
fn commit(manifest: &Path) {
    println!("cargo:rerun-if-env-changed=INFERLINT_COMMIT");
    let given = std::env::var("INFERLINT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let found = given
        .is_none()
        .then(|| git(manifest, &["rev-parse", "--short=12", "HEAD"]));
    let commit = given
        .or(found.flatten())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=INFERLINT_COMMIT={}", commit.trim());
    // Rerun when HEAD moves: HEAD itself (a checkout of another branch) and the branch's
    // ref, loose or packed. Only files that exist: a missing one would rerun every build.
    let mut watched = vec![git(manifest, &["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(manifest, &["rev-parse", "--git-path", branch.trim()]));
    }
    watched.push(git(manifest, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.into_iter().flatten() {
        let path = manifest.join(path.trim());
        if path.is_file() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// One line of git's output, run in `dir`; `None` without git or outside a checkout.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then_some(text)
}
