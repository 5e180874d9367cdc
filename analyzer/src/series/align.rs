//! The replicas' recordings on one time axis. Prometheus' range queries answer at the same
//! step for every replica, so readings fall on a shared grid: each reading goes to the
//! grid instant nearest its time (`round((t - t0) / step)`), and a replica's gauge holds
//! its last reading until its next one, within its own recording (before its first or
//! after its last reading it is not known). Sums are taken only at instants where every
//! replica is known.

use crate::series::{Row, Series};

/// The grid instant with the most requests running across the replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakSum {
    /// Requests running on all replicas together.
    pub running: f64,
    /// Seconds since the first reading of any replica.
    pub at_s: f64,
    /// Each replica's running at that instant, in the order given.
    pub each: Vec<f64>,
}

/// The running gauges summed across `series` at each shared instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Aligned {
    /// None when no instant had every replica known.
    pub peak: Option<PeakSum>,
    /// Instants where every replica was known.
    pub instants: usize,
}

/// One replica's readings of a gauge on the grid: (instant, value), ascending.
pub fn on_grid(s: &Series, t0: f64, step: f64, gauge: fn(&Row) -> Option<f64>) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = Vec::new();
    for r in &s.rows {
        let Some(v) = gauge(&r) else { continue };
        let k = ((r.t_wall - t0) / step).round() as i64;
        match out.last_mut() {
            // Two readings nearest one instant: the later one stands.
            Some(last) if last.0 == k => last.1 = v,
            _ => out.push((k, v)),
        }
    }
    out
}

/// Sums the running gauges of `series` at each instant of a grid `step_s` wide.
pub fn sum_running(series: &[&Series], step_s: f64) -> Aligned {
    let none = Aligned {
        peak: None,
        instants: 0,
    };
    if series.is_empty() || !(step_s > 0.0 && step_s.is_finite()) {
        return none;
    }
    let t0 = series
        .iter()
        .filter_map(|s| s.rows.first().map(|r| r.t_wall))
        .fold(f64::INFINITY, f64::min);
    if !t0.is_finite() {
        return none;
    }
    let grids: Vec<Vec<(i64, f64)>> = series
        .iter()
        .map(|s| on_grid(s, t0, step_s, |r| r.running))
        .collect();
    if grids.iter().any(Vec::is_empty) {
        return none;
    }
    // Every replica is known from the latest first reading to the earliest last one.
    let start = grids.iter().map(|g| g[0].0).max().unwrap_or(0);
    let end = grids.iter().map(|g| g[g.len() - 1].0).min().unwrap_or(-1);
    let mut cursor = vec![0usize; grids.len()];
    let mut peak: Option<PeakSum> = None;
    let mut instants = 0;
    for k in start..=end {
        let mut each = Vec::with_capacity(grids.len());
        for (g, c) in grids.iter().zip(cursor.iter_mut()) {
            while *c + 1 < g.len() && g[*c + 1].0 <= k {
                *c += 1;
            }
            each.push(g[*c].1);
        }
        instants += 1;
        let running: f64 = each.iter().sum();
        if peak.as_ref().is_none_or(|p| running > p.running) {
            peak = Some(PeakSum {
                running,
                at_s: k as f64 * step_s,
                each,
            });
        }
    }
    Aligned { peak, instants }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(rows: &[(f64, f64)]) -> Series {
        let mut text = String::from("{\"schema\": \"inferlint.series/1\", \"interval_s\": 1.0}\n");
        for (t, v) in rows {
            text.push_str(&format!("{{\"t_wall\": {t}, \"running\": {v}}}\n"));
        }
        Series::read("s", text.as_bytes()).unwrap()
    }

    #[test]
    fn sums_at_shared_instants_holding_each_gauge() {
        let a = series(&[(100.0, 1.0), (101.0, 5.0), (102.0, 2.0), (103.0, 0.0)]);
        // b reads a little late (rounded to the same instants) and skips 102.
        let b = series(&[(101.1, 3.0), (103.1, 4.0)]);
        let got = sum_running(&[&a, &b], 1.0);
        // 101: 5 + 3; 102: 2 + 3 (b held); 103: 0 + 4. Instant 100 has no b.
        assert_eq!(got.instants, 3);
        let p = got.peak.unwrap();
        assert_eq!((p.running, p.at_s, p.each), (8.0, 1.0, vec![5.0, 3.0]));
    }

    #[test]
    fn recordings_that_never_overlap_have_no_sum() {
        let a = series(&[(100.0, 1.0), (101.0, 2.0)]);
        let b = series(&[(200.0, 3.0)]);
        assert_eq!(sum_running(&[&a, &b], 1.0).peak, None);
        assert_eq!(sum_running(&[&a], 0.0).peak, None);
    }
}
