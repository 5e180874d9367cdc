//! "The server that ran": the boot facts and the GPU memory chart.

use std::sync::Arc;

use analyzer::insights::charts::BarChart;
use analyzer::report::Report;
use leptos::prelude::*;

use super::widgets::facts_list;
use crate::charts::BarChartView;

#[component]
pub fn Server(
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
