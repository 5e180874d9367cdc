//! Embeds the browser viewer in the `inferlint` command line when it has been built.
//!
//! `cargo xtask viewer` builds the viewer (trunk, wasm) and inlines it into one file,
//! `www/dist/report.html`; `inferlint analyze` then writes that page with the run's files
//! inside (`src/html.rs`). Without it (a plain `cargo build`) the command line falls back to its plain static page, so building never needs
//! the viewer. `INFERLINT_VIEWER_HTML` names another built page.

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(inferlint_viewer)");
    println!("cargo:rerun-if-env-changed=INFERLINT_VIEWER_HTML");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
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
