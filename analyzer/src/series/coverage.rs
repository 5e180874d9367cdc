//! Whether a series' readings cover the load. A recording can stop reading the server
//! before the load ends (a full disk stops the writer, a stalled `/metrics` fails every
//! reading after some point), and a check of the readings it has would then judge a part
//! of the load as if it were the whole. The rule: the readings cover the load when the
//! last one was taken within a few reading intervals of the load's end.

use crate::docs::FailedScrape;
use crate::manifest::Manifest;
use crate::num::fixed;

use super::Series;

/// When the load ran (wall clock, unix seconds, as the manifest records it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadWindow {
    pub started_wall: f64,
    pub ended_wall: f64,
}

impl LoadWindow {
    /// The manifest's load start and end, when both were recorded.
    pub fn of(m: &Manifest) -> Option<LoadWindow> {
        let (started_wall, ended_wall) = (m.load_started_wall?, m.load_ended_wall?);
        (started_wall.is_finite() && ended_wall.is_finite() && ended_wall >= started_wall)
            .then_some(LoadWindow {
                started_wall,
                ended_wall,
            })
    }
}

/// How far the readings reach against the load.
#[derive(Debug, Clone, PartialEq)]
pub enum Coverage {
    /// Nothing to say against their extent: the last reading is at (or past) the load's
    /// end, or there is no reading and no failed one (the checks say so themselves).
    Covered,
    /// The readings stop before the load's end.
    EndsEarly {
        /// Seconds from the load's start to the last reading (negative: before the load
        /// started); none when no reading succeeded.
        last_reading_s: Option<f64>,
        /// Seconds from the load's start to its end.
        load_end_s: f64,
        why: Why,
    },
}

/// Why the readings stop where they do.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// Every reading tried after the last one failed: how many, and the first one's
    /// reason.
    Failed { count: usize, first: String },
    /// The file holds nothing after the last reading: the recorder stopped writing it.
    FileEnds,
}

/// How close to the load's end the last reading must be: three reading intervals, at
/// least 2 s (a reading in progress at the end, a scheduler's hiccup).
pub fn slack_s(interval_s: Option<f64>) -> f64 {
    let interval = interval_s
        .filter(|i| i.is_finite() && *i > 0.0)
        .unwrap_or(0.0);
    (3.0 * interval).max(2.0)
}

/// Where the readings of `series` end against `load`.
pub fn coverage(series: &Series, load: LoadWindow) -> Coverage {
    let last = series.rows.t_wall().last().copied();
    let reaches = |t: f64| t >= load.ended_wall - slack_s(series.interval_s);
    if last.is_some_and(reaches) || (last.is_none() && series.failed.is_empty()) {
        return Coverage::Covered;
    }
    let after: Vec<&FailedScrape> = series
        .failed
        .iter()
        .filter(|f| last.is_none_or(|t| f.started_wall >= t))
        .collect();
    let why = match after.first() {
        Some(first) => Why::Failed {
            count: after.len(),
            first: first.scrape_failed.clone(),
        },
        None => Why::FileEnds,
    };
    Coverage::EndsEarly {
        last_reading_s: last.map(|t| t - load.started_wall),
        load_end_s: load.ended_wall - load.started_wall,
        why,
    }
}

