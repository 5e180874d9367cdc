//! T4: two starts with the same settings sized different KV pools. The pool is sized at
//! each start from the memory left, in steps, so a small change of free memory can move
//! it a whole step; results compare only between starts with the same pool.

use super::absent::Judged;
use super::scope::StartsScope;
use super::starts::{by_label, levels, names, not_compared_json, pool_overrides, same_flags};
use crate::bootlog::derive::POOL_OVERRIDE;
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::{fixed, thousands_int};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T4: Tripwire = Tripwire::PoolSizeJump;

/// One group of starts with the same settings.
pub fn starts(cx: &StartsScope<'_>) -> Judged {
    Ok(t4(cx.logs, cx.group, cx.not_compared))
}

/// T4: pool size jumps between starts of one group.
fn t4(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
    let pools = by_label(logs, group, |l| {
        l.facts.kv_pool_tokens.map_or(Json::Null, Json::Int)
    });
    let missing: Vec<&str> = group
        .iter()
        .filter(|&&i| logs[i].facts.kv_pool_tokens.is_none())
        .map(|&i| logs[i].label.as_str())
        .collect();
    let overrides = pool_overrides(logs, group);
    let base = |r: CheckResult| {
        let r = r
            .with("pools", pools.clone())
            .with("not_compared", not_compared_json(nc));
        match &overrides {
            Some((by_label, _)) => r.with(POOL_OVERRIDE, by_label.clone()),
            None => r,
        }
    };
    if !missing.is_empty() {
        return base(CheckResult::new(
            T4,
            Status::Unknown,
            format!(
                "Can't compare the KV pools of starts with the same flags: no pool-size line in {}",
                missing.join(", ")
            ),
        ));
    }
    let vals: Vec<i64> = group
        .iter()
        .filter_map(|&i| logs[i].facts.kv_pool_tokens)
        .collect();
    let lv = levels(&vals);
    if lv.len() == 1 {
        return base(CheckResult::new(
            T4,
            Status::Pass,
            format!(
                "{}, same KV pool ({} tokens) on every start: {}",
                same_flags(&overrides),
                thousands_int(lv[0]),
                names(logs, group)
            ),
        ));
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
    base(CheckResult::new(
        T4,
        Status::Warn,
        format!(
            "{}, {} different KV pools: {} to {} tokens{apart} across {}; {why}, so compare \
             results only between starts with the same pool",
            same_flags(&overrides),
            lv.len(),
            thousands_int(lo),
            thousands_int(hi),
            names(logs, group)
        ),
    ))
    .with("levels", Json::Arr(lv.into_iter().map(Json::Int).collect()))
}
