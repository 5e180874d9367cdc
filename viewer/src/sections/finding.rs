//! One result as a finding: badge, tripwire, message, the catalogue's "why it matters"
//! line when shown in full, and its evidence with the catalogue's engine note and how to
//! check it again.

use analyzer::json::Json;
use analyzer::rules::verdict::CheckResult;
use analyzer::Engine;
use leptos::prelude::*;

use super::widgets::badge;

/// An evidence value as text: strings as they are, anything else as compact JSON.
fn evidence_value(v: &Json) -> String {
    match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_compact(),
    }
}

/// `full`: with the tripwire's "why it matters" line (failures, warnings, can't-tells).
pub fn finding(c: &CheckResult, engine: Engine, full: bool) -> impl IntoView {
    let t = Some(c.tripwire.entry());
    let why = if full { t.map(|t| t.why) } else { None };
    let note = t.map(|t| t.engine_note(engine)).filter(|n| !n.is_empty());
    let reproduce = t.map(|t| t.reproduce);
    let evidence = c.evidence();
    view! {
        <li class=format!("finding {}", c.status.as_str()) data-tripwire=c.id() data-status=c.status.as_str()>
            <div class="finding-head">
                {badge(c.status)}
                " "
                <span class="tid">{c.id()}</span>
                " "
                <span class="slug">{c.name()}</span>
                {c.source.clone().map(|s| view! { <span class="source">" · from "{s}</span> })}
            </div>
            <p class="message">{c.message.clone()}</p>
            {why.map(|w| view! { <p class="why">{w}</p> })}
            <details class="evidence">
                <summary>"Evidence and how to check it again"</summary>
                {(!evidence.is_empty())
                    .then(|| {
                        view! {
                            <table class="kv">
                                <tbody>
                                    {evidence
                                        .iter()
                                        .map(|(k, v)| {
                                            view! {
                                                <tr>
                                                    <th scope="row">{k.clone()}</th>
                                                    <td>{evidence_value(v)}</td>
                                                </tr>
                                            }
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                        }
                    })}
                {note.map(|n| view! { <p class="engine-note">{n}</p> })}
                {reproduce.map(|r| view! { <p class="reproduce">"Check it again: "<code>{r}</code></p> })}
            </details>
        </li>
    }
}
