//! "Results": a count per status, the status note, what each status means
//! (`verdict::STATUS_MEANINGS`), the findings that need attention in full, and the passes
//! and not-applicables folded under the Report's `folded_line`.

use std::sync::Arc;

use analyzer::report::Report;
use analyzer::rules::verdict::STATUS_MEANINGS;
use analyzer::Engine;
use leptos::prelude::*;

use super::finding::finding;
use super::widgets::badge;

#[component]
pub fn Results(report: Arc<Report>) -> impl IntoView {
    let engine = report.engine.unwrap_or(Engine::Vllm);
    let mut checks = report.checks.clone();
    checks.sort_by_key(|c| (c.status, c.tripwire));
    let (open, folded): (Vec<_>, Vec<_>) =
        checks.into_iter().partition(|c| c.status.shown_in_full());
    let counts = report.counts();
    view! {
        <section id="results" aria-labelledby="results-h">
            <h2 id="results-h">"Results"</h2>
            <ul class="counts" id="counts">
                {counts
                    .into_iter()
                    .filter(|(s, n)| s.counted_when_absent() || *n > 0)
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
                    {STATUS_MEANINGS
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
            {report
                .folded_line()
                .map(|line| {
                    view! {
                        <details class="passed" id="passed">
                            <summary>{line}</summary>
                            <ol class="findings">{folded.iter().map(|c| finding(c, engine, false)).collect_view()}</ol>
                        </details>
                    }
                })}
        </section>
    }
}
