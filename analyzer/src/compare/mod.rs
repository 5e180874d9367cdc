//! Several runs side by side (`inferlint compare`, the page's compare view): one column
//! per run, one row per fact that matters (engine, model, KV pool, concurrency, the engine
//! settings that change speed or capacity where the runs differ on them, evictions,
//! throughput, requests, every tripwire), the differences flagged, a one-line reading of
//! each difference that matters, and against a baseline the regressions. The terminal,
//! `--json`, the one-file page and the browser all draw this one structure.
//!
//! Pure: it reads finished [`Report`]s and returns data.

mod align;
mod baseline;
mod overlay;
mod reading;
mod rows;
mod settings;

use serde::Serialize;

use crate::engine::Engine;
use crate::report::Report;
use crate::rules::verdict::Status;

pub use crate::insights::load_start::{find_load_start, Alignment};
pub use align::load_start;
pub use baseline::{Baseline, Regression, Tolerance};
pub use overlay::{overlays, Overlay, OverlaySeries};
pub use rows::Kind;

/// The schema tag of `inferlint compare --json`.
pub const SCHEMA: &str = "inferlint.compare/1";

/// How far a rate may move before the difference matters (and, for `--baseline`, the
/// default tolerance): run-to-run noise on one GPU stays within a few percent.
pub const RATE_TOLERANCE: f64 = 0.05;

/// One run to compare: how its column is headed, and its report.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub label: &'a str,
    pub report: &'a Report,
}

/// The comparison of several runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Present for `compare --baseline OLD NEW`.
    pub baseline: Option<Baseline>,
}

/// One run's column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub label: String,
    pub title: String,
    pub engine: Option<Engine>,
    /// Where the load started on the run's chart time axis (seconds since its first
    /// reading): the charts of several runs are overlaid with this moment at 0.
    pub load_start_s: Option<f64>,
    /// How `load_start_s` was found.
    pub aligned_by: Alignment,
}

/// One fact across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub kind: Kind,
    /// One per column, in column order.
    pub cells: Vec<Cell>,
    /// The runs do not all show the same.
    pub differs: bool,
    /// The difference changes what a reader concludes (see [`Kind`]).
    pub matters: bool,
    /// What the difference means, in one line; only where it matters.
    pub reading: Option<String>,
}

/// One run's value of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// As shown ("32,336 tokens"; "–" when the run cannot tell).
    pub text: String,
    /// The number behind the text, for machines and for the readings.
    pub value: Option<f64>,
    /// A tripwire row's status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// The text of a cell whose run cannot tell.
pub const ABSENT: &str = "–";

impl Cell {
    pub fn absent() -> Cell {
        Cell {
            text: ABSENT.to_string(),
            value: None,
            status: None,
        }
    }

    pub fn number(value: f64, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: Some(value),
            status: None,
        }
    }

    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: None,
            status: None,
        }
    }

    /// Whether the run had this fact at all.
    pub fn present(&self) -> bool {
        self.text != ABSENT
    }
}

/// Compares the runs, the first being the reference the readings measure against.
pub fn compare(runs: &[Run<'_>]) -> Comparison {
    let columns = runs
        .iter()
        .map(|r| {
            let (load_start_s, aligned_by) = load_start(r.report);
            Column {
                label: r.label.to_string(),
                title: r.report.title.clone(),
                engine: r.report.engine,
                load_start_s,
                aligned_by,
            }
        })
        .collect();
    let rows = rows::specs(runs)
        .into_iter()
        .map(|spec| {
            let differs = reading::differs(&spec);
            let matters = differs && reading::matters(&spec);
            let reading = matters.then(|| reading::reading(&spec, runs)).flatten();
            Row {
                key: spec.key,
                label: spec.label,
                kind: spec.kind,
                cells: spec.cells,
                differs,
                matters,
                reading,
            }
        })
        .collect();
    Comparison {
        schema: SCHEMA,
        columns,
        rows,
        baseline: None,
    }
}

/// `old` and `new` side by side, with the regressions of `new` against `old`.
pub fn compare_with_baseline(old: Run<'_>, new: Run<'_>, tolerance: Tolerance) -> Comparison {
    let mut c = compare(&[old, new]);
    c.baseline = Some(baseline::regressions(old, new, tolerance));
    c
}

impl Comparison {
    /// The row with this key.
    pub fn row(&self, key: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.key == key)
    }
}

/// Column labels for runs named by path: the shortest trailing part, as many folders deep
/// for every run, that tells each path from the others (`vllm-0.30/qwen3-8b-start1`
/// beside `sglang-0.5/qwen3-8b`), with "(2)", "(3)" added to a path given twice.
pub fn labels(paths: &[&str]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            p.split(['/', '\\'])
                .filter(|s| !s.is_empty() && *s != ".")
                .collect()
        })
        .collect();
    let tail = |p: &[&str], n: usize| p[p.len().saturating_sub(n)..].join("/");
    // How deep each path must go so no other distinct path ends the same way.
    let depth = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut n = 1;
            while n < p.len()
                && parts
                    .iter()
                    .enumerate()
                    .any(|(j, q)| j != i && q != p && tail(q, n) == tail(p, n))
            {
                n += 1;
            }
            n
        })
        .max()
        .unwrap_or(1);
    let mut out: Vec<String> = Vec::with_capacity(paths.len());
    for (i, p) in parts.iter().enumerate() {
        let label = if p.is_empty() {
            paths[i].to_string()
        } else {
            tail(p, depth)
        };
        let seen = out
            .iter()
            .filter(|l| **l == label || l.starts_with(&format!("{label} (")))
            .count();
        out.push(if seen == 0 {
            label
        } else {
            format!("{label} ({})", seen + 1)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_shortest_tails_that_tell_runs_apart() {
        assert_eq!(
            labels(&[
                "/x/fixtures/vllm-0.30/qwen3-8b-start1",
                "/x/fixtures/sglang-0.5/qwen3-8b",
                "/x/fixtures/trtllm-1.3/qwen3-8b/",
            ]),
            vec![
                "vllm-0.30/qwen3-8b-start1",
                "sglang-0.5/qwen3-8b",
                "trtllm-1.3/qwen3-8b"
            ]
        );
        assert_eq!(labels(&["a/run", "b/other"]), vec!["run", "other"]);
        assert_eq!(labels(&["./run", "run"]), vec!["run", "run (2)"]);
        assert_eq!(
            labels(&["run", "run", "run"]),
            vec!["run", "run (2)", "run (3)"]
        );
        assert_eq!(labels(&["/"]), vec!["/"]);
    }
}
