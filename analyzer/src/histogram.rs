//! A Prometheus histogram between two snapshots: the deltas of its `_sum`, `_count` and
//! cumulative `_bucket{le}` series (each summed over its other labels), and what they
//! bound about the mean of a part of the observations (T23: the server counted the
//! client's requests and maybe some others; the buckets bound the client's part).

use crate::counters::{Pair, Restart};
use crate::snapshot::Snapshot;

/// The observations made between the two snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub count: f64,
    pub sum: f64,
    /// Observations per bucket, `(lower, upper, count)`, lowest first: not cumulative;
    /// the first lower edge is 0 (durations), the last upper edge may be infinite. Empty
    /// when the snapshots hold no buckets.
    pub buckets: Vec<(f64, f64, f64)>,
}

/// The bounds the delta gives on the mean of `k` of its observations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
}

/// The cumulative count of each `le` edge of `name_bucket` in a snapshot (summed over
/// the other labels), lowest edge first.
fn cumulative(s: &Snapshot, bucket: &str) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = Vec::new();
    for x in s.metrics.select(bucket, &[]) {
        let Some(le) = x.label("le").and_then(crate::prom::parse_value) else {
            continue;
        };
        if le.is_nan() {
            continue;
        }
        match v.iter_mut().find(|(e, _)| *e == le) {
            Some(slot) => slot.1 += x.value,
            None => v.push((le, x.value)),
        }
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The histogram `base` between the pair's snapshots: none when its `_sum` or `_count`
/// is missing from either; a restart as the counters say one. Buckets are read only when
/// both snapshots have the same edges and none went down.
pub fn delta(pair: &Pair<'_>, base: &str) -> Result<Option<Delta>, Restart> {
    let sum = pair.delta(&format!("{base}_sum"), &[], None)?;
    let count = pair.delta(&format!("{base}_count"), &[], None)?;
    let (Some(sum), Some(count)) = (sum, count) else {
        return Ok(None);
    };
    let bucket = format!("{base}_bucket");
    let (b, a) = (
        cumulative(pair.before, &bucket),
        cumulative(pair.after, &bucket),
    );
    let same_edges = b.len() == a.len() && b.iter().zip(&a).all(|(x, y)| x.0 == y.0);
    let moved: Vec<(f64, f64)> = if same_edges {
        a.iter().zip(&b).map(|(y, x)| (y.0, y.1 - x.1)).collect()
    } else {
        Vec::new()
    };
    let buckets = if moved.iter().any(|(_, n)| *n < 0.0) {
        Vec::new()
    } else {
        per_bucket(&moved, count)
    };
    Ok(Some(Delta {
        count,
        sum,
        buckets,
    }))
}

/// Cumulative counts to counts per bucket; empty when they are not cumulative or do not
/// add up to the count (scrapes that raced the observations).
fn per_bucket(cumulative: &[(f64, f64)], count: f64) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    let (mut lower, mut below) = (0.0, 0.0);
    for &(le, n) in cumulative {
        if n < below {
            return Vec::new();
        }
        out.push((lower, le, n - below));
        (lower, below) = (le, n);
    }
    if out.is_empty() || (below - count).abs() > 0.5 {
        return Vec::new();
    }
    out
}

impl Delta {
    /// The mean of all observations; none without any.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0.0).then(|| self.sum / self.count)
    }

    /// Bounds on the mean of some `k` of the observations (the rest are others'): the k
    /// lowest at their buckets' lower edges, and the sum less the others at their
    /// lowest; exact when k is all of them. None when k is 0 or more than the count.
    pub fn bounds(&self, k: f64) -> Option<Bounds> {
        if k <= 0.0 || k > self.count + 0.5 {
            return None;
        }
        if (k - self.count).abs() < 0.5 {
            let m = self.sum / self.count;
            return Some(Bounds { low: m, high: m });
        }
        let others = self.count - k;
        // The others are at least 0 each, and at least their buckets' lower edges.
        let high = (self.sum - self.lowest(others)) / k;
        let low = self.lowest(k) / k;
        Some(Bounds {
            low: low.min(high),
            high,
        })
    }

    /// The smallest total `n` of the observations can have: the n in the lowest
    /// buckets, each at its lower edge (0 without buckets).
    fn lowest(&self, n: f64) -> f64 {
        let mut left = n;
        let mut total = 0.0;
        for &(lower, _, c) in &self.buckets {
            let take = c.min(left);
            total += take * lower;
            left -= take;
            if left <= 0.0 {
                break;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::snapshot;

    /// A histogram `h` with cumulative buckets at 0.1, 0.5 and +Inf.
    fn text(counts: [u32; 3], sum: f64) -> String {
        format!(
            "h_bucket{{le=\"0.1\",m=\"a\"}} {}\nh_bucket{{le=\"0.5\",m=\"a\"}} {}\n\
             h_bucket{{le=\"+Inf\",m=\"a\"}} {}\nh_sum{{m=\"a\"}} {sum}\nh_count{{m=\"a\"}} {}\n",
            counts[0], counts[1], counts[2], counts[2]
        )
    }

    #[test]
    fn the_delta_of_sum_count_and_buckets() {
        let (b, a) = (
            snapshot(&text([1, 1, 1], 0.05), 10.0),
            snapshot(&text([3, 6, 7], 2.95), 20.0),
        );
        let d = delta(&Pair::new(&b, &a), "h").unwrap().unwrap();
        assert_eq!(d.count, 6.0);
        assert!((d.sum - 2.9).abs() < 1e-9);
        assert_eq!(
            d.buckets,
            vec![(0.0, 0.1, 2.0), (0.1, 0.5, 3.0), (0.5, f64::INFINITY, 1.0)]
        );
        let m = d.mean().unwrap();
        assert_eq!(d.bounds(6.0), Some(Bounds { low: m, high: m }));
        // Four of the six: at least two at 0 and two at 0.1; at most the sum less the
        // two lowest others (at 0).
        let b4 = d.bounds(4.0).unwrap();
        assert!((b4.low - 0.05).abs() < 1e-9, "{b4:?}");
        assert!((b4.high - 2.9 / 4.0).abs() < 1e-9, "{b4:?}");
        assert_eq!(d.bounds(0.0), None);
        assert_eq!(d.bounds(7.0), None);
    }

    #[test]
    fn without_buckets_the_low_bound_is_zero_and_a_missing_sum_is_none() {
        let b = snapshot("h_sum 1.0\nh_count 2\n", 10.0);
        let a = snapshot("h_sum 3.0\nh_count 6\n", 20.0);
        let d = delta(&Pair::new(&b, &a), "h").unwrap().unwrap();
        assert!(d.buckets.is_empty());
        assert_eq!(
            d.bounds(2.0),
            Some(Bounds {
                low: 0.0,
                high: 1.0
            })
        );
        let a = snapshot("h_count 6\n", 20.0);
        assert_eq!(delta(&Pair::new(&b, &a), "h").unwrap(), None);
    }

    #[test]
    fn buckets_that_do_not_add_up_are_not_read() {
        assert!(per_bucket(&[(0.1, 3.0), (f64::INFINITY, 2.0)], 2.0).is_empty());
        assert!(per_bucket(&[(0.1, 1.0), (f64::INFINITY, 2.0)], 5.0).is_empty());
    }
}
