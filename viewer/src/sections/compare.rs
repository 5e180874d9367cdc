//! Several runs side by side: the analyzer's comparison table (one column per run, the
//! rows that differ marked), its readings, the baseline's regressions, and the runs'
//! charts overlaid on one time axis (`crate::charts::OverlayChartView`). Runs that could
//! not be analyzed say why.

use std::sync::Arc;

use analyzer::compare::Comparison;
use leptos::prelude::*;

use super::footer::Footer;
use crate::charts::OverlayChartView;
use crate::dom::request_ready;
use crate::state::Compared;

#[component]
pub fn CompareView(compared: Arc<Compared>, theme: RwSignal<u32>) -> impl IntoView {
    let failed: Vec<(String, String)> = compared
        .runs
        .iter()
        .filter_map(|(label, l)| l.result.as_ref().err().map(|e| (label.clone(), e.clone())))
        .collect();
    let overlays = compared.overlays.clone();
    let view = view! {
        <header class="report-head">
            <h1 id="title">"Runs compared"</h1>
            <p class="meta">{compared.runs.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>().join(" · ")}</p>
        </header>
        {(!failed.is_empty()).then(|| view! {
            <div class="errors" role="alert" data-error="runs">
                <ul>
                    {failed.into_iter().map(|(label, e)| view! {
                        <li><strong>{label}</strong>" could not be analyzed: "{e}</li>
                    }).collect_view()}
                </ul>
            </div>
        })}
        {match compared.comparison.clone() {
            Some(c) => view! { <Table comparison=c /> }.into_any(),
            None => view! {
                <p class="note">"At least two runs must be analyzed to compare them."</p>
            }.into_any(),
        }}
        {(!overlays.is_empty()).then(|| view! {
            <section id="overlays" aria-labelledby="overlays-h">
                <h2 id="overlays-h">"What the servers did, on one time axis"</h2>
                {overlays.into_iter().map(|o| view! { <OverlayChartView chart=o theme=theme /> }).collect_view()}
            </section>
        })}
        <Footer generated=compared.packs.generated_ms source=compared.source.clone() />
    };
    request_ready();
    view
}

#[component]
fn Table(comparison: Arc<Comparison>) -> impl IntoView {
    let c = comparison;
    let readings: Vec<(String, String, String)> = c
        .rows
        .iter()
        .filter_map(|r| {
            r.reading
                .clone()
                .map(|t| (r.key.clone(), r.label.clone(), t))
        })
        .collect();
    let baseline = c.baseline.clone();
    view! {
        <section id="compare" aria-labelledby="compare-h">
            <h2 id="compare-h">"Side by side"</h2>
            <div class="table-wrap compare-wrap">
                <table class="compare">
                    <thead>
                        <tr>
                            <td></td>
                            {c.columns.iter().enumerate().map(|(i, col)| view! {
                                <th scope="col" class="run" data-column=i.to_string() title=col.title.clone()>
                                    <span class=format!("swatch swatch-{}", i % 4 + 1) aria-hidden="true"></span>
                                    {col.label.clone()}
                                </th>
                            }).collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {c.rows.iter().map(|r| view! {
                            <tr
                                data-key=r.key.clone()
                                data-differs=r.differs.to_string()
                                data-matters=r.matters.to_string()
                                class:matters=r.matters
                            >
                                <th scope="row">{r.label.clone()}</th>
                                {r.cells.iter().map(|cell| view! {
                                    <td data-status=cell.status.map(|s| s.as_str())>{cell.text.clone()}</td>
                                }).collect_view()}
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            {(!readings.is_empty()).then(|| view! {
                <h3>"What differs"</h3>
                <ul id="readings">
                    {readings.into_iter().map(|(key, label, text)| view! {
                        <li data-key=key><strong>{label}</strong>": "{text}</li>
                    }).collect_view()}
                </ul>
            })}
            {baseline.map(|b| view! {
                <div id="baseline" data-regressions=b.regressions.len().to_string()>
                    <h3>{b.summary()}</h3>
                    <ul>
                        {b.regressions.iter().map(|r| view! {
                            <li class="regression" data-key=r.key.clone()>{r.reason.clone()}</li>
                        }).collect_view()}
                    </ul>
                </div>
            })}
        </section>
    }
}
