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

use serde::Serialize;

use crate::bench::key::{COMPLETED, TOTAL_INPUT_TOKENS};
use crate::counters::{Pair, RestartEvidence};
use crate::engine::{Engine, PrefixCache, Selector};
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

/// What T17 read: the engine's prefix-cache counters and, as far as they could be
/// compared, their increases and the share of prompt tokens served from the cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CacheHits {
    /// The engine's key.
    pub engine: &'static str,
    /// The counters read, in words.
    pub source: &'static str,
    /// The counters' increases: prompt tokens served from the cache, and looked up in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queried_tokens: Option<f64>,
    /// A refused value: a prefix-cache counter, or a count the untimed requests' prompt
    /// length comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// A restart between the readings, its keys written in this object's place.
    #[serde(flatten)]
    pub restart: Option<RestartEvidence>,
    /// The load tool's requests outside its measurement, and each one's estimated prompt
    /// tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untimed_requests: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untimed_tokens: Option<f64>,
    /// The measured requests' share of prompt tokens served from the cache, to 4 places.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
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
    let mut e = CacheHits {
        engine: engine.key(),
        source: names.source,
        ..CacheHits::default()
    };
    let said =
        |status, message: String, e: CacheHits| CheckResult::new(T17, status, message).found(e);
    // A refused counter is no reading: not "does not apply", never a pass (plausible.rs).
    if let Some(bad) = pair.implausible(&counter_names(names)) {
        e.implausible = Some(bad.to_string());
        return said(Status::Unknown, plausible::cannot_tell(bad), e);
    }
    let [hb, qb, ha, qa] = [
        read(&pair.before.metrics, names.hits),
        read(&pair.before.metrics, names.queries),
        read(&pair.after.metrics, names.hits),
        read(&pair.after.metrics, names.queries),
    ];
    if [hb, qb, ha, qa].iter().all(Option::is_none) {
        return said(
            Status::NotApplicable,
            format!(
                "does not apply: {} exported no prefix-cache counter ({}) in either reading, so \
                 prefix caching was off or this version counts nothing",
                engine.display(),
                names.source
            ),
            e,
        );
    }
    if let Some(restart) = pair.stamps_restart() {
        e.restart = Some(restart.evidence());
        return said(
            Status::Unknown,
            format!(
                "{}, so the prefix-cache counters cannot be compared",
                restart.describe()
            ),
            e,
        );
    }
    let (Some(hb), Some(qb), Some(ha), Some(qa)) = (hb, qb, ha, qa) else {
        return said(
            Status::Unknown,
            format!(
                "a prefix-cache counter ({}) is missing from a reading, so the share of prompt \
                 tokens served from the cache cannot be told",
                names.source
            ),
            e,
        );
    };
    let (hits, queries) = (ha - hb, qa - qb);
    if hits < 0.0 || queries < 0.0 {
        return said(
            Status::Unknown,
            "a prefix-cache counter went down between the readings: the server restarted".into(),
            e,
        );
    }
    e.hit_tokens = Some(hits);
    e.queried_tokens = Some(queries);
    if queries <= 0.0 {
        return said(
            Status::NotApplicable,
            "does not apply: no prompt token was looked up in the prefix cache during the run \
             (caching off, or no request), so none was served from it"
                .into(),
            e,
        );
    }
    let (status, message) = measured_share(hits, queries, untimed, names.source, &mut e);
    said(status, message, e)
}

