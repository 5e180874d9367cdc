//! The load's start on a run's chart time axis, as its report found it
//! (`insights::load_start`), for overlaying several runs' charts.

use crate::insights::load_start::Alignment;
use crate::report::Report;

/// Seconds since the run's first reading at which the load started, and how that was
/// found; `None` without a recording. Found from every reading when the report was built
/// ([`find_load_start`]), before its charts were reduced to what a screen shows.
pub fn load_start(report: &Report) -> (Option<f64>, Alignment) {
    report.load_start
}
