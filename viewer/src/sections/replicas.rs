//! "Replicas" (a fleet's report): one table row per replica with its instance, the icon of
//! each of its checks, its peak running, preemptions and requests served (and what the
//! router says it sent it, when known); then each replica's findings. Drawn only when the
//! Report has replicas; every string from the inputs goes into text nodes.

use std::sync::Arc;

use analyzer::report::{ReplicaReport, Report};
use analyzer::rules::registry::{self, Scope};
use analyzer::Engine;
use leptos::prelude::*;

use super::finding::finding;

fn figure(v: Option<f64>) -> String {
    v.map_or("?".into(), analyzer::num::shortest)
}

fn row(r: &ReplicaReport, with_router: bool) -> impl IntoView {
    // A column per tripwire a replica is judged on, in number order.
    let icons = registry::judged_in(Scope::Replica)
        .map(|t| {
            let c = r.checks.iter().find(|c| c.tripwire == t);
            match c {
                Some(c) => view! {
                    <td data-tripwire=c.id() data-status=c.status.as_str() title=format!("{}: {}", c.status.report_label(), c.message)>
                        <span class=format!("badge {}", c.status.as_str())>
                            <span class="icon" aria-hidden="true">{c.status.icon()}</span>
                            <span class="visually-hidden">{c.status.report_label()}</span>
                        </span>
                    </td>
                }
                .into_any(),
                None => view! { <td></td> }.into_any(),
            }
        })
        .collect_view();
    view! {
        <tr data-replica=r.id.clone()>
            <td>{r.id.clone()}</td>
            <td>{r.instance.clone().unwrap_or_else(|| "?".into())}</td>
            {icons}
            <td data-figure="peak_running">{figure(r.peak_running)}</td>
            <td data-figure="preemptions">{figure(r.preemptions)}</td>
            <td data-figure="served">{figure(r.served)}</td>
            {with_router.then(|| view! { <td data-figure="router_served">{figure(r.router_served)}</td> })}
        </tr>
    }
}

#[component]
pub fn Replicas(report: Arc<Report>) -> impl IntoView {
    let engine = report.engine.unwrap_or(Engine::Vllm);
    (!report.replicas.is_empty()).then(move || {
        let with_router = report.replicas.iter().any(|r| r.router_served.is_some());
        view! {
            <section id="replicas" aria-labelledby="replicas-h">
                <h2 id="replicas-h">"Replicas"</h2>
                <p class="note">
                    "Each replica judged on its own readings; the results above are the fleet's as a whole."
                </p>
                <div class="data">
                    <div class="table-wrap">
                        <table id="replica-table">
                            <thead>
                                <tr>
                                    <th>"replica"</th>
                                    <th>"instance"</th>
                                    {registry::judged_in(Scope::Replica).map(|t| view! { <th>{t.id()}</th> }).collect_view()}
                                    <th>"peak running"</th>
                                    <th>"preemptions"</th>
                                    <th>"served"</th>
                                    {with_router.then(|| view! { <th>"router sent"</th> })}
                                </tr>
                            </thead>
                            <tbody>
                                {report.replicas.iter().map(|r| row(r, with_router)).collect_view()}
                            </tbody>
                        </table>
                    </div>
                </div>
                {report
                    .replicas
                    .iter()
                    .map(|r| {
                        let mut checks = r.checks.clone();
                        checks.sort_by_key(|c| (c.status, c.tripwire));
                        view! {
                            <details class="replica" data-replica=r.id.clone()>
                                <summary>{format!("Replica {}", r.id)}</summary>
                                <ol class="findings">
                                    {checks.iter().map(|c| finding(c, engine, c.status.shown_in_full())).collect_view()}
                                </ol>
                            </details>
                        }
                    })
                    .collect_view()}
            </section>
        }
    })
}
