//! Where the load started on a run's chart time axis, so several runs' charts can be
//! overlaid with their loads starting together: the first reading with a request running
//! or waiting; on an engine whose gauges move only when a request completes (TensorRT-LLM)
//! that reading says nothing about the start, so the start is the last change of the
//! gauges (the last completion) less the load tool's own duration.

use serde::Serialize;

use crate::engine::Engine;
use crate::insights::charts::{Charts, TimeChart};

/// How the load's start was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    /// The first reading with a request running or waiting.
    Busy,
    /// The gauges' last change less the load tool's duration (gauges that lag).
    ClientDuration,
    /// Nothing tells: the first reading.
    FirstReading,
    /// The run has no recording over time.
    NoRecording,
}

impl Alignment {
    /// How the page's caption says it.
    pub fn describe(self) -> &'static str {
        match self {
            Alignment::Busy => "the first reading with a request running or waiting",
            Alignment::ClientDuration => {
                "the last completion less the load tool's duration (the gauges move only when a request completes)"
            }
            Alignment::FirstReading => "the first reading (nothing tells when the load started)",
            Alignment::NoRecording => "no recording",
        }
    }
}

/// Where the load started on `charts`' time axis (every reading, not yet reduced):
/// `engine`'s gauges may lag, then the load tool's `duration` counts back from the end.
pub fn find_load_start(
    charts: &Charts,
    engine: Option<Engine>,
    duration: Option<f64>,
) -> (Option<f64>, Alignment) {
    let Some(requests) = charts.requests.as_ref() else {
        return (None, Alignment::NoRecording);
    };
    let Some(&t0) = requests.t.first() else {
        return (None, Alignment::NoRecording);
    };
    let lags = engine.is_some_and(|e| e.gauges_lag());
    if lags {
        let duration = duration.filter(|d| d.is_finite() && *d > 0.0);
        let charts = [Some(requests), charts.kv.as_ref()];
        let end = charts
            .into_iter()
            .flatten()
            .filter_map(last_change)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
        return match (end, duration) {
            (Some(end), Some(d)) => (Some((end - d).max(t0)), Alignment::ClientDuration),
            _ => (Some(t0), Alignment::FirstReading),
        };
    }
    let line = |key: &str| requests.lines.iter().find(|l| l.key == key);
    let (running, waiting) = (line("running"), line("waiting"));
    let busy = (0..requests.t.len()).find(|&i| {
        let v = |l: Option<&crate::insights::charts::ChartLine>| {
            l.and_then(|l| l.values.get(i).copied().flatten())
                .unwrap_or(0.0)
        };
        v(running) + v(waiting) > 0.0
    });
    match busy {
        Some(i) => (Some(requests.t[i]), Alignment::Busy),
        None => (Some(t0), Alignment::FirstReading),
    }
}

/// The time of the last reading at which any line of the chart changed.
fn last_change(chart: &TimeChart) -> Option<f64> {
    (1..chart.t.len()).rev().find_map(|i| {
        chart
            .lines
            .iter()
            .any(|l| l.values.get(i) != l.values.get(i - 1))
            .then(|| chart.t[i])
    })
}
