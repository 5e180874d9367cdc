//! The light and dark themes: which one is in effect, the switch that flips it (and
//! remembers the choice), and a counter that moves whenever it changes so the charts
//! redraw in the new colours.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{document, window};

/// Whether the page shows the dark theme: the reader's choice, else the system's.
pub fn is_dark() -> bool {
    let set = document()
        .document_element()
        .and_then(|e| e.get_attribute("data-theme"));
    match set.as_deref() {
        Some("dark") => true,
        Some("light") => false,
        _ => window()
            .match_media("(prefers-color-scheme: dark)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches()),
    }
}

/// Moves `theme` when the system's theme changes.
fn watch_system(theme: RwSignal<u32>) {
    let Some(mq) = window()
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
    else {
        return;
    };
    let cb = Closure::<dyn Fn()>::new(move || theme.update(|v| *v += 1));
    let _ = mq.add_event_listener_with_callback("change", cb.as_ref().unchecked_ref());
    cb.forget();
}

/// The theme counter: it moves when the system's theme changes or the reader flips it,
/// and `data-effective-theme` on `<html>` follows it for the print styles (dark charts are
/// inverted on paper).
pub fn theme_signal() -> RwSignal<u32> {
    let theme = RwSignal::new(0u32);
    watch_system(theme);
    Effect::new(move |_| {
        theme.track();
        if let Some(el) = document().document_element() {
            let t = if is_dark() { "dark" } else { "light" };
            let _ = el.set_attribute("data-effective-theme", t);
        }
    });
    theme
}

/// The switch between the light and the dark theme; the choice is kept in local storage
/// (read back before the first paint by `www/index.html`).
#[component]
pub fn ThemeButton(theme: RwSignal<u32>) -> impl IntoView {
    let dark = move || {
        theme.track();
        is_dark()
    };
    let flip = move |_| {
        let next = if is_dark() { "light" } else { "dark" };
        if let Some(el) = document().document_element() {
            let _ = el.set_attribute("data-theme", next);
        }
        if let Ok(Some(s)) = window().local_storage() {
            let _ = s.set_item("inferlint-theme", next);
        }
        theme.update(|v| *v += 1);
    };
    view! {
        <button type="button" id="theme" class="button" aria-pressed=move || dark().to_string() on:click=flip>
            <span aria-hidden="true">{move || if dark() { "☾ " } else { "☀ " }}</span>
            {move || if dark() { "Dark theme" } else { "Light theme" }}
        </button>
    }
}
