//! T10: a rate computed from whole-second stamps is off by up to a second at each end;
//! the snapshots' own sub-second clocks give the real one (docs/tripwires.md#t10).

use serde::Serialize;

use crate::counters::Pair;
use crate::num::fixed;
use crate::plausible;
use crate::rules::absent::Judged;
use crate::rules::scope::window::Edges;
use crate::rules::scope::{PhaseScope, ReplicaScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::column;

const T10: Tripwire = Tripwire::IntegerSecondTimer;

/// The generation rate and what a whole-second timer would have made of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Rate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_uncertainty_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer_second_span_s: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer_second_rate_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer_second_error: Option<f64>,
}

/// The rate a T10 result measured, and the span it was measured over.
pub fn rate(r: &CheckResult) -> Option<&Rate> {
    r.finding::<Rate>()
}

/// The whole run: the generated-tokens counter between the snapshots.
pub fn run(cx: &RunScope<'_>) -> Judged {
    Ok(check(
        cx.pair.need()?,
        cx.snapshot_engine.metrics().generation_tokens,
    ))
}

/// One phase: between the first and last reading inside it.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let w = cx.window.need()?;
    let (a, b) = w
        .inner_ends()
        .ok_or_else(|| PhaseScope::too_few(&w.inner))?;
    Ok(check(
        &Edges::new(cx.engine, &a, &b).pair(),
        cx.engine.metrics().generation_tokens,
    ))
}

/// One replica: a counter read through Prometheus' instant query is as old as the last
/// scrape, so each end of the span is uncertain by up to one scrape interval.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    let mut r = check(cx.pair.need()?, cx.engine.metrics().generation_tokens);
    let Some(scrape) = cx.scrape_s else {
        return Ok(r);
    };
    r.set("scrape_interval_s", scrape);
    let span = rate(&r).and_then(|e| e.span_s);
    if let (Some(span), Status::Pass) = (span, r.status) {
        if span > 0.0 {
            let share = 2.0 * scrape / span;
            r.set("scrape_uncertainty_share", share);
            r.message.push_str(&format!(
                " (within ±{}%: Prometheus scraped every {} s, so each end may be that old)",
                fixed(share * 100.0, 1),
                crate::num::shortest(scrape)
            ));
        }
    }
    Ok(r)
}

pub fn check(pair: &Pair<'_>, counter: &str) -> CheckResult {
    if let Some(bad) = pair.implausible(&[
        counter,
        column::T_WALL,
        column::T_MONO_NS,
        column::LATENCY_S,
    ]) {
        return CheckResult::new(T10, Status::Unknown, plausible::cannot_tell(bad)).found(Rate {
            implausible: Some(bad.to_string()),
            ..Rate::default()
        });
    }
    let tokens = match pair.delta(counter, &[], None) {
        Err(restart) => return CheckResult::new(T10, Status::Unknown, restart.describe()),
        Ok(t) => t,
    };
    let span = match pair.span() {
        Err(refused) => return CheckResult::new(T10, Status::Unknown, refused.describe()),
        Ok(s) => s,
    };
    let Some(tokens) = tokens else {
        return CheckResult::new(
            T10,
            Status::Unknown,
            format!("{counter} is missing from a snapshot, so no rate can be computed"),
        );
    };
    if span.seconds <= 0.0 {
        return CheckResult::new(
            T10,
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
            T10,
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
            T10,
            Status::Unknown,
            format!(
                "no tokens were generated between the readings ({} s apart), so there is no \
                 rate to check",
                fixed(span.seconds, 3)
            ),
        )
        .found(Rate {
            tokens: Some(tokens),
            span_s: Some(span.seconds),
            ..Rate::default()
        });
    }
    let rate = tokens / span.seconds;
    let int_span = pair.after.t_wall.trunc() - pair.before.t_wall.trunc();
    let int_rate = (int_span > 0.0).then(|| tokens / int_span);
    CheckResult::new(
        T10,
        Status::Pass,
        format!(
            "{} tokens/s over {}s",
            fixed(rate, 2),
            fixed(span.seconds, 3)
        ),
    )
    .found(Rate {
        implausible: None,
        tokens: Some(tokens),
        span_s: Some(span.seconds),
        span_uncertainty_s: Some(span.uncertainty),
        rate_per_s: Some(rate),
        integer_second_span_s: Some(int_span as i64),
        integer_second_rate_per_s: int_rate,
        // An idle run has no rate to compare against: leave the error out.
        integer_second_error: int_rate.filter(|_| rate != 0.0).map(|r| r / rate - 1.0),
    })
}

