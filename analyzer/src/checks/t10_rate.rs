//! T10: a rate computed from whole-second stamps is off by up to a second at each end;
//! the snapshots' own sub-second clocks give the real one (checks.md §5).

use crate::counters::Pair;
use crate::num::fixed;
use crate::plausible;
use crate::series::column;
use crate::verdict::{CheckResult, Status};

pub fn check(pair: &Pair<'_>, counter: &str) -> CheckResult {
    if let Some(bad) = pair.implausible(&[
        counter,
        column::T_WALL,
        column::T_MONO_NS,
        column::LATENCY_S,
    ]) {
        return CheckResult::new(10, Status::Unknown, plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    let tokens = match pair.delta(counter, &[], None) {
        Err(restart) => return CheckResult::new(10, Status::Unknown, restart.describe()),
        Ok(t) => t,
    };
    let span = match pair.span() {
        Err(refused) => return CheckResult::new(10, Status::Unknown, refused.describe()),
        Ok(s) => s,
    };
    let Some(tokens) = tokens else {
        return CheckResult::new(
            10,
            Status::Unknown,
            format!("{counter} is missing from a snapshot, so no rate can be computed"),
        );
    };
    if span.seconds <= 0.0 {
        return CheckResult::new(
            10,
            Status::Unknown,
            format!(
                "the span between the readings is not positive ({} s)",
                fixed(span.seconds, 3)
            ),
        );
    }
    // A span longer than a year between two readings of one run is a damaged clock.
    if span.seconds > plausible::MAX_SECONDS {
        return CheckResult::new(
            10,
            Status::Unknown,
            format!(
                "the span between the readings is {} s, longer than a year: a clock is damaged",
                plausible::shown(span.seconds)
            ),
        );
    }
    // No tokens: nothing was generated to time, so a rate of zero shows nothing.
    if tokens == 0.0 {
        return CheckResult::new(
            10,
            Status::Unknown,
            format!(
                "no tokens were generated between the readings ({} s apart), so there is no \
                 rate to check",
                fixed(span.seconds, 3)
            ),
        )
        .with("tokens", tokens)
        .with("span_s", span.seconds);
    }
    let rate = tokens / span.seconds;
    let int_span = pair.after.t_wall.trunc() - pair.before.t_wall.trunc();
    let mut r = CheckResult::new(
        10,
        Status::Pass,
        format!(
            "{} tokens/s over {}s",
            fixed(rate, 2),
            fixed(span.seconds, 3)
        ),
    )
    .with("tokens", tokens)
    .with("span_s", span.seconds)
    .with("span_uncertainty_s", span.uncertainty)
    .with("rate_per_s", rate)
    .with("integer_second_span_s", int_span as i64);
    if int_span > 0.0 {
        let int_rate = tokens / int_span;
        r.set("integer_second_rate_per_s", int_rate);
        // An idle run has no rate to compare against: leave the error out.
        if rate != 0.0 {
            r.set("integer_second_error", int_rate / rate - 1.0);
        }
    }
    r
}

/// What a whole-second timer would have said, for the stand-alone `rate` command.
pub fn integer_second_comparison(r: &CheckResult) -> Option<String> {
    let rate = r.evidence("integer_second_rate_per_s")?.as_f64()?;
    let err = r.evidence("integer_second_error")?.as_f64()?;
    Some(format!(
        "a whole-second timer would say {} tokens/s ({}{}%)",
        fixed(rate, 2),
        if err >= 0.0 { "+" } else { "" },
        fixed(err * 100.0, 2)
    ))
}
