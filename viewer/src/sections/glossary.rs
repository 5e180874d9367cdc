//! "Words used in this report": the Report's glossary, folded.

use std::sync::Arc;

use analyzer::report::Report;
use leptos::prelude::*;

#[component]
pub fn Glossary(report: Arc<Report>) -> impl IntoView {
    (!report.glossary.is_empty()).then(|| {
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
    })
}
