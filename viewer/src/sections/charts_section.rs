//! "What the server did": the Report's charts in their order, drawn by
//! `crate::charts`; the section exists when at least one chart does.

use leptos::prelude::*;

use crate::charts::{BarChartView, TimeChartView};
use crate::state::SharedCharts;

#[component]
pub fn ChartsSection(charts: SharedCharts, theme: RwSignal<u32>) -> impl IntoView {
    let c = charts;
    let any = c.cache.is_some()
        || c.requests.is_some()
        || c.kv.is_some()
        || c.tokens.is_some()
        || c.levels.is_some()
        || c.pools.is_some()
        || c.gpu.is_some()
        || c.prefix_cache.is_some();
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
                {c.gpu.clone().map(|t| view! { <TimeChartView chart=t theme=theme /> })}
                {c.prefix_cache.clone().map(|t| view! { <TimeChartView chart=t theme=theme /> })}
            </section>
        }
    })
}
