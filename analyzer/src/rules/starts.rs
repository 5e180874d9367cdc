//! What T4 and T11 share when they compare starts with the same settings: values keyed
//! by each log's label, the group's names, and the one flag that may differ between the
//! starts of a group (`--num-gpu-blocks-override`, which sets the pool).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::bootlog::derive::POOL_OVERRIDE;
use crate::bootlog::jsoneq::same;
use crate::bootlog::BootLog;
use crate::json::Json;
use crate::num::shortest;

/// One value per start, keyed by its log's label in the group's order; written as an
/// object.
#[derive(Debug, Clone, PartialEq)]
pub struct ByLabel<T>(pub Vec<(String, T)>);

impl<T> ByLabel<T> {
    /// The value of the start labelled `label`.
    pub fn get(&self, label: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == label).map(|(_, v)| v)
    }
}

impl<T: Serialize> Serialize for ByLabel<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Each start's `value`; a repeated label keeps its first place and takes the last value.
pub(super) fn by_label<T>(
    logs: &[BootLog],
    group: &[usize],
    value: impl Fn(&BootLog) -> T,
) -> ByLabel<T> {
    let mut pairs: Vec<(String, T)> = Vec::new();
    for &i in group {
        let v = value(&logs[i]);
        match pairs.iter_mut().find(|(k, _)| *k == logs[i].label) {
            Some(slot) => slot.1 = v,
            None => pairs.push((logs[i].label.clone(), v)),
        }
    }
    ByLabel(pairs)
}

pub(super) fn names(logs: &[BootLog], group: &[usize]) -> String {
    group
        .iter()
        .map(|&i| logs[i].label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
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
pub(super) fn pool_overrides(logs: &[BootLog], group: &[usize]) -> Option<(ByLabel<Json>, String)> {
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
pub(super) fn same_flags(overrides: &Option<(ByLabel<Json>, String)>) -> String {
    match overrides {
        Some((_, shown)) => format!("Same flags apart from {shown}"),
        None => "Same flags".to_string(),
    }
}

pub(super) fn range_text(vals: &[f64]) -> Option<(String, String)> {
    let lv = levels(vals);
    (lv.len() > 1).then(|| (shortest(lv[0]), shortest(lv[lv.len() - 1])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootFacts, Classification};

    fn start(label: &str, tokens: i64) -> BootLog {
        BootLog {
            label: label.into(),
            facts: BootFacts {
                kv_pool_tokens: Some(tokens),
                ..BootFacts::default()
            },
            classification: Classification::default(),
        }
    }

    #[test]
    fn a_repeated_label_keeps_its_first_place_and_its_last_value() {
        let logs = [start("a", 1), start("b", 2), start("a", 3)];
        let m = by_label(&logs, &[0, 1, 2], |l| l.facts.kv_pool_tokens);
        assert_eq!(
            m,
            ByLabel(vec![("a".into(), Some(3)), ("b".into(), Some(2))])
        );
        assert_eq!(crate::json::to_compact(&m), r#"{"a": 3, "b": 2}"#);
        assert_eq!(m.get("c"), None);
    }

    #[test]
    fn overrides_are_kept_only_when_they_differ() {
        let logs = [start("a", 1), start("b", 1)];
        assert_eq!(pool_overrides(&logs, &[0, 1]), None);
        assert_eq!(same_flags(&None), "Same flags");
        assert_eq!(levels(&[3, 1, 3, 2]), [1, 2, 3]);
        assert_eq!(
            range_text(&[1.5, 1.0, 1.5]),
            Some(("1".into(), "1.5".into()))
        );
        assert_eq!(range_text(&[2.0, 2.0]), None);
    }
}
