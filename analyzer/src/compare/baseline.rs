//! `compare --baseline OLD NEW`: is NEW worse than OLD? A tripwire that did not fail on
//! OLD fails on NEW (or, under `--strict`, warns where OLD neither failed nor warned), or
//! a figure (output tokens/s, most running at once) fell by more than the tolerance.

use crate::rules::Tripwire;
use serde::Serialize;

use super::reading::percent;
use super::{Run, RATE_TOLERANCE};
use crate::num::thousands;
use crate::report::Report;
use crate::rules::verdict::{CheckResult, Status};

/// How much worse a figure may get, and whether warnings count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// As a fraction: 0.05 for 5%.
    pub fraction: f64,
    /// A new warning is a regression too.
    pub strict: bool,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            fraction: RATE_TOLERANCE,
            strict: false,
        }
    }
}

impl Tolerance {
    /// The fraction as a percentage, without the float noise of `0.05 * 100`.
    pub fn percent(self) -> f64 {
        crate::num::round_dp(self.fraction * 100.0, 6)
    }

    /// Reads `5%` or `5` (percent either way), 0 to 100.
    pub fn parse_percent(text: &str) -> Result<f64, String> {
        let t = text.trim();
        let n = t.strip_suffix('%').unwrap_or(t).trim();
        match n.parse::<f64>() {
            Ok(p) if p.is_finite() && (0.0..=100.0).contains(&p) => Ok(p / 100.0),
            _ => Err(format!(
                "--tolerance {text}: give a percentage from 0 to 100, such as 5%"
            )),
        }
    }
}

/// The verdict of NEW against OLD.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Baseline {
    pub old: String,
    pub new: String,
    pub tolerance_pct: f64,
    pub strict: bool,
    pub regressions: Vec<Regression>,
    /// Figures that could not be compared, and why.
    pub not_compared: Vec<String>,
}

/// One way NEW is worse than OLD.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// A tripwire id (`T8`) or a figure's row key.
    pub key: String,
    /// What got worse: "T8 concurrency-not-reached", "Output tokens/s".
    pub what: String,
    pub old: String,
    pub new: String,
    /// One line naming the regression.
    pub reason: String,
}

pub(super) fn regressions(old: Run<'_>, new: Run<'_>, tol: Tolerance) -> Baseline {
    let mut out = Vec::new();
    let mut not_compared = Vec::new();
    let bad = |s: Status| s == Status::Fail || (tol.strict && s == Status::Warn);
    for c in &new.report.checks {
        if !bad(c.status) {
            continue;
        }
        let before = old.report.checks.iter().find(|o| o.tripwire == c.tripwire);
        if before.is_some_and(|o| bad(o.status) && o.status <= c.status) {
            continue;
        }
        out.push(tripwire_regression(c, before, old.label, new.label));
    }
    let (o, n) = (old.report, new.report);
    match throughput(o, n) {
        Some((what, x, y)) => {
            if let Some(r) = figure(
                "output_tokens_per_s",
                &format!("Output tokens/s ({what})"),
                x,
                y,
                tol,
                thousands,
            ) {
                out.push(r);
            }
        }
        None => not_compared.push(
            "output tokens/s: neither the load tool's figure nor the server's counter is in both runs"
                .to_string(),
        ),
    }
    match (o.summary.peak_running, n.summary.peak_running) {
        (Some(x), Some(y)) => {
            if let Some(r) = figure(
                "peak_running",
                "Most running at once",
                x as f64,
                y as f64,
                tol,
                thousands,
            ) {
                out.push(r);
            }
        }
        _ => not_compared.push(
            "most running at once: a run has no recording of the running requests".to_string(),
        ),
    }
    Baseline {
        old: old.label.to_string(),
        new: new.label.to_string(),
        tolerance_pct: tol.percent(),
        strict: tol.strict,
        regressions: out,
        not_compared,
    }
}

fn tripwire_regression(
    c: &CheckResult,
    before: Option<&CheckResult>,
    old: &str,
    new: &str,
) -> Regression {
    let was = before.map_or("not checked", |b| b.status.report_label());
    let now = c.status.report_label();
    Regression {
        key: c.id(),
        what: format!("{} {}", c.id(), c.name()),
        old: was.to_string(),
        new: now.to_string(),
        reason: format!(
            "{} {}: {} on {old}, {} on {new}: {}",
            c.id(),
            c.name(),
            was.to_lowercase(),
            now.to_lowercase(),
            c.message
        ),
    }
}

/// The output rate both runs have, the load tool's before the server counter's.
fn throughput(old: &Report, new: &Report) -> Option<(&'static str, f64, f64)> {
    let client = |r: &Report| {
        r.bench
            .as_ref()
            .and_then(|b| b.output_throughput)
            .filter(|v| v.is_finite())
    };
    let server = |r: &Report| {
        r.checks
            .iter()
            .find(|c| c.tripwire == Tripwire::IntegerSecondTimer)
            .and_then(crate::rules::t10_integer_second_timer::rate)
            .and_then(|e| e.rate_per_s)
            .filter(|v| v.is_finite())
    };
    match (client(old), client(new)) {
        (Some(x), Some(y)) => Some(("the load tool's", x, y)),
        _ => Some(("the server's counter", server(old)?, server(new)?)),
    }
}

/// A figure that fell from `x` to `y` by more than the tolerance.
fn figure(
    key: &str,
    what: &str,
    x: f64,
    y: f64,
    tol: Tolerance,
    show: impl Fn(f64) -> String,
) -> Option<Regression> {
    let fell = if x > 0.0 { (x - y) / x } else { 0.0 };
    (fell > tol.fraction).then(|| Regression {
        key: key.to_string(),
        what: what.to_string(),
        old: show(x),
        new: show(y),
        reason: format!(
            "{what} fell {} from {} to {}, beyond the {}% tolerance",
            percent(fell),
            show(x),
            show(y),
            crate::num::shortest(tol.percent())
        ),
    })
}

impl Baseline {
    /// Exit status of `compare --baseline`: 1 on a regression, else 0.
    pub fn exit_status(&self) -> i32 {
        i32::from(!self.regressions.is_empty())
    }

    /// A one-line summary for the terminal.
    pub fn summary(&self) -> String {
        match self.regressions.len() {
            0 => format!(
                "No regression: {} is not worse than {} (tolerance {}%).",
                self.new,
                self.old,
                crate::num::shortest(self.tolerance_pct)
            ),
            n => format!(
                "{n} regression{} of {} against {}.",
                if n == 1 { "" } else { "s" },
                self.new,
                self.old
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_read_as_percentages() {
        assert_eq!(Tolerance::parse_percent("5%"), Ok(0.05));
        assert_eq!(Tolerance::parse_percent(" 12.5 "), Ok(0.125));
        assert!(Tolerance::parse_percent("-1%").is_err());
        assert!(Tolerance::parse_percent("lots").is_err());
        let t = Tolerance {
            fraction: 0.05,
            strict: false,
        };
        assert_eq!(t.percent(), 5.0);
    }

    #[test]
    fn a_figure_regresses_only_beyond_the_tolerance() {
        let t = Tolerance::default();
        let show = thousands;
        assert!(figure("k", "Rate", 100.0, 95.0, t, show).is_none());
        let r = figure("k", "Rate", 100.0, 94.0, t, show).unwrap();
        assert_eq!(
            r.reason,
            "Rate fell 6.0% from 100 to 94, beyond the 5% tolerance"
        );
        assert!(
            figure("k", "Rate", 100.0, 150.0, t, show).is_none(),
            "a rise is no regression"
        );
    }
}
