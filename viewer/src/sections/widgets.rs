//! Small pieces several sections share: a status badge and a list of labelled facts.

use analyzer::report::Fact;
use analyzer::rules::verdict::Status;
use leptos::prelude::*;

/// A status as an icon and its report label ("Tripwire failed", "Pass"…).
pub fn badge(s: Status) -> impl IntoView {
    let icon = s.icon();
    view! {
        <span class=format!("badge {}", s.as_str())>
            <span class="icon" aria-hidden="true">{icon}</span>
            " "
            {s.report_label()}
        </span>
    }
}

/// Labelled facts as a definition list with the element id `id`.
pub fn facts_list(id: &'static str, facts: &[Fact]) -> impl IntoView {
    view! {
        <dl class="facts" id=id>
            {facts
                .iter()
                .map(|f| {
                    view! {
                        <div class="fact">
                            <dt>{f.label.clone()}</dt>
                            <dd>{f.value.clone()}</dd>
                        </div>
                    }
                })
                .collect_view()}
        </dl>
    }
}
