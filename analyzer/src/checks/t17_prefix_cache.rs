//! T17: prefix-cache hits inflated the throughput. With repeated prompts or a shared
//! system prompt the server skips the prefill of cached tokens; a throughput measured
//! that way does not carry over to traffic without those hits. Decided from the engine's
//! prefix-cache counters between the before and after readings (`Engine::prefix_cache`).
//!
//! The rule (spelled out in `checks/README.md`, T17): share = Δ(prompt tokens served from
//! the cache) / Δ(prompt tokens looked up). **Warn** when the share is at least
//! [`WARN_SHARE`], **pass** below it; **does not apply** when neither reading has any of
//! the engine's prefix-cache counters (caching off, or a version that counts nothing);
//! **can't tell** when a counter is missing from one reading, when the server restarted
//! between them, or when no prompt token was looked up. Evidence: `engine`, `source`
//! (the counters, in words), `hit_tokens`, `queried_tokens`, `share`.

use crate::counters::Pair;
use crate::engine::{Engine, Selector};
use crate::json::Json;
use crate::num::{fixed, round_dp, thousands};
use crate::snapshot::Snapshot;
use crate::verdict::{CheckResult, Status};

/// A share of prompt tokens served from the cache from which the throughput is flagged.
pub const WARN_SHARE: f64 = 0.10;

/// The sum of the selected counters in one reading; none when none is present.
pub fn read(snapshot: &Snapshot, selectors: &[Selector]) -> Option<f64> {
    selectors
        .iter()
        .filter_map(|(name, labels)| snapshot.metrics.total(name, labels))
        .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
}

