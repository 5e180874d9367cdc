//! T9: with the cache full, the number of requests that fit falls as their outputs grow,
//! so no single "max concurrency" describes the run (docs/tripwires.md#t9).

use crate::blocks::ceiling;
use crate::engine::Engine;
use crate::num::fixed;
use crate::rules::absent::Judged;
use crate::rules::scope::{PhaseScope, ReplicaScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

const T9: Tripwire = Tripwire::FallingCeiling;

/// Usage at or above this counts as a full cache.
pub const SATURATED: f64 = 0.9;

/// What T9 reads of a set of busy readings.
#[derive(Debug, Clone, Copy)]
struct Figures {
    samples: usize,
    /// The lowest and highest ceiling in whole blocks.
    extremes: Option<(i64, i64)>,
    share_min: f64,
    share_max: f64,
}

impl Default for Figures {
    fn default() -> Figures {
        Figures {
            samples: 0,
            extremes: None,
            share_min: f64::INFINITY,
            share_max: f64::NEG_INFINITY,
        }
    }
}

impl Figures {
    /// One reading of `run` requests holding `u` of the cache, its ceiling `c` (`None`
    /// when not known yet).
    fn take(&mut self, run: f64, u: f64, c: Option<i64>) {
        self.samples += 1;
        self.extremes_take(c);
        let share = u / run;
        self.share_min = self.share_min.min(share);
        self.share_max = self.share_max.max(share);
    }

    /// One reading's ceiling, when it has one.
    fn extremes_take(&mut self, c: Option<i64>) {
        if let Some(c) = c {
            let (lo, hi) = self.extremes.unwrap_or((c, c));
            self.extremes = Some((lo.min(c), hi.max(c)));
        }
    }
}

/// The whole run's recording.
pub fn run(cx: &RunScope<'_>) -> Judged {
    Ok(check(cx.series.need()?, cx.usable_blocks()))
}

/// One phase's readings.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    Ok(check(&cx.window.need()?.inner, cx.usable_blocks))
}

/// One replica's recording.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    Ok(check(cx.series.need()?, cx.usable_blocks()))
}

pub fn check(series: &Series, usable_blocks: Option<u64>) -> CheckResult {
    let engine = series.engine();
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::KV_USAGE]) {
        return CheckResult::new(T9, Status::Unknown, crate::plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    // The figures of the saturated readings, which are judged when there are any, and
    // those of every busy reading, whose ceilings a second pass finds only when there
    // are none (a ceiling costs a 128-bit division): no reading is kept.
    let (mut busy, mut saturated) = (Figures::default(), Figures::default());
    let mut fullest: Option<(f64, f64)> = None;
    for (run, u) in series.busy() {
        busy.take(run, u, None);
        if u >= SATURATED {
            saturated.take(run, u, ceiling(run, u, usable_blocks));
        }
        if fullest.is_none_or(|(_, most)| u > most) {
            fullest = Some((run, u));
        }
    }
    if saturated.samples == 0 {
        for (run, u) in series.busy() {
            busy.extremes_take(ceiling(run, u, usable_blocks));
        }
    }
    if busy.samples == 0 {
        let mut msg = "no sample has requests running and KV cache in use".to_string();
        if let Some(hint) = engine.missing_gauges_hint() {
            if series.rows.values(Field::Running).all(|r| r.is_none()) {
                msg.push_str(&format!("; {hint}"));
            }
        }
        return CheckResult::new(T9, Status::Unknown, msg);
    }
    let (basis, set) = if saturated.samples == 0 {
        ("busy", busy)
    } else {
        ("saturated", saturated)
    };
    let Figures {
        samples: n,
        extremes,
        share_min,
        share_max,
    } = set;
    let at_fullest = fullest.and_then(|(run, u)| ceiling(run, u, usable_blocks));
    let Some((cmin, cmax)) = extremes else {
        return CheckResult::new(
            T9,
            Status::Unknown,
            "no sample gives a ceiling in whole blocks".to_string(),
        );
    };
    let pool = if engine == Engine::Sglang {
        "the fullest memory pool (KV cache or request state)"
    } else {
        "the cache"
    };
    let pct = |x: f64| fixed(x * 100.0, 1);
    let share_text = if pct(share_min) == pct(share_max) {
        format!("{}%", pct(share_min))
    } else {
        format!("{}% to {}%", pct(share_min), pct(share_max))
    };
    let mut r = if cmin == cmax {
        CheckResult::new(
            T9,
            Status::Pass,
            format!(
                "one request held {share_text} of {pool}, so floor(1/share) = {cmin} fit, on \
                 every {basis} sample"
            ),
        )
    } else {
        CheckResult::new(
            T9,
            Status::Warn,
            format!(
                "the number of requests that fit moved between {cmin} and {cmax} as requests \
                 grew (one request held {share_text} of {pool}), so concurrency was not a \
                 constant of this run"
            ),
        )
    };
    r.set("ceiling_min", cmin);
    r.set("ceiling_max", cmax);
    r.set("ceiling_at_fullest", at_fullest);
    r.set("share_min", share_min);
    r.set("share_max", share_max);
    r.set("samples", n);
    r.set("basis", basis);
    r.set("usable_blocks", usable_blocks);
    if let Some(blocks) = usable_blocks {
        r.set("blocks_per_request_min", share_min * blocks as f64);
        r.set("blocks_per_request_max", share_max * blocks as f64);
    }
    if engine.gauges_lag() {
        r.set("gauges_lag", true);
        r.message.push_str(&format!(
            "; this rests on {n} readings, because TensorRT-LLM's gauges move only when a \
             request completes"
        ));
    }
    r
}
