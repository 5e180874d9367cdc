//! Comparing starts with the same flags (bootlog.md §6): groups, then T4 (§7) and T11 (§8).

use super::derive::POOL_OVERRIDE;
use super::jsoneq::same;
use super::BootLog;
use crate::json::Json;
use crate::num::{fixed, shortest, thousands_int};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// Groups of two or more comparable logs (indexes into `logs`), ordered by their first
/// member, and the labels of the logs that take no part.
pub(crate) fn groups(logs: &[BootLog]) -> (Vec<Vec<usize>>, Vec<String>) {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut not_compared = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        let f = &log.facts;
        let Some(args) = f.config_args.as_ref().filter(|_| f.ready) else {
            not_compared.push(log.label.clone());
            continue;
        };
        let home = groups.iter_mut().find(|g| {
            let first = &logs[g[0]].facts;
            first.engine == f.engine && first.config_args.as_ref().is_some_and(|a| same(a, args))
        });
        match home {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups.retain(|g| g.len() > 1);
    (groups, not_compared)
}

/// An evidence map keyed by label; a repeated label keeps its first place and takes the
/// last value.
fn by_label(logs: &[BootLog], group: &[usize], value: impl Fn(&BootLog) -> Json) -> Json {
    let mut pairs: Vec<(String, Json)> = Vec::new();
    for &i in group {
        let v = value(&logs[i]);
        match pairs.iter_mut().find(|(k, _)| *k == logs[i].label) {
            Some(slot) => slot.1 = v,
            None => pairs.push((logs[i].label.clone(), v)),
        }
    }
    Json::Obj(pairs)
}

fn opt_f64(v: Option<f64>) -> Json {
    v.map_or(Json::Null, Json::Float)
}

fn names(logs: &[BootLog], group: &[usize]) -> String {
    group
        .iter()
        .map(|&i| logs[i].label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_compared_json(nc: &[String]) -> Json {
    Json::Arr(nc.iter().map(|s| Json::Str(s.clone())).collect())
}

/// Distinct values of `vals`, ascending.
fn levels<T: PartialOrd + Copy>(vals: &[T]) -> Vec<T> {
    let mut v: Vec<T> = vals.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.dedup_by(|a, b| a == b);
    v
}

/// The starts' `--num-gpu-blocks-override` by label, and its values as a phrase, when they
/// differ within the group (they are not part of the identity; see `derive`).
fn pool_overrides(logs: &[BootLog], group: &[usize]) -> Option<(Json, String)> {
    let value = |l: &BootLog| {
        l.facts
            .non_default_args
            .as_ref()
            .and_then(|a| a.get(POOL_OVERRIDE))
            .cloned()
            .unwrap_or(Json::Null)
    };
    let first = value(&logs[group[0]]);
    if group.iter().all(|&i| same(&value(&logs[i]), &first)) {
        return None;
    }
    let shown: Vec<String> = group
        .iter()
        .map(|&i| match value(&logs[i]) {
            Json::Null => "not set".to_string(),
            v => super::derive::py_str(&v),
        })
        .collect();
    Some((
        by_label(logs, group, value),
        format!("--num-gpu-blocks-override ({})", shown.join(", ")),
    ))
}

/// "Same flags", or "Same flags apart from --num-gpu-blocks-override …".
fn same_flags(overrides: &Option<(Json, String)>) -> String {
    match overrides {
        Some((_, shown)) => format!("Same flags apart from {shown}"),
        None => "Same flags".to_string(),
    }
}

/// T4: pool size jumps between starts of one group.
pub(crate) fn t4(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
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
            Tripwire::PoolSizeJump,
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
            Tripwire::PoolSizeJump,
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
        Tripwire::PoolSizeJump,
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

fn range_text(vals: &[f64]) -> Option<(String, String)> {
    let lv = levels(vals);
    (lv.len() > 1).then(|| (shortest(lv[0]), shortest(lv[lv.len() - 1])))
}

/// T11: KV memory drift between starts of one group.
pub(crate) fn t11(logs: &[BootLog], group: &[usize], nc: &[String]) -> CheckResult {
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
            Tripwire::KvMemoryDrift,
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
            Tripwire::KvMemoryDrift,
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
        Tripwire::KvMemoryDrift,
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
