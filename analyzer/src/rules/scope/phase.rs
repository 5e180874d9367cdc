//! One phase of a sweep (a benchmark of a result holding several, or one of several load
//! commands), judged on its own stretch of the recording: the readings inside the load
//! tool's own start and end, and the two that bracket them (`window.rs`). Counts come
//! from those readings, so they are known to the series' sampling.

use crate::bench::Phase;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::num::{plural, shortest};
use crate::rules::absent::{Absent, Gap, Input};
use crate::rules::scope::window::Window;
use crate::series::Series;

pub struct PhaseScope<'a> {
    pub phase: &'a Phase,
    /// The phase's readings; missing, with the reason, when they cannot be cut out.
    pub window: Input<'a, Window>,
    pub engine: Engine,
    pub facts: Option<&'a BootFacts>,
    /// The cache's usable blocks, from the whole run's KV gauge steps (T9's ceiling in
    /// whole blocks).
    pub usable_blocks: Option<u64>,
    /// "GuideLLM 0.8.1", for messages.
    pub tool: &'a str,
}

impl PhaseScope<'_> {
    /// "to the series' sampling (a reading every 0.25 s)", without the interval when the
    /// series' header gives none.
    pub fn resolution(series: &Series) -> String {
        series.interval_s.map_or_else(
            || "to the series' sampling".to_string(),
            |i| {
                format!(
                    "to the series' sampling (a reading every {} s)",
                    shortest(i)
                )
            },
        )
    }

    /// The phase holds fewer than two readings: too few to measure a rate or a count.
    pub fn too_few(inner: &Series) -> Absent {
        Absent::Missing(Gap::Phase(format!(
            "{} inside the phase: too few to measure it {}",
            match inner.rows.len() {
                0 => "no reading".to_string(),
                n => plural(n as f64, "reading"),
            },
            PhaseScope::resolution(inner)
        )))
    }
}