/// The measured requests' share of prompt tokens served from the cache, the load tool's
/// untimed requests set apart; fills in `e`.
fn measured_share(
    hits: f64,
    queries: f64,
    untimed: Untimed<'_>,
    source: &str,
    e: &mut CacheHits,
) -> (Status, String) {
    // The untimed requests repeat the first prompt: all but the first are hits.
    let per = untimed.prompt_tokens.filter(|p| p.is_finite() && *p > 0.0);
    let (mut measured_hits, mut measured_queries) = (hits, queries);
    if let (1.., Some(bad)) = (untimed.requests, untimed.refused) {
        e.implausible = Some(bad.to_string());
        return (Status::Unknown, plausible::cannot_tell(bad));
    }
    if let (n @ 1.., Some(p)) = (untimed.requests, per) {
        e.untimed_requests = Some(n);
        e.untimed_tokens = Some(round_dp(p, 1));
        measured_queries = (queries - n as f64 * p).max(0.0);
        measured_hits = (hits - (n - 1) as f64 * p).clamp(0.0, measured_queries);
    }
    if measured_queries <= 0.0 {
        return (
            Status::Unknown,
            "the load tool's untimed requests account for every prompt token looked up in the \
             prefix cache, so the measured requests' share cannot be told"
                .into(),
        );
    }
    let share = measured_hits / measured_queries;
    e.share = Some(round_dp(share, 4));
    let mut said_share = format!(
        "{} of {} prompt tokens ({}%) were served from the prefix cache ({})",
        thousands(measured_hits),
        thousands(measured_queries),
        fixed(share * 100.0, 1),
        source
    );
    if measured_queries != queries {
        said_share.push_str(&format!(
            ", leaving out about {} tokens of the load tool's {} untimed requests",
            thousands(queries - measured_queries),
            untimed.requests
        ));
    }
    if share >= WARN_SHARE {
        let message = format!(
            "{said_share}: the run skipped that prefill, so its throughput does not carry over \
             to traffic without those hits"
        );
        (Status::Warn, message)
    } else {
        let message = format!("{said_share}: below {}%", fixed(WARN_SHARE * 100.0, 0));
        (Status::Pass, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BenchResult;
    use crate::input::InputError;
    use crate::inputs::{InputFile, RunInput};
    use crate::json::Json;
    use crate::rules::absent::{settle, Gap, Input};
    use crate::rules::testing::{said, Folder};
    use crate::snapshot::Snapshot;

    /// The evidence as `results.json` writes it.
    fn written(r: &CheckResult) -> String {
        Json::Obj(r.evidence()).to_compact()
    }

    fn found(r: &CheckResult) -> &CacheHits {
        r.finding::<CacheHits>().expect("T17's counts")
    }

    const VLLM: &str = r#""engine": "vllm", "source": "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total""#;

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
        assert_eq!(found(&r).share, Some(0.5));
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
        assert_eq!(
            (found(&r).hit_tokens, found(&r).queried_tokens),
            (Some(400.0), Some(1000.0))
        );
        assert_eq!(found(&r).engine, "sglang");
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
        assert_eq!(found(&r).share, Some(0.0312));
        assert_eq!(
            (found(&r).untimed_requests, found(&r).untimed_tokens),
            (Some(17), Some(100.0))
        );
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
        let restart = found(&r).restart.as_ref().unwrap();
        assert!(restart.restarted);
        assert_eq!(restart.example.as_deref(), Some("vllm:x_created"));
        assert_eq!(found(&r).share, None);
    }

    #[test]
    fn the_evidence_of_each_outcome_in_its_order() {
        let pass =
            |b: &Snapshot, a: &Snapshot, u: Untimed<'_>| check(Engine::Vllm, &Pair::new(b, a), u);
        let (b, a) = (vllm(100.0, 1000.0), vllm(5100.0, 11000.0));
        let r = pass(&b, &a, Untimed::default());
        assert_eq!(
            written(&r),
            format!(r#"{{{VLLM}, "hit_tokens": 5000.0, "queried_tokens": 10000.0, "share": 0.5}}"#)
        );
        let (b, a) = (vllm(0.0, 0.0), vllm(1700.0, 4900.0));
        let untimed = Untimed {
            requests: 17,
            prompt_tokens: Some(100.04),
            refused: None,
        };
        let r = pass(&b, &a, untimed);
        assert_eq!(
            written(&r),
            format!(
                r#"{{{VLLM}, "hit_tokens": 1700.0, "queried_tokens": 4900.0, "untimed_requests": 17, "untimed_tokens": 100.0, "share": 0.0311}}"#
            )
        );
        // The untimed requests account for every token looked up: can't tell.
        let r = pass(&b, &vllm(1700.0, 1700.0), untimed);
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .starts_with("the load tool's untimed requests account for every"));
        assert_eq!(
            written(&r),
            format!(
                r#"{{{VLLM}, "hit_tokens": 1700.0, "queried_tokens": 1700.0, "untimed_requests": 17, "untimed_tokens": 100.0}}"#
            )
        );
        // Nothing looked up: does not apply, with the deltas.
        let r = pass(&vllm(5.0, 10.0), &vllm(5.0, 10.0), Untimed::default());
        assert_eq!(
            written(&r),
            format!(r#"{{{VLLM}, "hit_tokens": 0.0, "queried_tokens": 0.0}}"#)
        );
        // Nothing exported, or a counter that went down: the counters' names only.
        let empty = snap("vllm:num_requests_running 0\n");
        assert_eq!(
            written(&pass(&empty, &empty, Untimed::default())),
            format!("{{{VLLM}}}")
        );
        let r = pass(&vllm(5.0, 10.0), &vllm(1.0, 20.0), Untimed::default());
        assert_eq!(written(&r), format!("{{{VLLM}}}"));
        // A refused prompt count with untimed requests: after the deltas.
        let bad = Implausible::new(
            "run/bench.json",
            None,
            "total_input_tokens",
            f64::NAN,
            plausible::Why::NotANumber,
        );
        let refused = Untimed {
            requests: 17,
            prompt_tokens: None,
            refused: Some(&bad),
        };
        let r = pass(&b, &a, refused);
        assert_eq!(
            written(&r),
            format!(
                r#"{{{VLLM}, "hit_tokens": 1700.0, "queried_tokens": 4900.0, "implausible": "run/bench.json: total_input_tokens = NaN is not a number"}}"#
            )
        );
    }

    #[test]
    fn a_restart_or_a_refused_counter_comes_after_the_counters_names() {
        let b = snap("vllm:prefix_cache_hits_total 0\nvllm:prefix_cache_queries_total 10\nvllm:x_created 1\n");
        let a = snap("vllm:prefix_cache_hits_total 9\nvllm:prefix_cache_queries_total 10\nvllm:x_created 2\n");
        let r = check(Engine::Vllm, &Pair::new(&b, &a), Untimed::default());
        assert!(
            r.message
                .ends_with(", so the prefix-cache counters cannot be compared"),
            "{}",
            r.message
        );
        assert_eq!(
            written(&r),
            format!(
                r#"{{{VLLM}, "restarted": true, "created_changed": 1, "example": "vllm:x_created", "before": 1.0, "after": 2.0}}"#
            )
        );
        let text = "vllm:prefix_cache_hits_total{engine=\"0\"} NaN\nvllm:prefix_cache_queries_total{engine=\"0\"} 5\n";
        let a = Snapshot::read("run/after.prom", text.as_bytes()).unwrap();
        let r = check(
            Engine::Vllm,
            &Pair::new(&vllm(0.0, 0.0), &a),
            Untimed::default(),
        );
        assert_eq!(
            written(&r),
            format!(
                r#"{{{VLLM}, "implausible": "run/after.prom:1: vllm:prefix_cache_hits_total = NaN is not a number"}}"#
            )
        );
    }

    /// A folder holding the recorder's snapshots.
    fn measured() -> Folder {
        Folder {
            input: RunInput {
                before: Some(InputFile::new("run/before.prom", Vec::new())),
                ..RunInput::default()
            },
            ..Folder::default()
        }
    }

    #[test]
    fn the_run_reads_the_pair_and_says_what_the_conversion_says() {
        // No measured load in the folder, or no snapshots: no result.
        assert_eq!(settle(T17, run(&Folder::default().scope())), None);
        let f = measured();
        let mut cx = f.scope();
        assert_eq!(settle(T17, run(&cx)), None);
        let e = InputError::new("run/after.prom", Some(2), "not a metric line");
        cx.pair = Input::Unusable(&e);
        assert_eq!(
            said(&settle(T17, run(&cx)).unwrap()),
            (
                Status::Unknown,
                "unusable input: run/after.prom:2: not a metric line"
            )
        );
        cx.pair = Input::Missing(Gap::Run("no snapshot after the load".into()));
        assert_eq!(
            said(&settle(T17, run(&cx)).unwrap()),
            (Status::Unknown, "can't tell: no snapshot after the load")
        );
        // The load tool's 17 untimed requests of 100 prompt tokens are set apart.
        let (b, a) = (vllm(0.0, 0.0), vllm(1700.0, 4900.0));
        let pair = Pair::new(&b, &a);
        let bench = BenchResult {
            completed: Some(32),
            total_input_tokens: Some(3200),
            ..BenchResult::default()
        };
        cx.pair = Input::Present(&pair);
        cx.bench = Input::Present(&bench);
        cx.expected_extra = 17;
        let r = settle(T17, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(found(&r).untimed_tokens, Some(100.0));
        cx.bench = Input::NotGiven;
        assert_eq!(settle(T17, run(&cx)).unwrap().status, Status::Warn);
    }
}
