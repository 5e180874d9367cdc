//! T17: prefix-cache hits inflated the throughput. With repeated prompts or a shared
//! system prompt the server skips the prefill of cached tokens; a throughput measured
//! that way does not carry over to traffic without those hits. Decided from the engine's
//! prefix-cache counters between the before and after readings (`Engine::prefix_cache`).
//!
//! The rule (spelled out in docs/tripwires.md#t17): share = Δ(prompt tokens served from
//! the cache) / Δ(prompt tokens looked up), less the load tool's untimed requests (its
//! test request and warm-ups repeat the first prompt, so all but one of them are hits
//! outside the measurement; each is taken at the result's mean prompt length). **Warn**
//! when the share is at least [`WARN_SHARE`], **pass** below it; **does not apply** when
//! neither reading has any of the engine's prefix-cache counters (caching off, or a
//! version that counts nothing), or nothing was looked up; **can't tell** when a counter
//! is missing from one reading or the server restarted between them, or when the
//! plausibility gate refused a prefix-cache counter (or, with untimed requests to leave
//! out, the result's `total_input_tokens` or `completed`), naming it. Evidence: `engine`,
//! `source` (the counters, in words), `hit_tokens`, `queried_tokens` (the counters'
//! deltas), `untimed_requests`, `untimed_tokens` (each untimed request's estimated prompt
//! tokens), `share`.

use crate::bench::key::{COMPLETED, TOTAL_INPUT_TOKENS};
use crate::counters::Pair;
use crate::engine::{Engine, PrefixCache, Selector};
use crate::json::Json;
use crate::num::{fixed, round_dp, thousands};
use crate::plausible::{self, Implausible};
use crate::prom::Exposition;
use crate::rules::absent::{Absent, Judged};
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T17: Tripwire = Tripwire::PrefixCacheHits;

/// A share of prompt tokens served from the cache from which the throughput is flagged.
pub const WARN_SHARE: f64 = 0.10;

/// The sum of the selected counters in one reading; none when none is present. The
/// recorder writes the same sums into the series (`prefix_cache_hits`, `_queries`).
pub fn read(metrics: &Exposition, selectors: &[Selector]) -> Option<f64> {
    selectors
        .iter()
        .filter_map(|(name, labels)| metrics.total(name, labels))
        .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
}

/// The load tool's requests outside its measurement, and their mean prompt length.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Untimed<'a> {
    pub requests: i64,
    /// The result's prompt tokens per completed request.
    pub prompt_tokens: Option<f64>,
    /// A refused value among the counts the prompt length comes from
    /// (`total_input_tokens`, `completed`).
    pub refused: Option<&'a Implausible>,
}

/// The metric names of the engine's prefix-cache counters, each once.
fn counter_names(names: &PrefixCache) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (name, _) in names.hits.iter().chain(names.queries) {
        if !out.contains(name) {
            out.push(name);
        }
    }
    out
}

/// T17 on a pair of readings of `engine`.
/// The whole run: the prefix cache's counters between the snapshots, with the requests
/// the load tool sent outside its measurement set apart.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.load_measured() {
        return Err(Absent::NotGiven);
    }
    let pair = cx.pair.need()?;
    let bench = cx.bench_ok();
    let untimed = Untimed {
        requests: cx.expected_extra,
        prompt_tokens: bench.and_then(|b| {
            Some(b.total_input_tokens? as f64 / b.completed.filter(|&c| c > 0)? as f64)
        }),
        refused: bench
            .and_then(|b| plausible::first(&b.implausible, &[TOTAL_INPUT_TOKENS, COMPLETED])),
    };
    Ok(check(cx.snapshot_engine, pair, untimed))
}

