//! The report's head: title, meta line, the untested-version note, the
//! banner of a recording that did not complete, and the files that could not be read.

use std::sync::Arc;

use analyzer::input::InputError;
use analyzer::report::Report;
use leptos::prelude::*;

#[component]
pub fn Header(report: Arc<Report>, errors: Vec<InputError>, notes: Vec<String>) -> impl IntoView {
    let meta = report.meta.join(" · ");
    view! {
        <header class="report-head">
            <h1 id="title">{report.title.clone()}</h1>
            {(!meta.is_empty()).then(|| view! { <p class="meta" id="meta">{meta}</p> })}
            {report.version_note.clone().map(|n| view! { <p class="note">{n}</p> })}
            {report
                .banner
                .clone()
                .map(|b| {
                    if b.what_broke.is_empty() {
                        view! {
                            <div class="banner" role="alert" data-banner=b.state.clone()>
                                <strong>"The recording did not complete: "{b.state.clone()}"."</strong>
                                {b.stage.map(|s| view! { " It stopped at: "{s}"." })}
                                {b.problem.map(|p| view! { " "{p} })}
                                " The sections below cover only the part that was recorded."
                            </div>
                        }
                        .into_any()
                    } else {
                        view! {
                            <div class="banner" role="alert" data-banner=b.state.clone() id="run-broke">
                                <strong>"This run broke. "</strong>
                                "The sections below cover only the part that was recorded, and no \
                                 check passes for the whole run."
                                <ul>
                                    {b.what_broke.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}
                                </ul>
                            </div>
                        }
                        .into_any()
                    }
                })}
            {(!errors.is_empty()).then(|| view! { <InputErrors errors=errors /> })}
            {(!notes.is_empty())
                .then(|| {
                    view! {
                        <details class="notes">
                            <summary>"Notes from reading the files ("{notes.len()}")"</summary>
                            <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        </details>
                    }
                })}
        </header>
    }
}

/// The files that could not be read, each with its line and reason.
#[component]
fn InputErrors(errors: Vec<InputError>) -> impl IntoView {
    view! {
        <div class="errors" role="alert" id="input-errors">
            <p>
                <strong>
                    {if errors.len() == 1 {
                        "One file could not be read. ".to_string()
                    } else {
                        format!("{} files could not be read. ", errors.len())
                    }}
                </strong>
                "The checks that need it say “Can't tell”; every other result below stands."
            </p>
            <ul>
                {errors
                    .into_iter()
                    .map(|e| {
                        view! {
                            <li data-file=e.file.clone()>
                                <code>{e.file.clone()}</code>
                                {e.line.map(|l| format!(", line {l}"))}
                                ": "
                                {e.reason.clone()}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </div>
    }
}
