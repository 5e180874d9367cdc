//! Getting runs into the page: the one (or the several, for a comparison) embedded in
//! this file, folders dropped on the drop box or chosen with a picker (read by
//! `crate::files`; two or more are compared), and the same runs again with another
//! concurrency asked for. Also the drop box itself, with its pickers, the concurrency field
//! and the "Save as one file" button.

use std::sync::Arc;

use analyzer::analysis::Options;
use analyzer::pack::{self, Carried, Pack, Packs};
use analyzer::page::RUN_ID;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{document, mark, set_state};
use crate::files::{self, Picked};
use crate::save;
use crate::state::{analyze_pack, compare_packs, Compared, Loaded};

/// What the page shows: one run, or several compared.
pub enum Shown {
    One(Loaded),
    Many(Compared),
}

/// The run (or runs) this file carries, analyzed; `None` for the bare page.
pub fn embedded() -> Option<Shown> {
    let text = document()
        .get_element_by_id(RUN_ID)
        .and_then(|el| el.text_content())
        .filter(|t| !t.trim().is_empty())?;
    let source = "this file".to_string();
    // Files carried as columns stay columns: the series is read from them into its rows.
    let carried = pack::decode_any_keeping_columns(&text);
    mark("unpacked");
    let shown = match carried {
        Ok(Carried::One(p)) => Shown::One(analyze_pack(p, source)),
        Ok(Carried::Many(p)) => Shown::Many(compare_packs(p, source)),
        Err(e) => Shown::One(Loaded::unreadable(source, e)),
    };
    mark("analyzed");
    Some(shown)
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

/// A dropped or picked folder's files and options, found through the analyzer's own
/// folder discovery.
fn pack_of(p: &Picked, requested: Option<i64>) -> Pack {
    let mut input = analyzer::folder::load(
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
    // A fleet: its replicas' and router's files, by path under the folder.
    if input.fleet.is_some() {
        let paths: Vec<&str> = p.sub.iter().map(|(n, _)| n.as_str()).collect();
        let found = analyzer::fleet::load_files(&p.folder, &paths, &|rel: &str| {
            p.sub
                .iter()
                .find(|(n, _)| n == rel)
                .and_then(|(_, b)| b.clone())
                .ok_or_else(|| "not read: too large to read here".to_string())
        });
        input.replicas = found.replicas;
        input.router = found.router;
        input.skipped.extend(found.skipped);
    }
    let opts = Options {
        requested,
        ..Options::default()
    };
    pack::to_pack(&input, &opts, None)
}

/// Several dropped or picked folders, compared; each column labelled by the shortest
/// part of its folder's path that tells it from the others.
fn from_many(picked: &[Picked], requested: Option<i64>) -> Compared {
    let folders: Vec<&str> = picked.iter().map(|p| p.folder.as_str()).collect();
    let labels = analyzer::compare::labels(&folders);
    let packs = Packs {
        generated_ms: None,
        options: Vec::new(),
        runs: labels
            .into_iter()
            .zip(picked)
            .map(|(label, p)| (label, pack_of(p, requested)))
            .collect(),
    };
    compare_packs(packs, format!("{} folders", picked.len()))
}

/// The same runs with another concurrency asked for (`None`: the files' own).
fn many_with_requested(c: &Compared, requested: Option<i64>) -> Compared {
    let mut packs = c.packs.clone();
    for (_, p) in &mut packs.runs {
        p.options.retain(|(k, _)| k != "requested");
        if let Some(r) = requested {
            p.options.push(("requested".to_string(), r.to_string()));
        }
    }
    compare_packs(packs, c.source.clone())
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
    compared: RwSignal<Option<Arc<Compared>>, LocalStorage>,
    message: RwSignal<Option<String>>,
    template: StoredValue<Option<String>>,
    embedded: bool,
) -> impl IntoView {
    let accept = move |picked: Result<Vec<Picked>, String>| match picked {
        Ok(p) if p.len() == 1 => {
            message.set(None);
            compared.set(None);
            let pack = pack_of(&p[0], requested_field());
            let source = format!("the folder {}", p[0].folder);
            loaded.set(Some(Arc::new(analyze_pack(pack, source))));
        }
        Ok(p) => {
            message.set(None);
            loaded.set(None);
            compared.set(Some(Arc::new(from_many(&p, requested_field()))));
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
        let requested = input_of(&ev).and_then(|e| requested_in(&e));
        if let Some(c) = compared.get_untracked() {
            set_state("loading");
            compared.set(Some(Arc::new(many_with_requested(&c, requested))));
            return;
        }
        let Some(l) = loaded.get_untracked() else {
            return;
        };
        set_state("loading");
        loaded.set(Some(Arc::new(with_requested(&l, requested))));
    };
    let on_save = move |_| {
        let template = template.get_value();
        let saved = if let Some(c) = compared.get_untracked() {
            save::save_compared(template.as_deref(), &c)
        } else if let Some(l) = loaded.get_untracked() {
            save::save_one_file(template.as_deref(), &l)
        } else {
            Ok(())
        };
        if let Err(why) = saved {
            message.set(Some(why));
        }
    };

    view! {
        <section
            class="loader no-print"
            class:compact=move || loaded.with(Option::is_some) || compared.with(Option::is_some)
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
                    "Drop a run folder here (two or more to compare them), "
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
                    disabled=move || loaded.with(Option::is_none) && compared.with(Option::is_none)
                    on:click=on_save
                >
                    "Save as one file"
                </button>
            </div>
            {move || message.get().map(|m| view! { <p class="message" role="status">{m}</p> })}
        </section>
    }
}
