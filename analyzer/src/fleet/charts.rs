//! The fleet's charts: requests running and KV cache in use, one line per replica on one
//! time axis (the grid of `align.rs`), plus the replicas' running summed where every
//! replica is known. They take the single server's chart places in the Report, which a
//! fleet folder's top level never fills, so the page draws them as it draws those.

use super::replica::ReplicaRun;
use crate::insights::charts::{ChartLine, TimeChart};
use crate::series::align::on_grid;
use crate::series::{Row, Series};

/// One replica's gauge at each grid instant from `first` to `last`, held between its
/// readings; unknown outside its own recording.
fn held(points: &[(i64, f64)], first: i64, last: i64) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity((last - first + 1).max(0) as usize);
    let mut c = 0usize;
    for k in first..=last {
        let (Some(&(k0, _)), Some(&(k1, _))) = (points.first(), points.last()) else {
            out.push(None);
            continue;
        };
        if k < k0 || k > k1 {
            out.push(None);
            continue;
        }
        while c + 1 < points.len() && points[c + 1].0 <= k {
            c += 1;
        }
        out.push(Some(points[c].1));
    }
    out
}

fn line(key: String, label: String, kind: &str, values: Vec<Option<f64>>) -> ChartLine {
    ChartLine {
        key,
        label,
        kind: kind.into(),
        values,
    }
}

/// A line of running requests per replica, and their sum where there are several.
fn running_lines(
    with: &[(&str, &Series)],
    running: &[Vec<(i64, f64)>],
    last: i64,
    len: usize,
) -> Vec<ChartLine> {
    let mut run_lines: Vec<ChartLine> = with
        .iter()
        .zip(running)
        .map(|((id, _), g)| {
            line(
                format!("running:{id}"),
                format!("{id} running"),
                "line",
                held(g, 0, last),
            )
        })
        .collect();
    if with.len() > 1 {
        let sum: Vec<Option<f64>> = (0..len)
            .map(|i| run_lines.iter().map(|l| l.values[i]).sum())
            .collect();
        run_lines.push(line(
            "running:all".into(),
            "all replicas".into(),
            "line",
            sum,
        ));
    }
    run_lines
}

/// Requests running and KV cache in use per replica; none without two recordings' worth
/// of readings or a grid step.
pub fn per_replica(
    runs: &[ReplicaRun],
    step_s: Option<f64>,
    requested: Option<i64>,
) -> Option<(TimeChart, TimeChart)> {
    let with: Vec<(&str, &Series)> = runs
        .iter()
        .filter_map(|r| Some((r.id.as_str(), r.series()?)))
        .collect();
    let step = step_s
        .or_else(|| {
            with.iter()
                .filter_map(|(_, s)| s.interval_s)
                .reduce(f64::max)
        })
        .filter(|s| *s > 0.0 && s.is_finite())?;
    let t0 = with
        .iter()
        .filter_map(|(_, s)| s.rows.first().map(|r| r.t_wall))
        .fold(f64::INFINITY, f64::min);
    let grid = |gauge: fn(&Row) -> Option<f64>| -> Vec<Vec<(i64, f64)>> {
        with.iter()
            .map(|(_, s)| on_grid(s, t0, step, gauge))
            .collect()
    };
    let running = grid(|r| r.running);
    let kv = grid(|r| r.kv_usage.map(|u| u * 100.0));
    let last = running
        .iter()
        .chain(&kv)
        .filter_map(|g| g.last().map(|p| p.0))
        .max()?;
    let t: Vec<f64> = (0..=last).map(|k| k as f64 * step).collect();
    let run_lines = running_lines(&with, &running, last, t.len());
    let mut requests = TimeChart {
        key: "requests".into(),
        title: "Requests running, per replica".into(),
        caption: format!(
            "Requests each replica was working on, and all replicas together where every \
             replica has a reading; readings are placed on a {} s grid (the range queries' \
             step) and each holds until the next.",
            crate::num::shortest(step)
        ),
        y_label: "requests".into(),
        y_max: None,
        decimals: 0,
        reduced_from: None,
        t: t.clone(),
        lines: run_lines,
        markers: Vec::new(),
        reference: requested.map(|r| (r as f64, format!("asked for {r}"))),
        bands: Vec::new(),
    };
    let mut kv_chart = TimeChart {
        key: "kv".into(),
        title: "KV cache in use, per replica".into(),
        caption: "Share of each replica's KV cache holding requests.".into(),
        y_label: "% in use".into(),
        y_max: Some(100.0),
        decimals: 1,
        reduced_from: None,
        t,
        lines: with
            .iter()
            .zip(&kv)
            .map(|((id, _), g)| {
                line(
                    format!("kv:{id}"),
                    format!("{id} % in use"),
                    "line",
                    held(g, 0, last),
                )
            })
            .collect(),
        markers: Vec::new(),
        reference: None,
        bands: Vec::new(),
    };
    requests.reduce("preemption");
    kv_chart.reduce("preemption");
    Some((requests, kv_chart))
}
