//! Getting a run into the page: the one embedded in this file, a folder dropped on the
//! drop box or chosen with a picker (read by `crate::files`), and the same run again with
//! another concurrency asked for. Also the drop box itself, with its pickers, the
//! concurrency field and the "Save as one file" button.

use std::sync::Arc;

use analyzer::analysis::Options;
use analyzer::pack::{self, Pack};
use analyzer::page::RUN_ID;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{document, set_state};
use crate::files::{self, Picked};
use crate::save;
use crate::state::{analyze_pack, Loaded};

/// The run this file carries, analyzed; `None` for the bare page.
pub fn embedded() -> Option<Loaded> {
    let text = document()
        .get_element_by_id(RUN_ID)
        .and_then(|el| el.text_content())
        .filter(|t| !t.trim().is_empty())?;
    let source = "this file".to_string();
    Some(match pack::decode(&text) {
        Ok(p) => analyze_pack(p, source),
        Err(e) => Loaded::unreadable(source, e),
    })
}

/// The concurrency typed into an input: a positive whole number, else none.
fn requested_in(input: &web_sys::HtmlInputElement) -> Option<i64> {
    input.value().trim().parse::<i64>().ok().filter(|&r| r > 0)
}

/// The concurrency typed into the page's field, if any.
fn requested_field() -> Option<i64> {
    document()
        .get_element_by_id("requested")
        .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|e| requested_in(&e))
}

/// A dropped or picked folder, found through the analyzer's own folder discovery.
fn from_picked(p: &Picked, requested: Option<i64>) -> Loaded {
    let input = analyzer::folder::load(
        &p.folder,
        &p.names.iter().map(String::as_str).collect::<Vec<_>>(),
        &|n: &str| {
            p.files
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, b)| Ok(b.clone()))
                .unwrap_or_else(|| Err("not in the folder".to_string()))
        },
    );
    let opts = Options {
        requested,
        ..Options::default()
    };
    let pack = pack::to_pack(&input, &opts, None);
    analyze_pack(pack, format!("the folder {}", p.folder))
}

/// The same run with another concurrency asked for (`None`: the files' own).
fn with_requested(l: &Loaded, requested: Option<i64>) -> Loaded {
    let mut pack: Pack = l.pack.clone();
    pack.options.retain(|(k, _)| k != "requested");
    if let Some(r) = requested {
        pack.options.push(("requested".to_string(), r.to_string()));
    }
    analyze_pack(pack, l.source.clone())
}

fn input_of(ev: &web_sys::Event) -> Option<web_sys::HtmlInputElement> {
    ev.target().and_then(|t| t.dyn_into().ok())
}

/// The drop box: drop or choose a run folder, set the concurrency asked for, save the run
/// shown as one file. `embedded`: the page opened with a run inside.
#[component]
pub fn Loader(
    loaded: RwSignal<Option<Arc<Loaded>>, LocalStorage>,
    message: RwSignal<Option<String>>,
    template: StoredValue<Option<String>>,
    embedded: bool,
) -> impl IntoView {
    let accept = move |picked: Result<Picked, String>| match picked {
        Ok(p) => {
            message.set(None);
            loaded.set(Some(Arc::new(from_picked(&p, requested_field()))));
        }
        Err(e) => {
            message.set(Some(e));
            set_state("ready");
        }
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        set_state("loading");
        message.set(Some("Reading the folder…".into()));
        files::from_drop(ev, accept);
    };
    let on_pick = move |ev: web_sys::Event| {
        let Some(input) = input_of(&ev) else {
            return;
        };
        set_state("loading");
        message.set(Some("Reading the files…".into()));
        files::from_input(input, accept);
    };
    // A new concurrency asked for re-analyzes the run on show (empty: the files' own).
    let on_requested = move |ev: web_sys::Event| {
        let Some(l) = loaded.get_untracked() else {
            return;
        };
        let requested = input_of(&ev).and_then(|e| requested_in(&e));
        set_state("loading");
        loaded.set(Some(Arc::new(with_requested(&l, requested))));
    };
    let on_save = move |_| {
        if let Some(l) = loaded.get_untracked() {
            if let Err(why) = save::save_one_file(template.get_value().as_deref(), &l) {
                message.set(Some(why));
            }
        }
    };

    view! {
        <section
            class="loader no-print"
            class:compact=move || loaded.with(Option::is_some)
            id="drop"
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
            }
            on:drop=on_drop
        >
            <p class="drop-hint">
                {if embedded {
                    "This report carries its run and was recomputed here. Drop another run folder on this box to check it, "
                } else {
                    "Drop a run folder here, "
                }}
                "or choose one: nothing leaves your computer."
            </p>
            <div class="pickers">
                <label class="button">
                    "Choose a folder"
                    <input id="dir" type="file" class="visually-hidden" prop:webkitdirectory=true multiple on:change=on_pick />
                </label>
                <label class="button">
                    "Choose files"
                    <input id="files" type="file" class="visually-hidden" multiple on:change=on_pick />
                </label>
                <label class="requested">
                    "Concurrency asked for "
                    <input id="requested" type="number" min="1" step="1" inputmode="numeric" placeholder="from the files" on:change=on_requested />
                </label>
                <button
                    type="button"
                    id="save"
                    class="button"
                    disabled=move || loaded.with(Option::is_none)
                    on:click=on_save
                >
                    "Save as one file"
                </button>
            </div>
            {move || message.get().map(|m| view! { <p class="message" role="status">{m}</p> })}
        </section>
    }
}
