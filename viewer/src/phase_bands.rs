//! A sweep's phases shaded on the time charts: the Report's phase windows, given to every
//! chart of the report by context (a comparison has none), shaded under the lines (every
//! other one darker) and named in the chart's readout.

use std::sync::Arc;

use analyzer::report::Report;
use leptos::prelude::*;

/// The phases' windows on the charts' time axis and their labels.
#[derive(Clone, Default)]
pub struct PhaseWindows(pub Arc<Vec<(f64, f64, String)>>);

impl PhaseWindows {
    fn of(report: &Report) -> PhaseWindows {
        PhaseWindows(Arc::new(
            report
                .phases
                .iter()
                .filter_map(|p| {
                    let label = format!(
                        "phase {}: asked for {}, {}",
                        p.index,
                        p.asked,
                        p.status.report_label().to_lowercase()
                    );
                    Some((p.start_s?, p.end_s?, label))
                })
                .collect(),
        ))
    }

    /// The labels of the phases holding time `t`.
    pub fn at(&self, t: f64) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(move |(from, to, _)| *from <= t && t <= *to)
            .map(|(_, _, l)| l.as_str())
    }
}

/// Makes the report's phases known to the charts below.
pub fn provide(report: &Report) {
    provide_context(PhaseWindows::of(report));
}

/// The phases of the report shown, none outside one.
pub fn current() -> PhaseWindows {
    use_context::<PhaseWindows>().unwrap_or_default()
}
