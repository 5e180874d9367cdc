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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::derive::POOL_OVERRIDE;
    use crate::bootlog::{BootFacts, Classification};
    use crate::json::obj;
    use crate::rules::testing::said;

    /// A start labelled `label` whose log sized a pool of `tokens`, started with
    /// `--num-gpu-blocks-override` `blocks` when given.
    fn start(label: &str, tokens: Option<i64>, blocks: Option<i64>) -> BootLog {
        BootLog {
            label: label.into(),
            facts: BootFacts {
                kv_pool_tokens: tokens,
                non_default_args: blocks.map(|b| obj([(POOL_OVERRIDE, Json::Int(b))])),
                ..BootFacts::default()
            },
            classification: Classification::default(),
        }
    }

    fn judged(logs: &[BootLog], not_compared: &[String]) -> CheckResult {
        let group: Vec<usize> = (0..logs.len()).collect();
        starts(&StartsScope {
            logs,
            group: &group,
            not_compared,
        })
        .expect("T4 always judges a group")
    }

    fn keys(r: &CheckResult) -> Vec<String> {
        r.evidence().into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn the_same_pool_on_every_start_passes() {
        let logs = [
            start("a", Some(52_000), None),
            start("b", Some(52_000), None),
        ];
        let r = judged(&logs, &["c".to_string()]);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "Same flags, same KV pool (52,000 tokens) on every start: a, b"
            )
        );
        let e = r.finding::<Pools>().expect("T4's finding");
        assert_eq!(e.pools.get("b"), Some(&Some(52_000)));
        assert_eq!(e.not_compared, ["c"]);
        assert_eq!((&e.levels, &e.num_gpu_blocks_override), (&None, &None));
        assert_eq!(keys(&r), ["pools", "not_compared"]);
    }

    #[test]
    fn pools_a_step_apart_warn_with_their_levels() {
        let logs = [
            start("a", Some(52_000), None),
            start("b", Some(48_000), None),
            start("c", Some(52_000), None),
        ];
        let r = judged(&logs, &[]);
        assert_eq!(r.status, Status::Warn);
        assert!(
            r.message.starts_with(
                "Same flags, 2 different KV pools: 48,000 to 52,000 tokens (8.33% apart) across \
                 a, b, c; the pool is sized at each start in steps"
            ),
            "{}",
            r.message
        );
        let e = r.finding::<Pools>().unwrap();
        assert_eq!(e.levels.as_deref(), Some(&[48_000, 52_000][..]));
        assert_eq!(keys(&r), ["pools", "not_compared", "levels"]);
        assert_eq!(
            r.evidence_value("pools").unwrap().to_compact(),
            r#"{"a": 52000, "b": 48000, "c": 52000}"#
        );
    }

    #[test]
    fn an_override_that_differs_is_named_and_kept_by_label() {
        let logs = [
            start("a", Some(192), Some(12)),
            start("b", Some(256), Some(16)),
        ];
        let r = judged(&logs, &[]);
        assert_eq!(r.status, Status::Warn);
        assert!(r
            .message
            .starts_with("Same flags apart from --num-gpu-blocks-override (12, 16), 2 different"));
        assert!(
            r.message.contains("the override set each pool"),
            "{}",
            r.message
        );
        let e = r.finding::<Pools>().unwrap();
        let by_label = e.num_gpu_blocks_override.as_ref().unwrap();
        assert_eq!(by_label.get("a"), Some(&Json::Int(12)));
        // The field is written under the flag's own key.
        assert_eq!(keys(&r), ["pools", "not_compared", POOL_OVERRIDE, "levels"]);
    }

    #[test]
    fn a_log_without_a_pool_line_cannot_tell() {
        let logs = [start("a", Some(52_000), None), start("b", None, None)];
        let r = judged(&logs, &[]);
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "Can't compare the KV pools of starts with the same flags: no pool-size line in b"
            )
        );
        let e = r.finding::<Pools>().unwrap();
        assert_eq!(e.pools.get("b"), Some(&None));
        assert_eq!(
            r.evidence_value("pools").unwrap().to_compact(),
            r#"{"a": 52000, "b": null}"#
        );
        assert_eq!(e.levels, None);
    }
}
