//! T4: two starts with the same settings sized different KV pools. The pool is sized at
//! each start from the memory left, in steps, so a small change of free memory can move
//! it a whole step; results compare only between starts with the same pool.

use serde::Serialize;

use super::absent::Judged;
use super::scope::StartsScope;
use super::starts::{by_label, levels, names, pool_overrides, same_flags, ByLabel};
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::{fixed, thousands_int};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T4: Tripwire = Tripwire::PoolSizeJump;

/// The KV pool each start of a group sized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pools {
    /// Each start's pool in tokens (null when its log has no pool-size line).
    pub pools: ByLabel<Option<i64>>,
    /// The logs that take part in no comparison.
    pub not_compared: Vec<String>,
    /// Each start's `--num-gpu-blocks-override`, when they differ within the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_gpu_blocks_override: Option<ByLabel<Json>>,
    /// The distinct pools, ascending, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<i64>>,
}

/// One group of starts with the same settings.
pub fn starts(cx: &StartsScope<'_>) -> Judged {
    Ok(t4(cx.logs, cx.group, cx.not_compared))
}

/// T4: pool size jumps between starts of one group.
fn t4(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
    let overrides = pool_overrides(logs, group);
    let mut e = Pools {
        pools: by_label(logs, group, |l| l.facts.kv_pool_tokens),
        not_compared: nc.to_vec(),
        num_gpu_blocks_override: overrides.as_ref().map(|(by_label, _)| by_label.clone()),
        levels: None,
    };
    let missing: Vec<&str> = group
        .iter()
        .filter(|&&i| logs[i].facts.kv_pool_tokens.is_none())
        .map(|&i| logs[i].label.as_str())
        .collect();
    if !missing.is_empty() {
        return CheckResult::new(
            T4,
            Status::Unknown,
            format!(
                "Can't compare the KV pools of starts with the same flags: no pool-size line in {}",
                missing.join(", ")
            ),
        )
        .found(e);
    }
    let vals: Vec<i64> = group
        .iter()
        .filter_map(|&i| logs[i].facts.kv_pool_tokens)
        .collect();
    let lv = levels(&vals);
    if lv.len() == 1 {
        return CheckResult::new(
            T4,
            Status::Pass,
            format!(
                "{}, same KV pool ({} tokens) on every start: {}",
                same_flags(&overrides),
                thousands_int(lv[0]),
                names(logs, group)
            ),
        )
        .found(e);
    }
    let (lo, hi) = (lv[0], lv[lv.len() - 1]);
    let apart = if lo > 0 {
        format!(
            " ({}% apart)",
            fixed((hi - lo) as f64 / lo as f64 * 100.0, 2)
        )
    } else {
        String::new()
    };
    let why = if overrides.is_some() {
        "the override set each pool"
    } else {
        "the pool is sized at each start in steps"
    };
    let message = format!(
        "{}, {} different KV pools: {} to {} tokens{apart} across {}; {why}, so compare \
         results only between starts with the same pool",
        same_flags(&overrides),
        lv.len(),
        thousands_int(lo),
        thousands_int(hi),
        names(logs, group)
    );
    e.levels = Some(lv);
    CheckResult::new(T4, Status::Warn, message).found(e)
}