/// What a whole-second timer would have said, for the stand-alone `rate` command.
pub fn integer_second_comparison(r: &CheckResult) -> Option<String> {
    let e = rate(r)?;
    let (rate, err) = (e.integer_second_rate_per_s?, e.integer_second_error?);
    Some(format!(
        "a whole-second timer would say {} tokens/s ({}{}%)",
        fixed(rate, 2),
        if err >= 0.0 { "+" } else { "" },
        fixed(err * 100.0, 2)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::prom::Exposition;
    use crate::series::Row;
    use crate::snapshot::Snapshot;

    const COUNTER: &str = "vllm:generation_tokens_total";

    fn snap(tokens: Option<f64>, wall: f64, mono_ns: i64) -> Snapshot {
        let text = tokens.map_or(String::new(), |t| {
            format!("{COUNTER}{{engine=\"0\"}} {t}\n")
        });
        Snapshot {
            url: "u".into(),
            t_wall: wall,
            t_mono_ns: Some(mono_ns),
            latency_s: Some(0.001),
            metrics: Exposition::parse(&text).unwrap(),
            implausible: Vec::new(),
        }
    }

    #[test]
    fn the_rate_uses_the_sub_second_clock() {
        let (b, a) = (
            snap(Some(100.0), 1000.9, 0),
            snap(Some(1100.0), 1002.1, 1_200_000_000),
        );
        let r = check(&Pair::new(&b, &a), COUNTER);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(r.message, "833.33 tokens/s over 1.200s");
        // Whole seconds would say 1000 tokens over 2 s.
        assert_eq!(
            r.evidence_value("integer_second_span_s"),
            Some(Json::Int(2))
        );
    }

    #[test]
    fn no_tokens_is_no_rate_to_pass() {
        let (b, a) = (
            snap(Some(5.0), 10.0, 0),
            snap(Some(5.0), 10.012, 12_000_000),
        );
        let r = check(&Pair::new(&b, &a), COUNTER);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(r.message.starts_with("no tokens were generated"));
    }

    #[test]
    fn a_missing_counter_or_a_backwards_clock_cannot_tell() {
        let (b, a) = (snap(None, 10.0, 0), snap(Some(5.0), 11.0, 1_000_000_000));
        let r = check(&Pair::new(&b, &a), COUNTER);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("missing from a snapshot"),
            "{}",
            r.message
        );
        let (b, a) = (
            snap(Some(1.0), 11.0, 2_000_000_000),
            snap(Some(9.0), 10.0, 1_000_000_000),
        );
        let r = check(&Pair::new(&b, &a), COUNTER);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
    }

    /// T10 has no failing status: it gives the rate from the sub-second clocks, and says
    /// what a whole-second timer would have made of it, however far off that is.
    #[test]
    fn a_whole_second_error_is_reported_not_failed() {
        let (b, a) = (
            snap(Some(0.0), 100.99, 0),
            snap(Some(100.0), 101.01, 20_000_000),
        );
        let r = check(&Pair::new(&b, &a), COUNTER);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        let e = rate(&r).unwrap();
        assert_eq!(e.integer_second_span_s, Some(1));
        assert!(e.integer_second_error.unwrap() < -0.9, "{e:?}");
        assert!(integer_second_comparison(&r).unwrap().contains("-98.00%"));
    }

    #[test]
    fn a_phase_with_fewer_than_two_readings_cannot_tell() {
        use crate::rules::absent::settle;
        use crate::rules::scope::PhaseScope;
        let one = crate::rules::testing::series(crate::engine::Engine::Vllm, vec![Row::default()]);
        let r = settle(T10, Err(PhaseScope::too_few(&one))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("1 reading inside the phase: too few"),
            "{}",
            r.message
        );
    }
}
