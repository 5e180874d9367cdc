//! What T4 and T11 share when they compare starts with the same settings: evidence maps
//! keyed by each log's label, the group's names, and the one flag that may differ
//! between the starts of a group (`--num-gpu-blocks-override`, which sets the pool).

use crate::bootlog::derive::POOL_OVERRIDE;
use crate::bootlog::jsoneq::same;
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::shortest;

/// An evidence map keyed by label; a repeated label keeps its first place and takes the
/// last value.
pub(super) fn by_label(
    logs: &[BootLog],
    group: &[usize],
    value: impl Fn(&BootLog) -> Json,
) -> Json {
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

pub(super) fn opt_f64(v: Option<f64>) -> Json {
    v.map_or(Json::Null, Json::Float)
}

pub(super) fn names(logs: &[BootLog], group: &[usize]) -> String {
    group
        .iter()
        .map(|&i| logs[i].label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn not_compared_json(nc: &[String]) -> Json {
    Json::Arr(nc.iter().map(|s| Json::Str(s.clone())).collect())
}

/// Distinct values of `vals`, ascending.
pub(super) fn levels<T: PartialOrd + Copy>(vals: &[T]) -> Vec<T> {
    let mut v: Vec<T> = vals.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.dedup_by(|a, b| a == b);
    v
}

/// The starts' `--num-gpu-blocks-override` by label, and its values as a phrase, when they
/// differ within the group (they are not part of the identity; see `derive`).
pub(super) fn pool_overrides(logs: &[BootLog], group: &[usize]) -> Option<(Json, String)> {
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
            v => crate::bootlog::derive::py_str(&v),
        })
        .collect();
    Some((
        by_label(logs, group, value),
        format!("--num-gpu-blocks-override ({})", shown.join(", ")),
    ))
}

/// "Same flags", or "Same flags apart from --num-gpu-blocks-override …".
pub(super) fn same_flags(overrides: &Option<(Json, String)>) -> String {
    match overrides {
        Some((_, shown)) => format!("Same flags apart from {shown}"),
        None => "Same flags".to_string(),
    }
}

pub(super) fn range_text(vals: &[f64]) -> Option<(String, String)> {
    let lv = levels(vals);
    (lv.len() > 1).then(|| (shortest(lv[0]), shortest(lv[lv.len() - 1])))
}