pub fn check(engine: Engine, pair: &Pair<'_>, untimed: Untimed<'_>) -> CheckResult {
    let names = engine.prefix_cache();
    let base = |status, message: String| {
        CheckResult::new(T17, status, message)
            .with("engine", engine.key())
            .with("source", names.source)
    };
    // A refused counter is no reading: not "does not apply", never a pass (plausible.rs).
    if let Some(bad) = pair.implausible(&counter_names(names)) {
        return base(Status::Unknown, plausible::cannot_tell(bad))
            .with("implausible", bad.to_string());
    }
    let [hb, qb, ha, qa] = [
        read(&pair.before.metrics, names.hits),
        read(&pair.before.metrics, names.queries),
        read(&pair.after.metrics, names.hits),
        read(&pair.after.metrics, names.queries),
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
    let mut r = base(Status::Unknown, String::new())
        .with("hit_tokens", hits)
        .with("queried_tokens", queries);
    if queries <= 0.0 {
        r.status = Status::NotApplicable;
        r.message = "does not apply: no prompt token was looked up in the prefix cache during \
                     the run (caching off, or no request), so none was served from it"
            .into();
        return r;
    }
    // The untimed requests repeat the first prompt: all but the first are hits.
    let per = untimed.prompt_tokens.filter(|p| p.is_finite() && *p > 0.0);
    let (mut measured_hits, mut measured_queries) = (hits, queries);
    if let (1.., Some(bad)) = (untimed.requests, untimed.refused) {
        r.message = plausible::cannot_tell(bad);
        r.set("implausible", bad.to_string());
        return r;
    }
    if let (n @ 1.., Some(p)) = (untimed.requests, per) {
        r.set("untimed_requests", n);
        r.set("untimed_tokens", round_dp(p, 1));
        measured_queries = (queries - n as f64 * p).max(0.0);
        measured_hits = (hits - (n - 1) as f64 * p).clamp(0.0, measured_queries);
    }
    if measured_queries <= 0.0 {
        r.message = "the load tool's untimed requests account for every prompt token looked up \
                     in the prefix cache, so the measured requests' share cannot be told"
            .into();
        return r;
    }
    let share = measured_hits / measured_queries;
    let mut r = r.with("share", Json::from(round_dp(share, 4)));
    let mut said = format!(
        "{} of {} prompt tokens ({}%) were served from the prefix cache ({})",
        thousands(measured_hits),
        thousands(measured_queries),
        fixed(share * 100.0, 1),
        names.source
    );
    if measured_queries != queries {
        said.push_str(&format!(
            ", leaving out about {} tokens of the load tool's {} untimed requests",
            thousands(queries - measured_queries),
            untimed.requests
        ));
    }
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
    use crate::snapshot::Snapshot;

    fn snap(text: &str) -> Snapshot {
        Snapshot {
            url: "u".into(),
            t_wall: 0.0,
            t_mono_ns: None,
            latency_s: None,
            metrics: Exposition::parse(text).unwrap(),
            implausible: Vec::new(),
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
        let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert_eq!(r.evidence("share"), Some(&Json::Float(0.5)));
        assert!(r
            .message
            .starts_with("5,000 of 10,000 prompt tokens (50.0%)"));
        assert!(r.message.contains("vllm:prefix_cache_hits_total"));
        let a = vllm(1099.0, 11000.0);
        let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        let a = vllm(1100.0, 11000.0);
        assert_eq!(
            check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default()).status,
            Status::Warn
        );
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
        let r = check(Engine::Sglang, &Pair::new(&b, &a), Untimed::default());
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
        let r = check(Engine::Trtllm, &Pair::new(&b, &a), Untimed::default());
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn nothing_exported_does_not_apply_and_half_missing_is_cant_tell() {
        let empty = snap("vllm:num_requests_running 0\n");
        let r = check(Engine::Vllm, &Pair::new(&empty, &empty), Untimed::default());
        assert_eq!(r.status, Status::NotApplicable);
        let r = check(
            Engine::Vllm,
            &Pair::new(&empty, &vllm(1.0, 2.0)),
            Untimed::default(),
        );
        assert_eq!(r.status, Status::Unknown);
        let none = Untimed::default();
        let r = check(
            Engine::Vllm,
            &Pair::new(&vllm(5.0, 10.0), &vllm(5.0, 10.0)),
            none,
        );
        assert_eq!(r.status, Status::NotApplicable, "{}", r.message);
        let r = check(
            Engine::Vllm,
            &Pair::new(&vllm(5.0, 10.0), &vllm(1.0, 20.0)),
            none,
        );
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
    }

    #[test]
    fn the_load_tools_repeated_first_prompt_is_left_out() {
        // 16 warm-ups and a test request, each 100 tokens of the first prompt: 16 hits;
        // 32 measured requests of 100 tokens, one hit (the first prompt again).
        let (b, a) = (vllm(0.0, 0.0), vllm(1700.0, 4900.0));
        let untimed = Untimed {
            requests: 17,
            prompt_tokens: Some(100.0),
            refused: None,
        };
        let r = check(Engine::Vllm, &Pair::new(&b, &a), untimed);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(r.evidence("share"), Some(&Json::Float(0.0312)));
        assert!(
            r.message
                .contains("leaving out about 1,700 tokens of the load tool's 17"),
            "{}",
            r.message
        );
        // Counted as they are, the warm-ups would have warned.
        let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
        assert_eq!(r.status, Status::Warn);
    }

    #[test]
    fn an_implausible_counter_that_would_pass_is_cant_tell_naming_it() {
        let text = |hits: &str, queries: f64| {
            format!(
                "# HELP vllm:prefix_cache_hits_total h\nvllm:prefix_cache_hits_total{{engine=\"0\"}} {hits}\nvllm:prefix_cache_queries_total{{engine=\"0\"}} {queries}\n"
            )
        };
        let read = |file: &str, t: String| Snapshot::read(file, t.as_bytes()).unwrap();
        let b = read("run/before.prom", text("100", 1000.0));
        let plain = read("run/after.prom", text("500", 11000.0));
        let r = check(Engine::Vllm, &Pair::new(&b, &plain), Untimed::default());
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        for (value, shown) in [
            ("NaN", "NaN"),
            ("-5", "-5"),
            ("1e308", "1e308"),
            ("9223372036854775808", "9.223372036854776e18"),
        ] {
            let a = read("run/after.prom", text(value, 11000.0));
            let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
            assert_eq!(r.status, Status::Unknown, "{value}: {}", r.message);
            assert_eq!(
                r.message,
                format!(
                    "can't tell from an implausible value: run/after.prom:2: \
                     vllm:prefix_cache_hits_total = {shown} {}",
                    plausible::check(plausible::Quantity::Counter, value.parse().unwrap())
                        .unwrap_err()
                )
            );
        }
        // Taken as written (no gate), a NaN hits counter gives a NaN share: a pass.
        let r = check(
            Engine::Vllm,
            &Pair::new(&snap(&text("100", 1000.0)), &snap(&text("NaN", 11000.0))),
            Untimed::default(),
        );
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn a_refused_prompt_count_is_cant_tell_only_with_untimed_requests() {
        let (b, a) = (vllm(0.0, 0.0), vllm(1700.0, 4900.0));
        let bad = Implausible::new(
            "run/bench.json",
            None,
            "total_input_tokens",
            f64::NAN,
            plausible::Why::NotANumber,
        );
        let untimed = Untimed {
            requests: 17,
            prompt_tokens: None,
            refused: Some(&bad),
        };
        let r = check(Engine::Vllm, &Pair::new(&b, &a), untimed);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(r
            .message
            .ends_with("run/bench.json: total_input_tokens = NaN is not a number"));
        let none = Untimed {
            requests: 0,
            ..untimed
        };
        assert_eq!(
            check(Engine::Vllm, &Pair::new(&b, &a), none).status,
            Status::Warn
        );
    }

    #[test]
    fn a_restart_is_cant_tell() {
        let b = snap("vllm:prefix_cache_hits_total 0\nvllm:prefix_cache_queries_total 10\nvllm:x_created 1\n");
        let a = snap("vllm:prefix_cache_hits_total 9\nvllm:prefix_cache_queries_total 10\nvllm:x_created 2\n");
        let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
        assert_eq!(r.status, Status::Unknown);
        assert_eq!(r.evidence("restarted"), Some(&Json::Bool(true)));
    }
}
