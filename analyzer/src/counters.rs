//! Counter deltas between two snapshots, with restart detection, and the span between
//! them (docs/run-folder.md#counters).

use std::collections::HashMap;

use serde::Serialize;

use crate::num::fixed;
use crate::snapshot::Snapshot;

/// A restart as a check's evidence: what moved (the `_created` stamps, or a counter
/// that went down), and its value before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestartEvidence {
    pub restarted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_changed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
    pub before: f64,
    pub after: f64,
}

/// The server process was replaced between the snapshots.
#[derive(Debug, Clone, PartialEq)]
pub enum Restart {
    /// `_created` stamps moved.
    Stamps {
        changed: usize,
        example: String,
        before: f64,
        after: f64,
    },
    /// A counter went down.
    Decrease {
        counter: String,
        before: f64,
        after: f64,
    },
}

impl Restart {
    /// The evidence of a restart, starting with `restarted: true`.
    pub fn evidence(&self) -> RestartEvidence {
        match self {
            Restart::Stamps {
                changed,
                example,
                before,
                after,
            } => RestartEvidence {
                restarted: true,
                created_changed: Some(*changed),
                example: Some(example.clone()),
                counter: None,
                before: *before,
                after: *after,
            },
            Restart::Decrease {
                counter,
                before,
                after,
            } => RestartEvidence {
                restarted: true,
                created_changed: None,
                example: None,
                counter: Some(counter.clone()),
                before: *before,
                after: *after,
            },
        }
    }

    /// One sentence for people.
    pub fn describe(&self) -> String {
        match self {
            Restart::Stamps {
                changed,
                example,
                before,
                after,
            } => format!(
                "the server restarted between the two readings: {changed} creation stamp{} \
                 changed (e.g. {example}: {} -> {}), so its counters started again from zero",
                if *changed == 1 { "" } else { "s" },
                py_repr(*before),
                py_repr(*after)
            ),
            Restart::Decrease {
                counter,
                before,
                after,
            } => format!(
                "the server restarted between the two readings: {counter} went down from {} \
                 to {}",
                py_repr(*before),
                py_repr(*after)
            ),
        }
    }
}

fn py_repr(x: f64) -> String {
    let mut s = String::new();
    crate::json::write_float(&mut s, x);
    s
}

/// A series by name and its sorted labels.
type SeriesKey<'a> = (&'a str, &'a [(String, String)]);

/// Detects a restart by moved `_created` stamps. Cheap enough to run
/// once per pair; callers cache it in [`Pair`].
pub fn moved_stamps(before: &Snapshot, after: &Snapshot) -> Option<Restart> {
    let mut old: HashMap<SeriesKey<'_>, f64> = HashMap::new();
    for s in &before.metrics.samples {
        if s.name.ends_with("_created") {
            old.entry((s.name.as_str(), s.labels.as_slice()))
                .or_insert(s.value);
        }
    }
    let mut changed = 0;
    let mut first: Option<(String, f64, f64)> = None;
    for s in &after.metrics.samples {
        if !s.name.ends_with("_created") {
            continue;
        }
        if let Some(&v0) = old.get(&(s.name.as_str(), s.labels.as_slice())) {
            // NaN compares unequal, so a NaN stamp counts as moved.
            #[allow(clippy::float_cmp)]
            if v0 != s.value {
                changed += 1;
                if first.is_none() {
                    first = Some((s.name.clone(), v0, s.value));
                }
            }
        }
    }
    first.map(|(example, before, after)| Restart::Stamps {
        changed,
        example,
        before,
        after,
    })
}

/// A pair of snapshots with its restart check done once.
pub struct Pair<'a> {
    pub before: &'a Snapshot,
    pub after: &'a Snapshot,
    stamps: Option<Restart>,
}

impl<'a> Pair<'a> {
    pub fn new(before: &'a Snapshot, after: &'a Snapshot) -> Self {
        Pair {
            before,
            after,
            stamps: moved_stamps(before, after),
        }
    }

    /// The restart seen by creation stamps, if any.
    pub fn stamps_restart(&self) -> Option<&Restart> {
        self.stamps.as_ref()
    }

    /// The counter's increase between the readings: its series' sum after less before;
    /// none when it is missing from either (a present `witness` gauge makes a missing
    /// counter read 0); a restart when stamps moved or the counter went down.
    pub fn delta(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        witness: Option<&str>,
    ) -> Result<Option<f64>, Restart> {
        if let Some(r) = &self.stamps {
            return Err(r.clone());
        }
        let read = |s: &Snapshot| {
            s.metrics
                .total(name, labels)
                .or_else(|| witness.filter(|w| s.metrics.has(w)).map(|_| 0.0))
        };
        let (Some(v0), Some(v1)) = (read(self.before), read(self.after)) else {
            return Ok(None);
        };
        if v1 < v0 {
            return Err(Restart::Decrease {
                counter: name.to_string(),
                before: v0,
                after: v1,
            });
        }
        Ok(Some(v1 - v0))
    }

    /// Mean of a histogram over the interval: Δsum / Δcount; none when either is absent
    /// or the count did not move.
    pub fn histogram_mean(&self, base: &str) -> Result<Option<f64>, Restart> {
        let sum = self.delta(&format!("{base}_sum"), &[], None)?;
        let count = self.delta(&format!("{base}_count"), &[], None)?;
        Ok(match (sum, count) {
            (Some(s), Some(c)) if c != 0.0 => Some(s / c),
            _ => None,
        })
    }

