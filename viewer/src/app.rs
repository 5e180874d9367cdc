//! The page: loading a run (embedded, dropped or picked), the analysis, and the report
//! in the order of report.md §2. Every string from the inputs goes into text nodes.

use std::sync::Arc;

use analyzer::analysis::{Analysis, AnalyzeError, Options};
use analyzer::catalog;
use analyzer::insights::charts::{BarChart, TimeChart};
use analyzer::report::{Report, Tile};
use analyzer::verdict::{CheckResult, Status};
use analyzer::Engine;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::charts::{BarChartView, TimeChartView};
use crate::load::{self, Picked};
use analyzer::pack::{self, Pack};

/// The element that carries an embedded run.
pub const RUN_ID: &str = "inferlint-run";

/// The charts, each shared (a 24-hour run's series are large: never copied).
#[derive(Clone, Default)]
pub struct SharedCharts {
    pub note: Option<String>,
    pub cache: Option<Arc<BarChart>>,
    pub requests: Option<Arc<TimeChart>>,
    pub kv: Option<Arc<TimeChart>>,
    pub tokens: Option<Arc<TimeChart>>,
    pub levels: Option<Arc<BarChart>>,
    pub pools: Option<Arc<BarChart>>,
    pub memory: Option<Arc<BarChart>>,
}

/// An analysis as the page shows it.
pub struct Shown {
    /// The Report without its chart data (moved to `charts`).
    pub report: Arc<Report>,
    pub charts: SharedCharts,
    pub errors: Vec<analyzer::input::InputError>,
    pub notes: Vec<String>,
}

impl Shown {
    fn new(a: Analysis) -> Shown {
        let mut report = a.report;
        let c = std::mem::take(&mut report.charts);
        Shown {
            report: Arc::new(report),
            charts: SharedCharts {
                note: c.note,
                cache: c.cache.map(Arc::new),
                requests: c.requests.map(Arc::new),
                kv: c.kv.map(Arc::new),
                tokens: c.tokens.map(Arc::new),
                levels: c.levels.map(Arc::new),
                pools: c.pools.map(Arc::new),
                memory: c.memory.map(Arc::new),
            },
            errors: a.errors,
            notes: a.notes,
        }
    }
}

/// A run the page shows.
pub struct Loaded {
    /// Where it came from ("report.html", "the folder live").
    pub source: String,
    pub result: Result<Shown, String>,
    /// The run's files, to save as a one-file report.
    pub pack: Pack,
    /// When the one-file report was made (else now).
    pub generated_ms: Option<f64>,
}

fn window() -> web_sys::Window {
    web_sys::window().expect("a window")
}

fn document() -> web_sys::Document {
    window().document().expect("a document")
}

