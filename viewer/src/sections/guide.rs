//! "The eighteen tripwires": the catalogue, folded, with the run's engine's
//! notes.

use analyzer::rules::registry;
use analyzer::Engine;
use leptos::prelude::*;

#[component]
pub fn Guide(engine: Engine) -> impl IntoView {
    view! {
        <section id="guide" aria-labelledby="guide-h">
            <details>
                <summary>
                    <h2 id="guide-h">{format!("The {} tripwires", analyzer::num::spelled(registry::single_server().count()))}</h2>
                </summary>
                <ol class="guide">
                    {registry::single_server()
                        .map(|t| {
                            let note = t.engine_note(engine);
                            view! {
                                <li data-guide=t.id()>
                                    <h3>{t.id()}" · "{t.title}" "<span class="slug">"("{t.slug}")"</span></h3>
                                    <p><strong>"What goes wrong: "</strong>{t.catches}</p>
                                    <p><strong>"Why it matters: "</strong>{t.why}</p>
                                    {(!note.is_empty())
                                        .then(|| view! { <p><strong>{engine.display()}": "</strong>{note}</p> })}
                                    <p><strong>"How to check: "</strong><code>{t.reproduce}</code></p>
                                </li>
                            }
                        })
                        .collect_view()}
                </ol>
            </details>
        </section>
    }
}