/// T17 on a pair of readings of `engine`.
pub fn check(engine: Engine, pair: &Pair<'_>) -> CheckResult {
    let names = engine.prefix_cache();
    let base = |status, message: String| {
        CheckResult::new(17, status, message)
            .with("engine", engine.key())
            .with("source", names.source)
    };
    let [hb, qb, ha, qa] = [
        read(pair.before, names.hits),
        read(pair.before, names.queries),
        read(pair.after, names.hits),
        read(pair.after, names.queries),
    ];
    if [hb, qb, ha, qa].iter().all(Option::is_none) {
        return base(
            Status::NotApplicable,
            format!(
                "does not apply: {} exported no prefix-cache counter ({}) in either reading, so \
                 prefix caching was off or this version counts nothing",
                engine.display(),
                names.source
            ),
        );
    }
    if let Some(restart) = pair.stamps_restart() {
        let mut r = base(
            Status::Unknown,
            format!(
                "{}, so the prefix-cache counters cannot be compared",
                restart.describe()
            ),
        );
        r.evidence.extend(restart.evidence());
        return r;
    }
    let (Some(hb), Some(qb), Some(ha), Some(qa)) = (hb, qb, ha, qa) else {
        return base(
            Status::Unknown,
            format!(
                "a prefix-cache counter ({}) is missing from a reading, so the share of prompt \
                 tokens served from the cache cannot be told",
                names.source
            ),
        );
    };
    let (hits, queries) = (ha - hb, qa - qb);
    if hits < 0.0 || queries < 0.0 {
        return base(
            Status::Unknown,
            "a prefix-cache counter went down between the readings: the server restarted".into(),
        );
    }
    let r = base(Status::Unknown, String::new())
        .with("hit_tokens", hits)
        .with("queried_tokens", queries);
    if queries <= 0.0 {
        return CheckResult {
            message: "no prompt token was looked up in the prefix cache during the run, so the \
                      share cannot be told"
                .into(),
            ..r
        };
    }
    let share = hits / queries;
    let mut r = r.with("share", Json::from(round_dp(share, 4)));
    let said = format!(
        "{} of {} prompt tokens ({}%) were served from the prefix cache ({})",
        thousands(hits),
        thousands(queries),
        fixed(share * 100.0, 1),
        names.source
    );
    if share >= WARN_SHARE {
        r.status = Status::Warn;
        r.message = format!(
            "{said}: the run skipped that prefill, so its throughput does not carry over to \
             traffic without those hits"
        );
    } else {
        r.status = Status::Pass;
        r.message = format!("{said}: below {}%", fixed(WARN_SHARE * 100.0, 0));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prom::Exposition;

    fn snap(text: &str) -> Snapshot {
        Snapshot {
            url: "u".into(),
            t_wall: 0.0,
            t_mono_ns: None,
            latency_s: None,
            metrics: Exposition::parse(text).unwrap(),
        }
    }

    fn vllm(hits: f64, queries: f64) -> Snapshot {
        snap(&format!(
            "vllm:prefix_cache_hits_total{{engine=\"0\"}} {hits}\nvllm:prefix_cache_queries_total{{engine=\"0\"}} {queries}\n"
        ))
    }

    #[test]
    fn a_large_share_warns_and_a_small_one_passes() {
        let (b, a) = (vllm(100.0, 1000.0), vllm(5100.0, 11000.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &a));
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert_eq!(r.evidence("share"), Some(&Json::Float(0.5)));
        assert!(r
            .message
            .starts_with("5,000 of 10,000 prompt tokens (50.0%)"));
        assert!(r.message.contains("vllm:prefix_cache_hits_total"));
        let a = vllm(1099.0, 11000.0);
        let r = check(Engine::Vllm, &Pair::new(&b, &a));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        let a = vllm(1100.0, 11000.0);
        assert_eq!(check(Engine::Vllm, &Pair::new(&b, &a)).status, Status::Warn);
    }

    #[test]
    fn sglang_sums_its_hit_modes_against_all_modes() {
        let line = |mode: &str, v: f64| {
            format!("sglang:prefill_effective_tokens_total{{mode=\"{mode}\",tp_rank=\"0\"}} {v}\n")
        };
        let b = snap(&[line("input", 100.0), line("device_hit", 0.0)].concat());
        let a = snap(
            &[
                line("input", 700.0),
                line("device_hit", 300.0),
                line("host_hit", 100.0),
            ]
            .concat(),
        );
        let r = check(Engine::Sglang, &Pair::new(&b, &a));
        assert_eq!(r.evidence("hit_tokens"), Some(&Json::Float(400.0)));
        assert_eq!(r.evidence("queried_tokens"), Some(&Json::Float(1000.0)));
        assert_eq!(r.status, Status::Warn);
    }

    #[test]
    fn trtllm_reads_cached_against_all_prompt_tokens() {
        let t = |c: f64, p: f64| {
            snap(&format!(
                "trtllm_prompt_cached_tokens_total{{model_name=\"m\"}} {c}\ntrtllm_prompt_tokens_total{{model_name=\"m\"}} {p}\n"
            ))
        };
        let (b, a) = (t(0.0, 0.0), t(6.0, 2880.0));
        let r = check(Engine::Trtllm, &Pair::new(&b, &a));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn nothing_exported_does_not_apply_and_half_missing_is_cant_tell() {
        let empty = snap("vllm:num_requests_running 0\n");
        let r = check(Engine::Vllm, &Pair::new(&empty, &empty));
        assert_eq!(r.status, Status::NotApplicable);
        let r = check(Engine::Vllm, &Pair::new(&empty, &vllm(1.0, 2.0)));
        assert_eq!(r.status, Status::Unknown);
        let r = check(Engine::Vllm, &Pair::new(&vllm(5.0, 10.0), &vllm(5.0, 10.0)));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        let r = check(Engine::Vllm, &Pair::new(&vllm(5.0, 10.0), &vllm(1.0, 20.0)));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
    }

    #[test]
    fn a_restart_is_cant_tell() {
        let b = snap("vllm:prefix_cache_hits_total 0\nvllm:prefix_cache_queries_total 10\nvllm:x_created 1\n");
        let a = snap("vllm:prefix_cache_hits_total 9\nvllm:prefix_cache_queries_total 10\nvllm:x_created 2\n");
        let r = check(Engine::Vllm, &Pair::new(&b, &a));
        assert_eq!(r.status, Status::Unknown);
        assert_eq!(r.evidence("restarted"), Some(&Json::Bool(true)));
    }
}