    /// The first value the plausibility gate refused in either snapshot among `fields`
    /// (metric names, or `t_wall`, `t_mono_ns`, `latency_s`).
    pub fn implausible(&self, fields: &[&str]) -> Option<&crate::plausible::Implausible> {
        self.before
            .implausible_in(fields)
            .or_else(|| self.after.implausible_in(fields))
    }

    /// The span between the two readings (the free function `span` says how).
    pub fn span(&self) -> Result<Span, SpanRefused> {
        span(self.before, self.after)
    }
}

/// Seconds between two readings and how uncertain that is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub seconds: f64,
    pub uncertainty: f64,
}

/// Why no span could be given.
#[derive(Debug, Clone, PartialEq)]
pub enum SpanRefused {
    NoClock,
    ClocksDisagree { mono: f64, wall: f64 },
}

impl SpanRefused {
    pub fn describe(&self) -> String {
        match self {
            SpanRefused::NoClock => {
                "no clock: bare Prometheus text carries no time, so the span between the \
                 readings is unknown (use the recorder's .snapshot.json files)"
                    .into()
            }
            SpanRefused::ClocksDisagree { mono, wall } => format!(
                "the two clocks disagree: {} s by the monotonic clock, {} s by the wall \
                 clock (snapshots from different host boots, or the wall clock stepped)",
                fixed(*mono, 3),
                fixed(*wall, 3)
            ),
        }
    }
}

/// Seconds between two readings: by the monotonic clocks when both have one (refused
/// when they and the wall clocks disagree by more than 1 s), else by the wall clocks
/// (refused for bare text, which has none); uncertain by half the two latencies summed.
pub fn span(before: &Snapshot, after: &Snapshot) -> Result<Span, SpanRefused> {
    let wall = after.t_wall - before.t_wall;
    let uncertainty = (before.latency_s.unwrap_or(0.0) + after.latency_s.unwrap_or(0.0)) / 2.0;
    if let (Some(m0), Some(m1)) = (before.t_mono_ns, after.t_mono_ns) {
        // Subtract exactly in integers first, as the reference does.
        let mono = (i128::from(m1) - i128::from(m0)) as f64 / 1e9;
        if !wall.is_nan() && (mono - wall).abs() > 1.0 {
            return Err(SpanRefused::ClocksDisagree { mono, wall });
        }
        return Ok(Span {
            seconds: mono,
            uncertainty,
        });
    }
    if wall.is_nan() {
        return Err(SpanRefused::NoClock);
    }
    Ok(Span {
        seconds: wall,
        uncertainty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prom::Exposition;

    fn snap(text: &str, wall: f64, mono: Option<i64>, lat: Option<f64>) -> Snapshot {
        Snapshot {
            url: "u".into(),
            t_wall: wall,
            t_mono_ns: mono,
            latency_s: lat,
            metrics: Exposition::parse(text).unwrap(),
            implausible: Vec::new(),
        }
    }

    #[test]
    fn delta_absent_witness_and_decrease() {
        let b = snap("a 1\nw 0\n", 0.0, None, None);
        let a = snap("a 4\nc 3\nw 0\n", 1.0, None, None);
        let p = Pair::new(&b, &a);
        assert_eq!(p.delta("a", &[], None), Ok(Some(3.0)));
        assert_eq!(p.delta("c", &[], None), Ok(None));
        assert_eq!(p.delta("c", &[], Some("w")), Ok(Some(3.0)));
        let p = Pair::new(&a, &b);
        assert!(matches!(
            p.delta("a", &[], None),
            Err(Restart::Decrease { .. })
        ));
    }

    #[test]
    fn stamps_only_in_one_snapshot_are_ignored() {
        let b = snap("x_created{a=\"1\"} 5\n", 0.0, None, None);
        let a = snap("x_created{a=\"1\"} 5\ny_created 9\nx 1\n", 1.0, None, None);
        assert!(moved_stamps(&b, &a).is_none());
        let a2 = snap("x_created{a=\"1\"} 6\n", 1.0, None, None);
        let r = moved_stamps(&b, &a2).unwrap();
        assert!(r.describe().contains("1 creation stamp changed"));
    }

    #[test]
    fn spans() {
        let b = snap("", 100.0, Some(1_000_000_000), Some(0.01));
        let a = snap("", 110.2, Some(11_000_000_000), Some(0.03));
        let s = span(&b, &a).unwrap();
        assert_eq!(s.seconds, 10.0);
        assert!((s.uncertainty - 0.02).abs() < 1e-12);
        let a = snap("", 200.0, Some(11_000_000_000), None);
        assert!(matches!(
            span(&b, &a),
            Err(SpanRefused::ClocksDisagree { .. })
        ));
        let b = snap("", f64::NAN, None, None);
        assert_eq!(span(&b, &b), Err(SpanRefused::NoClock));
        let b = snap("", 100.0, None, None);
        let a = snap("", 160.5, Some(5), None);
        assert_eq!(span(&b, &a).unwrap().seconds, 60.5);
    }
}
