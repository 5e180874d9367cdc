//! "Phases" (a sweep; docs/tripwires.md#phases): one row per phase of the load tool's
//! sweep (what it asked for, what the server ran, each tripwire's status, the worst),
//! then the phase checks that need attention, in full. Nothing for a single benchmark.

use std::sync::Arc;

use analyzer::num::shortest;
use analyzer::report::Report;
use analyzer::rules::verdict::Status;
use leptos::prelude::*;

use super::widgets::badge;

/// A status as its icon alone, named for screen readers and on hover.
fn icon(s: Status) -> impl IntoView {
    view! {
        <span class=format!("badge {}", s.as_str()) role="img" aria-label=s.report_label() title=s.report_label()>
            {s.icon()}
        </span>
    }
}

#[component]
pub fn Phases(report: Arc<Report>) -> impl IntoView {
    let phases = report.phases.clone();
    let first = phases.first()?;
    let ids: Vec<String> = first.checks.iter().map(|c| c.id()).collect();
    let head = ids
        .iter()
        .map(|id| view! { <th scope="col">{id.clone()}</th> })
        .collect_view();
    let rows = phases
        .iter()
        .map(|p| {
            let cells = ids
                .iter()
                .map(|id| {
                    let s = p.checks.iter().find(|c| &c.id() == id).map(|c| c.status);
                    view! {
                        <td data-tripwire=id.clone() data-status=s.map(|s| s.as_str())>{s.map(icon)}</td>
                    }
                })
                .collect_view();
            view! {
                <tr data-phase=p.index.to_string() data-status=p.status.as_str()>
                    <th scope="row">{p.index}</th>
                    <td class="asked">{p.asked.clone()}</td>
                    <td class="ran">{p.ran.map_or("–".to_string(), shortest)}</td>
                    {cells}
                    <td class="worst">{badge(p.status)}</td>
                </tr>
            }
        })
        .collect_view();
    let reasons = phases
        .iter()
        .flat_map(|p| {
            p.checks
                .iter()
                .filter(|c| c.status.shown_in_full())
                .map(move |c| {
                    view! {
                        <li data-phase=p.index.to_string() data-tripwire=c.id() data-status=c.status.as_str()>
                            {format!("Phase {}, {}: ", p.index, c.id())}
                            {badge(c.status)}
                            " "
                            <span class="message">{c.message.clone()}</span>
                        </li>
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect_view();
    Some(view! {
        <section id="phases" aria-labelledby="phases-h">
            <h2 id="phases-h">"Phases"</h2>
            <p>
                "The load tool ran a sweep. Each phase is judged on its own stretch of the \
                 recording, cut by the tool's own start and end times (shaded on the charts); \
                 the run's verdict is the worst phase's."
            </p>
            <table class="compare phases" id="phase-table">
                <thead>
                    <tr>
                        <th scope="col">"Phase"</th>
                        <th scope="col">"Asked for"</th>
                        <th scope="col">"Ran at most"</th>
                        {head}
                        <th scope="col">"Worst"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <ul class="phase-findings">{reasons}</ul>
        </section>
    })
}