/// Marks the page for tests and timing: `data-state` on `<html>`.
fn set_state(state: &str) {
    if let Some(el) = document().document_element() {
        let _ = el.set_attribute("data-state", state);
    }
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Minutes east of UTC in the reader's zone.
fn local_offset_min() -> i32 {
    -(js_sys::Date::new_0().get_timezone_offset() as i32)
}

/// Analyzes a pack with the same analyzer as the terminal.
pub fn analyze_pack(pack: Pack, source: String) -> Loaded {
    let (input, mut opts) = pack::from_pack(&pack);
    opts.utc_offset_min = local_offset_min();
    let result = match analyzer::analyze(&input, &opts) {
        Ok(a) => Ok(Shown::new(a)),
        Err(AnalyzeError::NothingUsable(errors)) => Err(format!(
            "No usable run file. {}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Err(AnalyzeError::NoRunFiles) => Err(
            "No run files here: a run folder holds a boot log, before/after snapshots, a series \
             (*.series.jsonl), gate.json, probe.json or teardown.json."
                .to_string(),
        ),
        Err(e) => Err(e.to_string()),
    };
    Loaded {
        generated_ms: pack.generated_ms,
        source,
        result,
        pack,
    }
}

/// The page as it was before the viewer touched it, to save one-file reports from.
fn capture_template() -> Option<String> {
    // Only the one-file build carries the wasm inside; a page that loads it from a URL
    // cannot be saved as one offline file.
    document().get_element_by_id("inferlint-wasm")?;
    let html = document().document_element()?;
    let clone: web_sys::Element = html.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    for attr in [
        "data-theme",
        "data-state",
        "data-effective-theme",
        "data-ready-ms",
    ] {
        let _ = clone.remove_attribute(attr);
    }
    Some(clone.outer_html())
}

/// The template with `pack` in the run element (the text is inert JSON, see `pack`).
fn one_file(template: &str, pack: &Pack, title: &str) -> Option<String> {
    let marker = format!("<script type=\"application/json\" id=\"{RUN_ID}\">");
    let start = template.find(&marker)? + marker.len();
    let end = start + template[start..].find("</script>")?;
    let mut out = String::with_capacity(template.len() + 1024);
    out.push_str("<!DOCTYPE html>\n");
    let head = &template[..start];
    // The tab title: the run's title, escaped.
    let head = match (head.find("<title>"), head.find("</title>")) {
        (Some(a), Some(b)) if a < b => format!(
            "{}<title>{}</title>{}",
            &head[..a],
            esc(title),
            &head[b + "</title>".len()..]
        ),
        _ => head.to_string(),
    };
    out.push_str(&head);
    out.push_str(&pack::encode(pack));
    out.push_str(&template[end..]);
    Some(out)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Offers `text` as a download named `name`.
fn download(name: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/html");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = document().create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

pub fn start() {
    let template = capture_template();
    let embedded = document()
        .get_element_by_id(RUN_ID)
        .and_then(|el| el.text_content())
        .filter(|t| !t.trim().is_empty());
    let empty = embedded.is_none();
    let initial = embedded.map(|text| match pack::decode(&text) {
        Ok(p) => analyze_pack(p, "this file".to_string()),
        Err(e) => Loaded {
            source: "this file".to_string(),
            result: Err(e),
            pack: Pack::default(),
            generated_ms: None,
        },
    });
    let root: web_sys::HtmlElement = document()
        .get_element_by_id("app")
        .and_then(|e| e.dyn_into().ok())
        .unwrap_or_else(|| document().body().expect("a body"));
    root.set_inner_html("");
    let handle = leptos::mount::mount_to(root, move || {
        view! { <App template=template initial=initial.map(Arc::new) /> }
    });
    handle.forget();
    if empty {
        request_ready();
    }
}

#[component]
fn App(template: Option<String>, initial: Option<Arc<Loaded>>) -> impl IntoView {
    let embedded = initial.is_some();
    let loaded: RwSignal<Option<Arc<Loaded>>, LocalStorage> = RwSignal::new_local(initial);
    let message: RwSignal<Option<String>> = RwSignal::new(None);
    let theme = RwSignal::new(0u32);
    crate::charts::watch_theme(theme);
    // The theme in effect, for print styles (dark charts are inverted on paper).
    Effect::new(move |_| {
        theme.track();
        if let Some(el) = document().document_element() {
            let t = if crate::charts::is_dark() {
                "dark"
            } else {
                "light"
            };
            let _ = el.set_attribute("data-effective-theme", t);
        }
    });
    let template = StoredValue::new(template);

    let accept = move |picked: Result<Picked, String>| match picked {
        Ok(p) => {
            message.set(None);
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
            let requested = document()
                .get_element_by_id("requested")
                .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|e| e.value().trim().parse::<i64>().ok())
                .filter(|&r| r > 0);
            let opts = Options {
                requested,
                ..Options::default()
            };
            let pack = pack::to_pack(&input, &opts, None);
            let l = analyze_pack(pack, format!("the folder {}", p.folder));
            loaded.set(Some(Arc::new(l)));
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
        load::from_drop(ev, accept);
    };
    let on_pick = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        set_state("loading");
        message.set(Some("Reading the files…".into()));
        load::from_input(input, accept);
    };
    // A new concurrency asked for re-analyzes the run on show (empty: the files' own).
    let on_requested = move |ev: web_sys::Event| {
        let Some(l) = loaded.get_untracked() else {
            return;
        };
        let value = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            .and_then(|e| e.value().trim().parse::<i64>().ok())
            .filter(|&r| r > 0);
        let mut pack = l.pack.clone();
        pack.options.retain(|(k, _)| k != "requested");
        if let Some(r) = value {
            pack.options.push(("requested".to_string(), r.to_string()));
        }
        set_state("loading");
        loaded.set(Some(Arc::new(analyze_pack(pack, l.source.clone()))));
    };
    let save = move |_| {
        let Some(l) = loaded.get_untracked() else {
            return;
        };
        let Some(t) = template.get_value() else {
            message.set(Some(
                "Saving needs the one-file page (www/dist/index.html as built by `cargo xtask viewer`)."
                    .into(),
            ));
            return;
        };
        let mut pack = l.pack.clone();
        pack.generated_ms = Some(now_ms());
        let title = l
            .result
            .as_ref()
            .map(|a| a.report.title.clone())
            .unwrap_or_else(|_| "inferlint report".into());
        match one_file(&t, &pack, &title) {
            Some(html) => {
                if download("report.html", &html).is_err() {
                    message.set(Some("The browser refused the download.".into()));
                }
            }
            None => message.set(Some("This page has no place for an embedded run.".into())),
        }
    };

    view! {
        <header class="bar no-print">
            <span class="brand">"inferlint"</span>
            <span class="spacer"></span>
            <ThemeButton theme=theme />
        </header>
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
                    on:click=save
                >
                    "Save as one file"
                </button>
            </div>
            {move || message.get().map(|m| view! { <p class="message" role="status">{m}</p> })}
        </section>
        <main id="report">
            {move || {
                loaded
                    .get()
                    .map(|l| {
                        view! { <LoadedView loaded=l theme=theme /> }
                    })
            }}
        </main>
    }
}

#[component]
fn ThemeButton(theme: RwSignal<u32>) -> impl IntoView {
    let dark = move || {
        theme.track();
        crate::charts::is_dark()
    };
    let flip = move |_| {
        let next = if crate::charts::is_dark() {
            "light"
        } else {
            "dark"
        };
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

#[component]
fn LoadedView(loaded: Arc<Loaded>, theme: RwSignal<u32>) -> impl IntoView {
    let generated = loaded.generated_ms;
    let source = loaded.source.clone();
    let view = match &loaded.result {
        Err(e) => view! {
            <div class="errors" role="alert" data-error="run">
                <p><strong>"This run could not be analyzed"</strong>" ("{source.clone()}")."</p>
                <p>{e.clone()}</p>
            </div>
        }
        .into_any(),
        Ok(a) => {
            let errors = a.errors.clone();
            let notes = a.notes.clone();
            let report = a.report.clone();
            view! {
                <Header report=report.clone() errors=errors notes=notes />
                <ReportBody report=report charts=a.charts.clone() theme=theme />
                <Footer generated=generated source=source.clone() />
            }
            .into_any()
        }
    };
    // Marks the page complete once the charts have drawn (see `charts`).
    request_ready();
    view
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

fn badge(s: Status) -> impl IntoView {
    let icon = match s {
        Status::Fail => "✖",
        Status::Warn => "▲",
        Status::Unknown => "?",
        Status::Pass => "✔",
        Status::NotApplicable => "–",
    };
    view! {
        <span class=format!("badge {}", s.as_str())>
            <span class="icon" aria-hidden="true">{icon}</span>
            " "
            {s.report_label()}
        </span>
    }
}

#[component]
fn Header(
    report: Arc<Report>,
    errors: Vec<analyzer::input::InputError>,
    notes: Vec<String>,
) -> impl IntoView {
    let meta = report.meta.join(" · ");
    view! {
        <header class="report-head">
            <h1 id="title">{report.title.clone()}</h1>
            {(!meta.is_empty()).then(|| view! { <p class="meta" id="meta">{meta}</p> })}
            {report.version_note.clone().map(|n| view! { <p class="note">{n}</p> })}
            {report
                .banner
                .clone()
                .map(|b| {
                    view! {
                        <div class="banner" role="alert" data-banner=b.state.clone()>
                            <strong>"The recording did not complete: "{b.state.clone()}"."</strong>
                            {b.stage.map(|s| view! { " It stopped at: "{s}"." })}
                            {b.problem.map(|p| view! { " "{p} })}
                            " The sections below cover only the part that was recorded."
                        </div>
                    }
                })}
            {(!errors.is_empty())
                .then(|| {
                    view! {
                        <div class="errors" role="alert" id="input-errors">
                            <p>
                                <strong>
                                    {if errors.len() == 1 {
                                        "One file could not be read. ".to_string()
                                    } else {
                                        format!("{} files could not be read. ", errors.len())
                                    }}
                                </strong>
                                "The checks that need it say “Can't tell”; every other result below stands."
                            </p>
                            <ul>
                                {errors
                                    .into_iter()
                                    .map(|e| {
                                        view! {
                                            <li data-file=e.file.clone()>
                                                <code>{e.file.clone()}</code>
                                                {e.line.map(|l| format!(", line {l}"))}
                                                ": "
                                                {e.reason.clone()}
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        </div>
                    }
                })}
            {(!notes.is_empty())
                .then(|| {
                    view! {
                        <details class="notes">
                            <summary>"Notes from reading the files ("{notes.len()}")"</summary>
                            <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        </details>
                    }
                })}
        </header>
    }
}

#[component]
fn ReportBody(report: Arc<Report>, charts: SharedCharts, theme: RwSignal<u32>) -> impl IntoView {
    let engine = report.engine.unwrap_or(Engine::Vllm);
    view! {
        <Limits report=report.clone() />
        <Happened report=report.clone() />
        <Results report=report.clone() />
        <ChartsSection charts=charts.clone() theme=theme />
        <Server report=report.clone() memory=charts.memory.clone() theme=theme />
        <Guide engine=engine />
    }
}

#[component]
fn Limits(report: Arc<Report>) -> impl IntoView {
    (!report.limits.is_empty()).then(|| {
        view! {
            <section id="limits" aria-labelledby="limits-h">
                <h2 id="limits-h">"What limited this run"</h2>
                <ul class="limits">
                    {report
                        .limits
                        .iter()
                        .map(|l| {
                            view! {
                                <li class=format!("limit {}", l.tone) data-key=l.key.clone() data-tone=l.tone.clone()>
                                    <span class="tone">
                                        <span aria-hidden="true">{if l.tone == "limit" { "◆ " } else { "◇ " }}</span>
                                        {if l.tone == "limit" { "Held the run back" } else { "Not a limit" }}
                                    </span>
                                    <h3>{l.title.clone()}</h3>
                                    <p>{l.text.clone()}</p>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </section>
        }
    })
}

fn facts_list(id: &'static str, facts: &[analyzer::report::Fact]) -> impl IntoView {
    view! {
        <dl class="facts" id=id>
            {facts
                .iter()
                .map(|f| {
                    view! {
                        <div class="fact">
                            <dt>{f.label.clone()}</dt>
                            <dd>{f.value.clone()}</dd>
                        </div>
                    }
                })
                .collect_view()}
        </dl>
    }
}

fn tile(t: &Tile) -> impl IntoView {
    view! {
        <div class="tile" data-key=t.key.clone() data-status=t.status.map(|s| s.as_str().to_string())>
            <div class="tile-label">{t.label.clone()} {t.status.map(badge)}</div>
            <div class="tile-value">{t.value.clone()}</div>
            <div class="tile-sub">{t.sub.clone()}</div>
        </div>
    }
}

#[component]
fn Happened(report: Arc<Report>) -> impl IntoView {
    view! {
        <section id="happened" aria-labelledby="happened-h">
            <h2 id="happened-h">"What happened"</h2>
            {report.account.clone().map(|a| view! { <p class="account" id="account">{a}</p> })}
            {(!report.tiles.is_empty())
                .then(|| {
                    view! { <div class="tiles" id="tiles">{report.tiles.iter().map(tile).collect_view()}</div> }
                })}
            <div class="two">
                {(!report.test.is_empty())
                    .then(|| {
                        view! {
                            <div>
                                <h3>"The test"</h3>
                                {facts_list("test", &report.test)}
                            </div>
                        }
                    })}
                {(!report.setup.is_empty())
                    .then(|| {
                        view! {
                            <div>
                                <h3>"The setup"</h3>
                                {facts_list("setup", &report.setup)}
                            </div>
                        }
                    })}
            </div>
            {(!report.glossary.is_empty())
                .then(|| {
                    view! {
                        <details class="glossary" id="glossary">
                            <summary>"Words used in this report"</summary>
                            <dl>
                                {report
                                    .glossary
                                    .iter()
                                    .map(|(k, v)| {
                                        view! {
                                            <dt>{k.clone()}</dt>
                                            <dd>{v.clone()}</dd>
                                        }
                                    })
                                    .collect_view()}
                            </dl>
                        </details>
                    }
                })}
        </section>
    }
}

fn evidence_value(v: &analyzer::json::Json) -> String {
    match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_compact(),
    }
}

fn finding(c: &CheckResult, engine: Engine, full: bool) -> impl IntoView {
    let t = catalog::get(c.tripwire);
    let why = if full { t.map(|t| t.why) } else { None };
    let note = t.map(|t| t.engine_note(engine)).filter(|n| !n.is_empty());
    let reproduce = t.map(|t| t.reproduce);
    let evidence = c.evidence.clone();
    view! {
        <li class=format!("finding {}", c.status.as_str()) data-tripwire=c.id() data-status=c.status.as_str()>
            <div class="finding-head">
                {badge(c.status)}
                " "
                <span class="tid">{c.id()}</span>
                " "
                <span class="slug">{c.name()}</span>
                {c.source.clone().map(|s| view! { <span class="source">" · from "{s}</span> })}
            </div>
            <p class="message">{c.message.clone()}</p>
            {why.map(|w| view! { <p class="why">{w}</p> })}
            <details class="evidence">
                <summary>"Evidence and how to check it again"</summary>
                {(!evidence.is_empty())
                    .then(|| {
                        view! {
                            <table class="kv">
                                <tbody>
                                    {evidence
                                        .iter()
                                        .map(|(k, v)| {
                                            view! {
                                                <tr>
                                                    <th scope="row">{k.clone()}</th>
                                                    <td>{evidence_value(v)}</td>
                                                </tr>
                                            }
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                        }
                    })}
                {note.map(|n| view! { <p class="engine-note">{n}</p> })}
                {reproduce.map(|r| view! { <p class="reproduce">"Check it again: "<code>{r}</code></p> })}
            </details>
        </li>
    }
}

const MEANINGS: [(Status, &str); 5] = [
    (
        Status::Fail,
        "The tripwire caught its problem in this run. Read the finding, fix the cause and run \
         again, or report the number together with the finding.",
    ),
    (
        Status::Warn,
        "Something may distort the numbers without proving they are wrong. Keep the warning \
         with the results.",
    ),
    (
        Status::Unknown,
        "The files could not decide. Supply the file named in the message, or check the \
         engine's version; never read it as a pass.",
    ),
    (
        Status::Pass,
        "Checked and fine. Nothing to do; it covers this run only.",
    ),
    (
        Status::NotApplicable,
        "The check does not concern this engine or this kind of run. Nothing to do.",
    ),
];

#[component]
fn Results(report: Arc<Report>) -> impl IntoView {
    let engine = report.engine.unwrap_or(Engine::Vllm);
    let mut checks = report.checks.clone();
    checks.sort_by_key(|c| (c.status, c.tripwire));
    let (open, folded): (Vec<_>, Vec<_>) = checks
        .into_iter()
        .partition(|c| matches!(c.status, Status::Fail | Status::Warn | Status::Unknown));
    let passed = folded.iter().filter(|c| c.status == Status::Pass).count();
    let na = folded.len() - passed;
    let mut summary = if open.is_empty() {
        format!("All {passed} checks passed")
    } else {
        format!("{passed} passed")
    };
    if na > 0 {
        summary.push_str(&format!(
            "; {na} {} not apply to {}",
            if na == 1 { "does" } else { "do" },
            engine.display()
        ));
    }
    let counts = report.counts();
    view! {
        <section id="results" aria-labelledby="results-h">
            <h2 id="results-h">"Results"</h2>
            <ul class="counts" id="counts">
                {counts
                    .into_iter()
                    .filter(|(s, n)| *s != Status::NotApplicable || *n > 0)
                    .map(|(s, n)| {
                        view! {
                            <li class=format!("count {}", s.as_str()) data-status=s.as_str() data-count=n.to_string()>
                                <span class="n">{n}</span>
                                " "
                                {badge(s)}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            {report.status_note.clone().map(|n| view! { <p class="status-note" id="status-note">{n}</p> })}
            <details class="meanings">
                <summary>"What each result means"</summary>
                <dl>
                    {MEANINGS
                        .iter()
                        .map(|(s, m)| {
                            view! {
                                <dt>{badge(*s)}</dt>
                                <dd>{*m}</dd>
                            }
                        })
                        .collect_view()}
                </dl>
            </details>
            <ol class="findings" id="findings">
                {open.iter().map(|c| finding(c, engine, true)).collect_view()}
            </ol>
            {(!folded.is_empty())
                .then(|| {
                    view! {
                        <details class="passed" id="passed">
                            <summary>{summary}</summary>
                            <ol class="findings">{folded.iter().map(|c| finding(c, engine, false)).collect_view()}</ol>
                        </details>
                    }
                })}
        </section>
    }
}

#[component]
fn ChartsSection(charts: SharedCharts, theme: RwSignal<u32>) -> impl IntoView {
    let c = charts;
    let any = c.cache.is_some()
        || c.requests.is_some()
        || c.kv.is_some()
        || c.tokens.is_some()
        || c.levels.is_some()
        || c.pools.is_some();
    any.then(move || {
        view! {
            <section id="charts" aria-labelledby="charts-h">
                <h2 id="charts-h">"What the server did"</h2>
                {c.note.clone().map(|n| view! { <p class="note">{n}</p> })}
                {c.cache.clone().map(|b| view! { <BarChartView chart=b theme=theme /> })}
                {c.requests.clone().map(|t| view! { <TimeChartView chart=t theme=theme /> })}
                {c.kv.clone().map(|t| view! { <TimeChartView chart=t theme=theme /> })}
                {c.tokens.clone().map(|t| view! { <TimeChartView chart=t theme=theme /> })}
                {c.levels.clone().map(|b| view! { <BarChartView chart=b theme=theme /> })}
                {c.pools.clone().map(|b| view! { <BarChartView chart=b theme=theme /> })}
            </section>
        }
    })
}

#[component]
fn Server(
    report: Arc<Report>,
    memory: Option<Arc<BarChart>>,
    theme: RwSignal<u32>,
) -> impl IntoView {
    (!report.server.is_empty() || memory.is_some()).then(move || {
        view! {
            <section id="server" aria-labelledby="server-h">
                <h2 id="server-h">"The server that ran"</h2>
                <p class="note">
                    "These facts come from the boot log. They can change from one start to the next, so keep them with every result."
                </p>
                {facts_list("server-facts", &report.server)}
                {memory.map(|b| view! { <BarChartView chart=b theme=theme /> })}
            </section>
        }
    })
}

#[component]
fn Guide(engine: Engine) -> impl IntoView {
    view! {
        <section id="guide" aria-labelledby="guide-h">
            <details>
                <summary>
                    <h2 id="guide-h">"The fifteen tripwires"</h2>
                </summary>
                <ol class="guide">
                    {catalog::all()
                        .iter()
                        .map(|t| {
                            let note = t.engine_note(engine);
                            view! {
                                <li data-guide=t.id()>
                                    <h3>{t.id()}" · "{t.title}" "<span class="slug">"("{t.slug}")"</span></h3>
                                    <p><strong>"What goes wrong: "</strong>{t.catches}</p>
                                    <p><strong>"Why it matters: "</strong>{t.why}</p>
                                    {(!note.is_empty())
                                        .then(|| view! { <p><strong>{engine.display()}": "</strong>{note}</p> })}
                                    <p><strong>"How to check: "</strong><code>{t.reproduce}</code></p>
                                </li>
                            }
                        })
                        .collect_view()}
                </ol>
            </details>
        </section>
    }
}

#[component]
fn Footer(generated: Option<f64>, source: String) -> impl IntoView {
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
