//! The page: mounts the app on start with the run (or runs) this file carries, if any,
//! and lays out the bar, the drop box and the report of the run shown or the comparison
//! of the runs shown (`crate::sections`).

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{document, mark, request_ready};
use crate::loading::{self, Loader, Shown};
use crate::save::capture_template;
use crate::sections::{CompareView, LoadedView};
use crate::state::{Compared, Loaded};
use crate::theme::{theme_signal, ThemeButton};

/// Starts the page: analyzes the embedded run, if any, and mounts the app in `#app`.
pub fn start() {
    mark("start");
    // Before the app draws into the page: saving copies the page as it came.
    let template = capture_template();
    let initial = loading::embedded();
    let empty = initial.is_none();
    let root: web_sys::HtmlElement = document()
        .get_element_by_id("app")
        .and_then(|e| e.dyn_into().ok())
        .unwrap_or_else(|| document().body().expect("a body"));
    root.set_inner_html("");
    let (one, many) = match initial {
        Some(Shown::One(l)) => (Some(Arc::new(l)), None),
        Some(Shown::Many(c)) => (None, Some(Arc::new(c))),
        None => (None, None),
    };
    let handle = leptos::mount::mount_to(root, move || {
        view! { <App template=template initial=one initial_compared=many /> }
    });
    handle.forget();
    mark("mounted");
    if empty {
        request_ready();
    }
}

#[component]
fn App(
    template: Option<String>,
    initial: Option<Arc<Loaded>>,
    initial_compared: Option<Arc<Compared>>,
) -> impl IntoView {
    let embedded = initial.is_some() || initial_compared.is_some();
    let loaded: RwSignal<Option<Arc<Loaded>>, LocalStorage> = RwSignal::new_local(initial);
    let compared: RwSignal<Option<Arc<Compared>>, LocalStorage> =
        RwSignal::new_local(initial_compared);
    let message: RwSignal<Option<String>> = RwSignal::new(None);
    let theme = theme_signal();
    let template = StoredValue::new(template);
    view! {
        <header class="bar no-print">
            <span class="brand">"inferlint"</span>
            <span class="spacer"></span>
            <ThemeButton theme=theme />
        </header>
        <Loader loaded=loaded compared=compared message=message template=template embedded=embedded />
        <main id="report">
            {move || loaded.get().map(|l| view! { <LoadedView loaded=l theme=theme /> })}
            {move || compared.get().map(|c| view! { <CompareView compared=c theme=theme /> })}
        </main>
    }
}
