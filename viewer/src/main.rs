//! inferlint's viewer: the report page, drawn in the browser from a run folder that was
//! dropped on the page, picked, or embedded in a one-file report. Every verdict and figure
//! comes from the analyzer's Report, computed here by the same analyzer compiled to wasm.
//!
//! The page exists only in wasm (`app`, `charts`, `load`, `theme`); the pure parts
//! (the embedded-run format, its decoding, the per-pixel reduction of long series) build
//! natively too, so the workspace's tests and lints cover them.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

/// The embedded-run format, shared with the `inferlint` command line.
#[path = "../../analyzer/src/cli/html/pack.rs"]
pub mod pack;
pub mod reduce;
pub mod run;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod charts;
#[cfg(target_arch = "wasm32")]
mod load;

fn main() {
    #[cfg(target_arch = "wasm32")]
    app::start();
}
