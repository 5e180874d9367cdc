//! T9: with the cache full, the number of requests that fit falls as their outputs grow,
//! so no single "max concurrency" describes the run (checks.md §4).

use crate::blocks::ceiling;
use crate::engine::Engine;
use crate::num::fixed;
use crate::series::{column, Field, Series};
use crate::verdict::{CheckResult, Status};

/// Usage at or above this counts as a full cache.
pub const SATURATED: f64 = 0.9;

pub fn check(series: &Series, usable_blocks: Option<u64>) -> CheckResult {
    let engine = series.engine();
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::KV_USAGE]) {
        return CheckResult::new(9, Status::Unknown, crate::plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    // Only the two gauges are read: kept as (running, usage) pairs.
    let busy: Vec<(f64, f64)> = series.busy().collect();
    if busy.is_empty() {
        let mut msg = "no sample has requests running and KV cache in use".to_string();
        if let Some(hint) = engine.missing_gauges_hint() {
            if series.rows.values(Field::Running).all(|r| r.is_none()) {
                msg.push_str(&format!("; {hint}"));
            }
        }
        return CheckResult::new(9, Status::Unknown, msg);
    }
    let saturated: Vec<(f64, f64)> = busy
        .iter()
        .copied()
        .filter(|&(_, u)| u >= SATURATED)
        .collect();
    let (basis, set) = if saturated.is_empty() {
        ("busy", &busy)
    } else {
        ("saturated", &saturated)
    };
    // Only the extremes are read: kept as they come, not as a vector of every ceiling.
    let mut extremes: Option<(i64, i64)> = None;
    let (mut share_min, mut share_max) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(run, u) in set.iter() {
        if let Some(c) = ceiling(run, u, usable_blocks) {
            extremes = Some(extremes.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
        }
        let share = u / run;
        share_min = share_min.min(share);
        share_max = share_max.max(share);
    }
    let fullest = busy
        .iter()
        .copied()
        .fold(None::<(f64, f64)>, |best, r| match best {
            Some(b) if r.1 <= b.1 => Some(b),
            _ => Some(r),
        });
    let at_fullest = fullest.and_then(|(run, u)| ceiling(run, u, usable_blocks));
    let Some((cmin, cmax)) = extremes else {
        return CheckResult::new(
            9,
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
    let n = set.len();
    let mut r = if cmin == cmax {
        CheckResult::new(
            9,
            Status::Pass,
            format!(
                "one request held {share_text} of {pool}, so floor(1/share) = {cmin} fit, on \
                 every {basis} sample"
            ),
        )
    } else {
        CheckResult::new(
            9,
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
