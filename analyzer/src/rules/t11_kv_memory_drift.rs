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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootFacts, Classification};
    use crate::rules::testing::said;

    /// A start's memory figures: left for the KV cache, taken by the weights and by the
    /// activation peak, and whether it compiled from scratch.
    fn start(label: &str, kv: Option<f64>, weights: f64, fresh: Option<bool>) -> BootLog {
        BootLog {
            label: label.into(),
            facts: BootFacts {
                available_kv_cache_gib: kv,
                cudagraph_actual_gib: Some(0.5),
                consumed_gib: Some(weights),
                peak_activation_gib: Some(1.25),
                compiled_fresh: fresh,
                ..BootFacts::default()
            },
            classification: Classification::default(),
        }
    }

    fn judged(logs: &[BootLog]) -> CheckResult {
        let group: Vec<usize> = (0..logs.len()).collect();
        starts(&StartsScope {
            logs,
            group: &group,
            not_compared: &[],
        })
        .expect("T11 always judges a group")
    }

    fn keys(r: &CheckResult) -> Vec<String> {
        r.evidence().into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn the_same_memory_on_every_start_passes() {
        let logs = [
            start("a", Some(10.5), 5.0, Some(false)),
            start("b", Some(10.5), 5.0, Some(false)),
        ];
        let r = judged(&logs);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "Same flags, 10.5 GiB left for the KV cache on every start: a, b"
            )
        );
        let e = r.finding::<KvMemory>().expect("T11's finding");
        assert_eq!(e.available_kv_cache_gib.get("a"), Some(&Some(10.5)));
        assert_eq!(e.cudagraph_actual_gib.get("b"), Some(&Some(0.5)));
        assert_eq!(e.consumed_gib, None);
        assert_eq!(
            keys(&r),
            [
                "available_kv_cache_gib",
                "cudagraph_actual_gib",
                "not_compared"
            ]
        );
    }

    #[test]
    fn memory_that_moved_warns_and_says_what_took_it() {
        let logs = [
            start("a", Some(10.5), 5.0, Some(true)),
            start("b", Some(10.0), 5.5, Some(false)),
        ];
        let r = judged(&logs);
        assert_eq!(r.status, Status::Warn);
        assert_eq!(
            r.message,
            "The memory left for the KV cache varied from 10 to 10.5 GiB between starts with \
             the same flags; weights and non-torch memory 5 to 5.5 GiB; 1 of 2 starts compiled \
             the model from scratch; a small loss can drop the pool a step (T4)"
        );
        let e = r.finding::<KvMemory>().unwrap();
        assert_eq!(
            e.consumed_gib.as_ref().and_then(|m| m.get("b")),
            Some(&Some(5.5))
        );
        assert_eq!(
            e.compiled_fresh.as_ref().and_then(|m| m.get("a")),
            Some(&Some(true))
        );
        assert_eq!(
            keys(&r),
            [
                "available_kv_cache_gib",
                "cudagraph_actual_gib",
                "not_compared",
                "consumed_gib",
                "peak_activation_gib",
                "compiled_fresh"
            ]
        );
        assert_eq!(
            r.evidence_value("compiled_fresh").unwrap().to_compact(),
            r#"{"a": true, "b": false}"#
        );
    }

    #[test]
    fn a_log_without_a_kv_memory_line_cannot_tell() {
        let logs = [
            start("a", Some(10.5), 5.0, None),
            start("b", None, 5.0, None),
        ];
        let r = judged(&logs);
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "Can't compare the memory left for the KV cache: no KV cache memory line in b"
            )
        );
        let e = r.finding::<KvMemory>().unwrap();
        assert_eq!(e.available_kv_cache_gib.get("b"), Some(&None));
        assert_eq!(
            r.evidence_value("available_kv_cache_gib")
                .unwrap()
                .to_compact(),
            r#"{"a": 10.5, "b": null}"#
        );
    }
}
