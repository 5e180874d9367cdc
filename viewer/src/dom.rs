//! The browser's window and document, and the marks the page leaves on `<html>` for tests
//! and timing (`data-state`, `data-ready-ms`, and the `performance` marks of how the
//! embedded run opened, read by `cargo xtask first-paint`).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub fn window() -> web_sys::Window {
    web_sys::window().expect("a window")
}

pub fn document() -> web_sys::Document {
    window().document().expect("a document")
}

/// Marks the page for tests and timing: `data-state` on `<html>`.
pub fn set_state(state: &str) {
    if let Some(el) = document().document_element() {
        let _ = el.set_attribute("data-state", state);
    }
}

/// Leaves the performance mark `inferlint:{name}` (a step of opening the embedded run).
pub fn mark(name: &str) {
    if let Some(p) = window().performance() {
        let _ = p.mark(&format!("inferlint:{name}"));
    }
}

/// Milliseconds since the epoch, the browser's clock.
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Sets `data-state="ready"` after the next two frames: by then every chart's effect has
/// drawn and the browser has painted.
pub fn request_ready() {
    let cb = Closure::once_into_js(move || {
        let cb2 = Closure::once_into_js(move || {
            let ms = window().performance().map(|p| p.now()).unwrap_or(0.0);
            if let Some(el) = document().document_element() {
                let _ = el.set_attribute("data-ready-ms", &format!("{ms:.0}"));
            }
            set_state("ready");
        });
        let _ = window().request_animation_frame(cb2.unchecked_ref());
    });
    let _ = window().request_animation_frame(cb.unchecked_ref());
}
