//! "What happened": the account, the headline tiles, the test and the
//! setup, and the glossary.

use std::sync::Arc;

use analyzer::report::{Report, Tile};
use leptos::prelude::*;

use super::glossary::Glossary;
use super::widgets::{badge, facts_list};

#[component]
pub fn Happened(report: Arc<Report>) -> impl IntoView {
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
            <Glossary report=report.clone() />
        </section>
    }
}

/// One headline tile, badged with its tripwire's status when that is not a pass.
fn tile(t: &Tile) -> impl IntoView {
    view! {
        <div class="tile" data-key=t.key.clone() data-status=t.status.map(|s| s.as_str().to_string())>
            <div class="tile-label">{t.label.clone()} {t.status.map(badge)}</div>
            <div class="tile-value">{t.value.clone()}</div>
            <div class="tile-sub">{t.sub.clone()}</div>
        </div>
    }
}
