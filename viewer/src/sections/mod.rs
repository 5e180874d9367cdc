//! The report of the run shown, one module per section in the page's order
//! (docs/run-folder.md#report-html):
//! header, what limited the run, what happened (with the glossary), results, a sweep's
//! phases, a fleet's replicas, the replay of the KV cache, what the server did, the server that ran, the tripwire
//! guide, footer; and the comparison of
//! several runs (`compare`). Each draws what the Report
//! (or the catalogue) says; every string from the inputs goes into text nodes.

mod charts_section;
mod compare;
mod finding;
mod footer;
mod glossary;
mod guide;
mod happened;
mod header;
mod limits;
mod phases;
mod replay;
mod replicas;
mod results;
mod server;
mod widgets;

use std::sync::Arc;

use analyzer::report::Report;
use analyzer::Engine;
use leptos::prelude::*;

use crate::dom::request_ready;
use crate::state::{Loaded, SharedCharts};
use charts_section::ChartsSection;
pub use compare::CompareView;
use footer::Footer;
use guide::Guide;
use happened::Happened;
use header::Header;
use limits::Limits;
use phases::Phases;
use replay::ReplaySection;
use replicas::Replicas;
use results::Results;
use server::Server;

/// A run as the page shows it: its report, or why it could not be analyzed.
#[component]
pub fn LoadedView(loaded: Arc<Loaded>, theme: RwSignal<u32>) -> impl IntoView {
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

#[component]
fn ReportBody(report: Arc<Report>, charts: SharedCharts, theme: RwSignal<u32>) -> impl IntoView {
    let engine = report.engine.unwrap_or(Engine::Vllm);
    crate::phase_bands::provide(&report);
    crate::replay_cursor::provide();
    view! {
        <Limits report=report.clone() />
        <Happened report=report.clone() />
        <Results report=report.clone() />
        <Phases report=report.clone() />
        <Replicas report=report.clone() />
        {charts.replay.clone().map(|r| view! { <ReplaySection replay=r theme=theme /> })}
        <ChartsSection charts=charts.clone() theme=theme />
        <Server report=report.clone() memory=charts.memory.clone() theme=theme />
        <Guide engine=engine />
    }
}
