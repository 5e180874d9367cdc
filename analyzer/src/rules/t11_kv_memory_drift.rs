//! T11: the memory left for the KV cache moved between starts with the same settings
//! (the weights, the activation peak or a fresh compilation took more or less); a small
//! loss can drop the pool a step (T4).

use super::absent::Judged;
use super::scope::StartsScope;
use super::starts::{
    by_label, names, not_compared_json, opt_f64, pool_overrides, range_text, same_flags,
};
use crate::bootlog::derive::POOL_OVERRIDE;
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::shortest;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T11: Tripwire = Tripwire::KvMemoryDrift;

/// One group of starts with the same settings.
pub fn starts(cx: &StartsScope<'_>) -> Judged {
    Ok(t11(cx.logs, cx.group, cx.not_compared))
}

/// T11: KV memory drift between starts of one group.
fn t11(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
    let avail = by_label(logs, group, |l| opt_f64(l.facts.available_kv_cache_gib));
    let graphs = by_label(logs, group, |l| opt_f64(l.facts.cudagraph_actual_gib));
    let overrides = pool_overrides(logs, group);
    let base = |r: CheckResult| {
        let r = r
            .with("available_kv_cache_gib", avail.clone())
            .with("cudagraph_actual_gib", graphs.clone())
            .with("not_compared", not_compared_json(nc));
        match &overrides {
            Some((by_label, _)) => r.with(POOL_OVERRIDE, by_label.clone()),
            None => r,
        }
    };
    let missing: Vec<&str> = group
        .iter()
        .filter(|&&i| logs[i].facts.available_kv_cache_gib.is_none())
        .map(|&i| logs[i].label.as_str())
        .collect();
    if !missing.is_empty() {
        return base(CheckResult::new(
            T11,
            Status::Unknown,
            format!(
                "Can't compare the memory left for the KV cache: no KV cache memory line in {}",
                missing.join(", ")
            ),
        ));
    }
    let vals: Vec<f64> = group
        .iter()
        .filter_map(|&i| logs[i].facts.available_kv_cache_gib)
        .collect();
    let Some((lo, hi)) = range_text(&vals) else {
        return base(CheckResult::new(
            T11,
            Status::Pass,
            format!(
                "{}, {} GiB left for the KV cache on every start: {}",
                same_flags(&overrides),
                shortest(vals[0]),
                names(logs, group)
            ),
        ));
    };
    let mut moved = Vec::new();
    let known = |get: fn(&BootLog) -> Option<f64>| -> Vec<f64> {
        group.iter().filter_map(|&i| get(&logs[i])).collect()
    };
    if let Some((a, b)) = range_text(&known(|l| l.facts.consumed_gib)) {
        moved.push(format!("weights and non-torch memory {a} to {b} GiB"));
    }
    if let Some((a, b)) = range_text(&known(|l| l.facts.peak_activation_gib)) {
        moved.push(format!("peak activation {a} to {b} GiB"));
    }
    let fresh: Vec<Option<bool>> = group
        .iter()
        .map(|&i| logs[i].facts.compiled_fresh)
        .collect();
    if fresh.contains(&Some(true)) && fresh.contains(&Some(false)) {
        let k = fresh.iter().filter(|f| **f == Some(true)).count();
        moved.push(format!(
            "{k} of {} starts compiled the model from scratch",
            group.len()
        ));
    }
    let what = if moved.is_empty() {
        String::new()
    } else {
        format!("; {}", moved.join("; "))
    };
    base(CheckResult::new(
        T11,
        Status::Warn,
        format!(
            "The memory left for the KV cache varied from {lo} to {hi} GiB between starts with \
             the same flags{}{what}; a small loss can drop the pool a step (T4)",
            overrides
                .as_ref()
                .map(|(_, shown)| format!(" apart from {shown}"))
                .unwrap_or_default()
        ),
    ))
    .with(
        "consumed_gib",
        by_label(logs, group, |l| opt_f64(l.facts.consumed_gib)),
    )
    .with(
        "peak_activation_gib",
        by_label(logs, group, |l| opt_f64(l.facts.peak_activation_gib)),
    )
    .with(
        "compiled_fresh",
        by_label(logs, group, |l| {
            l.facts.compiled_fresh.map_or(Json::Null, Json::Bool)
        }),
    )
}
