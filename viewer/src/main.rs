//! inferlint's viewer: the report page, drawn in the browser from a run folder that was
//! dropped on the page, picked, or embedded in a one-file report. Every verdict and figure
//! comes from the analyzer's Report, computed here by the same analyzer compiled to wasm.
//!
//! The page exists only in wasm (`app`, `charts`, `load`, `theme`); the per-pixel
//! reduction of long series builds natively too, so the workspace's tests and lints cover
//! it. The embedded-run format is the analyzer's (`analyzer::pack`).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

pub mod reduce;

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
