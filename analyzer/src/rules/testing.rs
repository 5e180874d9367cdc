//! Small hand-made inputs for the rules' unit tests: snapshots from Prometheus text, a
//! series from rows, and a whole run's context with nothing given but what a test sets.

use crate::engine::Engine;
use crate::inputs::RunInput;
use crate::prom::Exposition;
use crate::rules::outcome::RunOutcome;
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::series::{Row, Series};
use crate::snapshot::Snapshot;

/// A snapshot of `text` (Prometheus exposition) taken at `wall` seconds.
pub fn snapshot(text: &str, wall: f64) -> Snapshot {
    Snapshot {
        url: "http://127.0.0.1:8000/metrics".into(),
        t_wall: wall,
        t_mono_ns: Some((wall * 1e9) as i64),
        latency_s: Some(0.001),
        metrics: Exposition::parse(text).expect("test exposition parses"),
        implausible: Vec::new(),
    }
}

/// A series of `engine`'s gauges, a reading every second from t = 100.
pub fn series(engine: Engine, rows: Vec<Row>) -> Series {
    let rows: Vec<Row> = rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| Row {
            t_wall: 100.0 + i as f64,
            t_mono_ns: Some((100 + i as i64) * 1_000_000_000),
            ..r
        })
        .collect();
    Series {
        interval_s: Some(1.0),
        engine_named: Some(engine),
        row_lines: (2..2 + rows.len() as u32).collect(),
        rows: rows.into(),
        ..Series::default()
    }
}

/// A reading of the running, waiting and KV-usage gauges.
pub fn gauges(running: f64, waiting: f64, kv_usage: f64) -> Row {
    Row {
        running: Some(running),
        waiting: Some(waiting),
        kv_usage: Some(kv_usage),
        ..Row::default()
    }
}

/// The inputs a test's run context borrows: an empty folder and a run that completed.
#[derive(Default)]
pub struct Folder {
    pub input: RunInput,
    pub outcome: RunOutcome,
}

impl Folder {
    /// The run's context with nothing given.
    pub fn scope(&self) -> RunScope<'_> {
        RunScope::empty(&self.input, &self.outcome)
    }
}

/// The status and message, for asserting both at once.
pub fn said(r: &CheckResult) -> (Status, &str) {
    (r.status, r.message.as_str())
}
