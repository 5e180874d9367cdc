//! "What limited this run": the Report's limit sentences, each marked as
//! having held the run back or not.

use std::sync::Arc;

use analyzer::report::Report;
use leptos::prelude::*;

#[component]
pub fn Limits(report: Arc<Report>) -> impl IntoView {
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
