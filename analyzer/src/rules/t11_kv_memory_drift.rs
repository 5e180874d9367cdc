//! T11: the memory left for the KV cache moved between starts with the same settings
//! (the weights, the activation peak or a fresh compilation took more or less); a small
//! loss can drop the pool a step (T4).

use serde::Serialize;

use super::absent::Judged;
use super::scope::StartsScope;
use super::starts::{by_label, names, pool_overrides, range_text, same_flags, ByLabel};
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::shortest;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T11: Tripwire = Tripwire::KvMemoryDrift;

/// The memory each start of a group left for the KV cache, and, when it moved, what took
/// more or less. A start whose log lacks a figure has null.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KvMemory {
    /// GiB left for the KV cache.
    pub available_kv_cache_gib: ByLabel<Option<f64>>,
    /// GiB the CUDA graphs took.
    pub cudagraph_actual_gib: ByLabel<Option<f64>>,
    /// The logs that take part in no comparison.
    pub not_compared: Vec<String>,
    /// Each start's `--num-gpu-blocks-override`, when they differ within the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_gpu_blocks_override: Option<ByLabel<Json>>,
    /// When the memory moved: GiB the weights and non-torch memory took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumed_gib: Option<ByLabel<Option<f64>>>,
    /// When the memory moved: GiB the activation peak took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_activation_gib: Option<ByLabel<Option<f64>>>,
    /// When the memory moved: whether each start compiled the model from scratch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiled_fresh: Option<ByLabel<Option<bool>>>,
}

/// One group of starts with the same settings.
pub fn starts(cx: &StartsScope<'_>) -> Judged {
    Ok(t11(cx.logs, cx.group, cx.not_compared))
}

/// T11: KV memory drift between starts of one group.
fn t11(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
    let overrides = pool_overrides(logs, group);
    let mut e = KvMemory {
        available_kv_cache_gib: by_label(logs, group, |l| l.facts.available_kv_cache_gib),
        cudagraph_actual_gib: by_label(logs, group, |l| l.facts.cudagraph_actual_gib),
        not_compared: nc.to_vec(),
        num_gpu_blocks_override: overrides.as_ref().map(|(by_label, _)| by_label.clone()),
        consumed_gib: None,
        peak_activation_gib: None,
        compiled_fresh: None,
    };
    let missing: Vec<&str> = group
        .iter()
        .filter(|&&i| logs[i].facts.available_kv_cache_gib.is_none())
        .map(|&i| logs[i].label.as_str())
        .collect();
    if !missing.is_empty() {
        return CheckResult::new(
            T11,
            Status::Unknown,
            format!(
                "Can't compare the memory left for the KV cache: no KV cache memory line in {}",
                missing.join(", ")
            ),
        )
        .found(e);
    }
    let vals: Vec<f64> = group
        .iter()
        .filter_map(|&i| logs[i].facts.available_kv_cache_gib)
        .collect();
    let Some((lo, hi)) = range_text(&vals) else {
        return CheckResult::new(
            T11,
            Status::Pass,
            format!(
                "{}, {} GiB left for the KV cache on every start: {}",
                same_flags(&overrides),
                shortest(vals[0]),
                names(logs, group)
            ),
        )
        .found(e);
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
    let message = format!(
        "The memory left for the KV cache varied from {lo} to {hi} GiB between starts with \
         the same flags{}{what}; a small loss can drop the pool a step (T4)",
        overrides
            .as_ref()
            .map(|(_, shown)| format!(" apart from {shown}"))
            .unwrap_or_default()
    );
    e.consumed_gib = Some(by_label(logs, group, |l| l.facts.consumed_gib));
    e.peak_activation_gib = Some(by_label(logs, group, |l| l.facts.peak_activation_gib));
    e.compiled_fresh = Some(by_label(logs, group, |l| l.facts.compiled_fresh));
    CheckResult::new(T11, Status::Warn, message).found(e)
}
