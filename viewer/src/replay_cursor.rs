//! The replay's moment, shared with the time charts: the replay section sets it once the
//! reader plays or seeks, and every time chart of the report draws a second cursor there
//! (a comparison has no replay, so no such cursor).

use leptos::prelude::*;

/// Seconds on the charts' time axis, or none before the replay was touched.
#[derive(Clone, Copy)]
pub struct ReplayCursor(pub RwSignal<Option<f64>>);

/// Makes a replay cursor known to the sections below.
pub fn provide() -> ReplayCursor {
    let c = ReplayCursor(RwSignal::new(None));
    provide_context(c);
    c
}

/// The report's replay cursor, none outside a report.
pub fn current() -> Option<ReplayCursor> {
    use_context::<ReplayCursor>()
}
