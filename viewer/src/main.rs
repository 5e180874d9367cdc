//! inferlint's viewer: the report page, drawn in the browser from a run folder that was
//! dropped on the page, picked, or embedded in a one-file report. Every verdict and figure
//! comes from the analyzer's Report, computed here by the same analyzer compiled to wasm.
//!
//! The page exists only in wasm: `app` (start and layout), `state` (the run shown),
//! `loading` (embedded, dropped or picked runs; the drop box), `files` (reading the
//! browser's files), `save` (save as one file), `sections` (one module per report
//! section), `charts` (a sweep's phases shaded by `phase_bands`, the replay's moment
//! marked by `replay_cursor`), `replay_scene` (the replay's 3D view), `theme` and `dom`. The per-pixel reduction of long series builds
//! natively too, so the workspace's tests and lints cover it. The embedded-run format and
//! the page splicing are the analyzer's (`analyzer::pack`, `analyzer::page`).
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

pub mod reduce;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod charts;
#[cfg(target_arch = "wasm32")]
mod dom;
#[cfg(target_arch = "wasm32")]
mod files;
#[cfg(target_arch = "wasm32")]
mod loading;
#[cfg(target_arch = "wasm32")]
mod phase_bands;
#[cfg(target_arch = "wasm32")]
mod replay_cursor;
#[cfg(target_arch = "wasm32")]
mod replay_scene;
#[cfg(target_arch = "wasm32")]
mod save;
#[cfg(target_arch = "wasm32")]
mod sections;
#[cfg(target_arch = "wasm32")]
mod state;
#[cfg(target_arch = "wasm32")]
mod theme;

fn main() {
    #[cfg(target_arch = "wasm32")]
    app::start();
}
