//! The charts of several runs overlaid on one time axis: each run's main line of a time
//! chart, shifted so its load starts at 0 ([`super::load_start`]), one series per run. The
//! page draws these and computes nothing.

use serde::Serialize;

use super::Run;

/// One chart of several runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlay {
    pub key: String,
    pub title: String,
    pub caption: String,
    pub y_label: String,
    pub y_max: Option<f64>,
    pub decimals: usize,
    /// One per run that has the chart, in column order.
    pub series: Vec<OverlaySeries>,
}

/// One run's line: seconds since its load started, and the values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlaySeries {
    /// The run's column.
    pub column: usize,
    pub label: String,
    /// `line`, `step` or `area`, as the run's own chart draws it.
    pub kind: String,
    pub t: Vec<f64>,
    pub values: Vec<Option<f64>>,
}

/// The overlaid charts (requests running, KV cache in use, output tokens per second), each
/// where at least two runs have it.
pub fn overlays(runs: &[Run<'_>]) -> Vec<Overlay> {
    let starts: Vec<Option<f64>> = runs.iter().map(|r| super::load_start(r.report).0).collect();
    [
        ("requests", "running", "Requests running", "requests"),
        ("kv", "kv", "KV cache in use", "% in use"),
        ("tokens", "tokens", "Output tokens per second", "tokens/s"),
    ]
    .into_iter()
    .filter_map(|(key, line, title, y_label)| {
        let mut y_max = None;
        let mut decimals = 0;
        let series: Vec<OverlaySeries> = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let c = &r.report.charts;
                let chart = match key {
                    "requests" => c.requests.as_ref(),
                    "kv" => c.kv.as_ref(),
                    _ => c.tokens.as_ref(),
                }?;
                let l = chart.lines.iter().find(|l| l.key == line)?;
                let start = starts[i].or(chart.t.first().copied())?;
                y_max = chart.y_max;
                decimals = chart.decimals;
                Some(OverlaySeries {
                    column: i,
                    label: r.label.to_string(),
                    kind: l.kind.clone(),
                    t: chart.t.iter().map(|t| t - start).collect(),
                    values: l.values.clone(),
                })
            })
            .collect();
        (series.len() >= 2).then(|| Overlay {
            key: key.to_string(),
            title: title.to_string(),
            caption: format!(
                "{title}, one line per run, on one time axis: 0 is where each run's load \
                 started."
            ),
            y_label: y_label.to_string(),
            y_max,
            decimals,
            series,
        })
    })
    .collect()
}