impl Coverage {
    /// What a check of the readings can't tell, in words; `stopped` is the recorder's own
    /// account of why it stopped (the manifest's problem), used when the file just ends.
    /// None when the readings cover the load.
    pub fn cannot_tell(&self, stopped: Option<&str>) -> Option<String> {
        let Coverage::EndsEarly {
            last_reading_s,
            load_end_s,
            why,
        } = self
        else {
            return None;
        };
        let load = format!("the load ran {} s", fixed(*load_end_s, 1));
        let end = match last_reading_s {
            None => format!("no reading of the metrics succeeded during the load ({load})"),
            Some(t) if *t < 0.0 => format!(
                "the readings stop {} s before the load started ({load})",
                fixed(-t, 1)
            ),
            Some(t) => format!(
                "the readings stop {} s into the load, which ran {} s",
                fixed(*t, 1),
                fixed(*load_end_s, 1)
            ),
        };
        let since = if last_reading_s.is_some() {
            " after that"
        } else {
            ""
        };
        let why = match (why, stopped.filter(|s| !s.is_empty())) {
            (Why::Failed { count: 1, first }, _) => {
                format!("the one reading tried{since} failed ({first})")
            }
            (Why::Failed { count, first }, _) => {
                format!("all {count} readings tried{since} failed (the first: {first})")
            }
            (Why::FileEnds, Some(problem)) => format!("the recorder stopped: {problem}"),
            (Why::FileEnds, None) => "the series file ends there".to_string(),
        };
        Some(format!(
            "{end}; {why}, so the rest of the load was not read"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Row;

    fn series(walls: &[f64], failed: &[(f64, &str)]) -> Series {
        Series {
            interval_s: Some(0.25),
            rows: walls
                .iter()
                .map(|&t_wall| Row {
                    t_wall,
                    ..Row::default()
                })
                .collect(),
            failed: failed
                .iter()
                .map(|&(t, why)| FailedScrape {
                    scrape_failed: why.into(),
                    started_wall: t,
                    ended_wall: t + 2.0,
                    started_mono_ns: None,
                    ended_mono_ns: None,
                })
                .collect(),
            ..Series::default()
        }
    }

    const LOAD: LoadWindow = LoadWindow {
        started_wall: 100.0,
        ended_wall: 140.0,
    };

    #[test]
    fn readings_to_the_end_cover_the_load() {
        assert_eq!(
            coverage(&series(&[99.0, 120.0, 141.0], &[]), LOAD),
            Coverage::Covered
        );
        // Within the slack of the end: a reading in progress when the load ended.
        assert_eq!(
            coverage(&series(&[99.0, 138.5], &[]), LOAD),
            Coverage::Covered
        );
        // Failed readings in the middle do not make the end early.
        assert_eq!(
            coverage(
                &series(&[99.0, 139.9], &[(110.0, "timed out after 2 s")]),
                LOAD
            ),
            Coverage::Covered
        );
        // No reading and no failed one: nothing to say here.
        assert_eq!(coverage(&series(&[], &[]), LOAD), Coverage::Covered);
    }

    #[test]
    fn the_slack_is_three_intervals_or_two_seconds() {
        assert_eq!(slack_s(Some(0.25)), 2.0);
        assert_eq!(slack_s(Some(15.0)), 45.0);
        assert_eq!(slack_s(None), 2.0);
        assert_eq!(slack_s(Some(f64::NAN)), 2.0);
        let mut s = series(&[99.0, 120.0], &[]);
        s.interval_s = Some(10.0);
        assert_eq!(coverage(&s, LOAD), Coverage::Covered);
    }

    #[test]
    fn a_stalled_endpoint_ends_the_readings_early_and_says_why() {
        let s = series(
            &[99.0, 110.0, 112.0],
            &[
                (105.0, "connection refused"),
                (112.25, "timed out after 2 s"),
                (114.25, "timed out after 2 s"),
            ],
        );
        let c = coverage(&s, LOAD);
        assert_eq!(
            c,
            Coverage::EndsEarly {
                last_reading_s: Some(12.0),
                load_end_s: 40.0,
                why: Why::Failed {
                    count: 2,
                    first: "timed out after 2 s".into()
                },
            }
        );
        assert_eq!(
            c.cannot_tell(Some("ignored")).unwrap(),
            "the readings stop 12.0 s into the load, which ran 40.0 s; all 2 readings tried \
             after that failed (the first: timed out after 2 s), so the rest of the load was \
             not read"
        );
    }

    #[test]
    fn a_file_that_just_ends_names_the_recorders_problem() {
        let c = coverage(&series(&[99.0, 101.5], &[]), LOAD);
        assert_eq!(
            c,
            Coverage::EndsEarly {
                last_reading_s: Some(1.5),
                load_end_s: 40.0,
                why: Why::FileEnds,
            }
        );
        let no_space = "no space left on device while writing run.series.jsonl";
        assert!(c.cannot_tell(Some(no_space)).unwrap().ends_with(&format!(
            "the recorder stopped: {no_space}, so the rest of the load was not read"
        )));
        assert!(c
            .cannot_tell(None)
            .unwrap()
            .contains("; the series file ends there,"));
    }

    #[test]
    fn no_reading_during_the_load() {
        let c = coverage(
            &series(&[], &[(100.5, "HTTP 503 Service Unavailable at /metrics")]),
            LOAD,
        );
        assert_eq!(
            c,
            Coverage::EndsEarly {
                last_reading_s: None,
                load_end_s: 40.0,
                why: Why::Failed {
                    count: 1,
                    first: "HTTP 503 Service Unavailable at /metrics".into()
                },
            }
        );
        assert!(c
            .cannot_tell(None)
            .unwrap()
            .starts_with("no reading of the metrics succeeded during the load (the load ran 40.0 s); the one reading tried failed"));
        let before = coverage(&series(&[95.0], &[]), LOAD);
        assert!(before
            .cannot_tell(None)
            .unwrap()
            .starts_with("the readings stop 5.0 s before the load started (the load ran 40.0 s)"));
    }

    #[test]
    fn the_window_needs_both_ends_in_order() {
        let m = |s: Option<f64>, e: Option<f64>| Manifest {
            load_started_wall: s,
            load_ended_wall: e,
            ..Manifest::default()
        };
        assert_eq!(
            LoadWindow::of(&m(Some(1.0), Some(2.0))),
            Some(LoadWindow {
                started_wall: 1.0,
                ended_wall: 2.0
            })
        );
        assert_eq!(LoadWindow::of(&m(Some(1.0), None)), None);
        assert_eq!(LoadWindow::of(&m(Some(3.0), Some(2.0))), None);
        assert_eq!(LoadWindow::of(&m(Some(f64::NAN), Some(2.0))), None);
    }
}
