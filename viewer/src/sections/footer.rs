//! The footer: when the report was made (or shown), in the reader's zone, by which
//! version, from what.

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use crate::dom::now_ms;

/// `generated`: when the one-file report was made; `None` for a run shown live.
#[component]
pub fn Footer(generated: Option<f64>, source: String) -> impl IntoView {
    let when = js_sys::Date::new(&JsValue::from_f64(generated.unwrap_or_else(now_ms)));
    let off = -(when.get_timezone_offset() as i32);
    let zone = if off % 60 == 0 {
        format!("UTC{:+}", off / 60)
    } else {
        format!(
            "UTC{}{}:{:02}",
            if off < 0 { '-' } else { '+' },
            off.abs() / 60,
            off.abs() % 60
        )
    };
    let stamp = format!(
        "{:04}-{:02}-{:02} {:02}:{:02} ({zone})",
        when.get_full_year(),
        when.get_month() + 1,
        when.get_date(),
        when.get_hours(),
        when.get_minutes()
    );
    view! {
        <footer class="foot">
            <p>
                {if generated.is_some() { "Made " } else { "Shown " }}
                {stamp}
                " by inferlint "
                {env!("CARGO_PKG_VERSION")}
                " from "
                {source}
                ". Every figure and chart comes from the run's own files, recomputed in this page by the same analyzer as the command line."
            </p>
        </footer>
    }
}
