//! A phase's window on the gauge series: the readings inside the load tool's own start and
//! end, and the two readings that bracket it. Counter deltas between those readings give
//! a phase's counts to the series' sampling (the inner pair counts too little at most, the
//! outer pair too much at most).

use crate::counters::Pair;
use crate::engine::Engine;
use crate::num::fixed;
use crate::prom::{Exposition, Sample};
use crate::series::{Row, Series};
use crate::snapshot::Snapshot;

/// The readings of one phase.
pub struct Window {
    /// The rows with `start <= t_wall <= end`, as a series of their own (its refused
    /// values are those of these rows' lines).
    pub inner: Series,
    /// The last reading at or before the phase's start.
    pub before: Row,
    /// The first reading at or after the phase's end.
    pub after: Row,
}

/// Cuts the window of `[start, end]` (unix seconds) out of the series; the reason when the
/// series does not cover the whole phase.
pub fn cut(series: &Series, start: f64, end: f64) -> Result<Window, String> {
    let rows = &series.rows;
    let walls = rows.t_wall();
    let before = walls.iter().rposition(|&t| t <= start).map(|k| rows.get(k));
    let after = walls.iter().position(|&t| t >= end).map(|k| rows.get(k));
    let (Some(before), Some(after)) = (before, after) else {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return Err("the series holds no reading".into());
        };
        return Err(format!(
            "the series does not cover the phase: its readings run from {} s to {} s on the \
             charts' time axis, the phase from {} s to {} s",
            fixed(0.0, 1),
            fixed(last.t_wall - first.t_wall, 1),
            fixed(start - first.t_wall, 1),
            fixed(end - first.t_wall, 1)
        ));
    };
    let mut inner = Series {
        url: series.url.clone(),
        interval_s: series.interval_s,
        engine_named: series.engine_named,
        ..Series::default()
    };
    for (k, (&t, &line)) in rows.t_wall().iter().zip(&series.row_lines).enumerate() {
        if t >= start && t <= end {
            inner.rows.push(rows.get(k));
            inner.row_lines.push(line);
        }
    }
    let lines = |l: Option<usize>| {
        l.and_then(|l| u32::try_from(l).ok())
            .is_some_and(|l| inner.row_lines.binary_search(&l).is_ok())
    };
    inner.implausible = series
        .implausible
        .iter()
        .filter(|i| lines(i.line))
        .cloned()
        .collect();
    Ok(Window {
        inner,
        before,
        after,
    })
}

impl Window {
    /// The first and last reading inside the phase, when there are two.
    pub fn inner_ends(&self) -> Option<(Row, Row)> {
        let rows = &self.inner.rows;
        (rows.len() >= 2).then(|| (rows.get(0), rows.get(rows.len() - 1)))
    }
}

/// A reading of the series as a snapshot holding the engine's eviction and
/// generated-tokens counters, so the run-level checks read a phase's edges as they read
/// the recorder's snapshots. A column the row lacks is absent from the snapshot.
pub fn as_snapshot(engine: Engine, row: &Row) -> Snapshot {
    let m = engine.metrics();
    let counters = [
        (m.evictions, row.preemptions),
        (Some(m.generation_tokens), row.generation_tokens),
    ];
    let samples = counters
        .into_iter()
        .filter_map(|(name, value)| {
            Some(Sample {
                name: name?.to_string(),
                labels: Vec::new(),
                value: value?,
                line: 0,
            })
        })
        .collect();
    Snapshot {
        url: "series".into(),
        t_wall: row.t_wall,
        t_mono_ns: row.t_mono_ns,
        latency_s: row.latency_s,
        metrics: Exposition { samples },
        implausible: Vec::new(),
    }
}

/// Two readings as snapshots, for [`Pair`].
pub struct Edges {
    pub before: Snapshot,
    pub after: Snapshot,
}

impl Edges {
    pub fn new(engine: Engine, before: &Row, after: &Row) -> Edges {
        Edges {
            before: as_snapshot(engine, before),
            after: as_snapshot(engine, after),
        }
    }

    pub fn pair(&self) -> Pair<'_> {
        Pair::new(&self.before, &self.after)
    }
}
