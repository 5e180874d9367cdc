//! The run folders recorded against a real SGLang 0.5.23 on the CPU
//! (`fixtures/real/sglang-*`, written by `cargo xtask real --engine sglang --save`, see
//! `fixtures/real/README.md`): the verdicts and the facts the analyzer gives on them,
//! pinned, so the reading of 0.5.23's log and metrics stays covered without Python.

mod common;
use common::*;

use std::path::PathBuf;

use analyzer::engine::Engine;
use analyzer::json::Json;
use analyzer::Analysis;

fn folder(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/real")
        .join(case)
}

/// The verdicts of a folder, as `inferlint analyze` gives them, against the pinned ones.
fn pinned(case: &str, expect: &[(&str, &str)]) -> Analysis {
    let a = assert_verdicts(&folder(case), expect);
    // 0.5 is a tested series: no untested-version note.
    assert_eq!(a.report.version_note, None, "{case}");
    a
}

fn check<'a>(a: &'a Analysis, id: &str) -> &'a analyzer::CheckResult {
    a.report.checks.iter().find(|c| c.id() == id).unwrap()
}

fn evidence(a: &Analysis, id: &str, key: &str) -> Json {
    check(a, id).evidence_value(key).unwrap_or(Json::Null)
}

fn broke(a: &Analysis) -> Vec<String> {
    a.report
        .banner
        .as_ref()
        .map(|b| b.what_broke.clone())
        .unwrap_or_default()
}

/// The verdicts every served run here shares: no `nvidia-smi` (T2, T16), no block count
/// on SGLang (T14), no per-request times from the load tools as run (T18), a start that
/// came up (T12), the backend asked for used (T6), pages of one token (T5), readings
/// enough for the load (T24).
const SERVED: [(&str, &str); 9] = [
    ("T2", "unknown"),
    ("T5", "pass"),
    ("T6", "pass"),
    ("T7", "pass"),
    ("T12", "pass"),
    ("T14", "not_applicable"),
    ("T16", "unknown"),
    ("T18", "unknown"),
    ("T24", "pass"),
];

fn served(rest: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    SERVED.iter().chain(rest).copied().collect()
}

/// The facts of a 0.5.23 start on the CPU, read from its real log.
fn cpu_facts(a: &Analysis, pool: i64, cap: i64) {
    let f = a.report.facts.as_ref().expect("boot facts");
    assert_eq!(f.engine, Some(Engine::Sglang));
    assert_eq!(f.version(), Some("0.5.23"));
    assert_eq!(f.kv_pool_tokens, Some(pool));
    assert_eq!(f.running_cap, Some(cap));
    assert_eq!(f.context_len, Some(1024));
    assert_eq!(f.page_size, Some(1));
    assert_eq!(f.selected_backends, ["torch_native"]);
    assert_eq!(f.cudagraphs, Some(false));
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    assert!(f.ready);
}

/// The stop on SIGTERM reads like a crash in the log, and is none.
fn stopped_cleanly(case: &str, a: &Analysis) {
    let log = std::fs::read_to_string(folder(case).join("boot.log")).unwrap();
    assert!(
        log.contains("crashed with exit code -15. Triggering SIGQUIT"),
        "{case}"
    );
    assert!(log.contains("kill_process_tree called"), "{case}");
    assert!(
        analyzer::bootlog::classify(&log).failure.is_none(),
        "{case}"
    );
    let m = json(&folder(case).join("manifest.json"));
    assert_eq!(
        m.get("serve")
            .and_then(|s| s.get("exit"))
            .and_then(Json::as_str),
        Some("SIGKILL"),
        "{case}: the launcher kills itself at the end of its stop"
    );
    assert!(
        broke(a).iter().all(|b| !b.contains("server")),
        "{case}: {:?}",
        broke(a)
    );
}

/// 4,096 tokens for 4 requests of 188 at once: T1, T8, T15 pass; started without
/// `--disable-cuda-graph`, the native-torch backend turned the graphs off. The load
/// tool's warm-up request reused the first prompt, so 87 of its 704 prompt tokens were
/// cache hits (T17 warns above 10%). T18's hint names SGLang's own flag.
#[test]
fn a_pool_that_fits() {
    let a = pinned(
        "sglang-fits",
        &served(&[
            ("T1", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T17", "warn"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "unknown"),
            ("T23", "pass"),
        ]),
    );
    cpu_facts(&a, 4096, 8);
    stopped_cleanly("sglang-fits", &a);
    assert_eq!(evidence(&a, "T8", "requested").as_i64_trunc(), Some(4));
    assert_eq!(
        evidence(&a, "T15", "client_completed").as_i64_trunc(),
        Some(8)
    );
    let t18 = &check(&a, "T18").message;
    assert!(t18.contains("python -m sglang.bench_serving saves them with --output-details"));
    assert!(!t18.contains("vllm"), "{t18}");
    assert!(broke(&a).is_empty());
}

/// 600 tokens for 8 requests of 188 at once: 3 run, the rest queue (T8 fails), no
/// retraction with `--ignore-eos` (T1 passes), and the report names the pool as the limit.
#[test]
fn a_small_pool_that_queues() {
    let a = pinned(
        "sglang-small-pool",
        &served(&[
            ("T1", "pass"),
            ("T8", "fail"),
            ("T9", "pass"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T17", "warn"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "unknown"),
            ("T23", "pass"),
        ]),
    );
    cpu_facts(&a, 600, 8);
    stopped_cleanly("sglang-small-pool", &a);
    assert_eq!(evidence(&a, "T8", "requested").as_i64_trunc(), Some(8));
    assert!(evidence(&a, "T8", "peak_running").as_f64().unwrap() <= 4.0);
    let pool = a.report.limits.iter().find(|l| l.key == "cache").unwrap();
    assert_eq!(pool.tone, "limit");
    assert!(pool.text.contains("600 tokens"), "{}", pool.text);
}

/// A retraction, SGLang's preemption: T1 fails with the count of
/// `sglang:num_retracted_requests_total`, a family the server exports only after one.
#[test]
fn a_retraction() {
    let case = "sglang-retract";
    let a = pinned(
        case,
        &served(&[
            ("T1", "fail"),
            ("T8", "fail"),
            ("T9", "pass"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T17", "pass"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "unknown"),
            ("T23", "pass"),
        ]),
    );
    cpu_facts(&a, 600, 8);
    stopped_cleanly(case, &a);
    let snap = |file: &str| {
        let text = std::fs::read_to_string(folder(case).join(file)).unwrap();
        analyzer::snapshot::Snapshot::read(file, text.as_bytes()).unwrap()
    };
    let name = "sglang:num_retracted_requests_total";
    assert_eq!(snap("before.snapshot.json").metrics.total(name, &[]), None);
    let after = snap("after.snapshot.json")
        .metrics
        .total(name, &[])
        .unwrap();
    assert!(after > 0.0);
    assert_eq!(evidence(&a, "T1", "preemptions").as_f64(), Some(after));
}

/// A 14-token pool with `--max-running-requests 8`: SGLang settles on 7 (half the pool's
/// tokens) and says so in one line, while its settings keep 8. The facts give both and
/// why; T8 reports the limit it settled on.
#[test]
fn a_running_limit_lowered_at_start() {
    let a = pinned(
        "sglang-lowered-limit",
        &served(&[
            ("T1", "pass"),
            ("T8", "fail"),
            ("T9", "unknown"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T17", "pass"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "unknown"),
            ("T23", "pass"),
        ]),
    );
    cpu_facts(&a, 14, 7);
    let cap = a.report.facts.as_ref().unwrap().running_cap_info().unwrap();
    assert_eq!(cap.requested_running, Some(8));
    assert_eq!(cap.reason.as_deref(), Some("available KV cache capacity"));
    assert_eq!(evidence(&a, "T8", "running_cap").as_i64_trunc(), Some(7));
    let f = analyzer::bootlog::read_facts(
        &std::fs::read_to_string(folder("sglang-lowered-limit").join("boot.log")).unwrap(),
        None,
    );
    let digest = f.settings_digest().unwrap();
    let capacity = &digest.groups[0].1;
    assert!(capacity.contains(&("max_running_requests".into(), "8".into())));
}

/// Ctrl-C during the load: interrupted at the load (the load tool, slow to end on SIGINT,
/// was stopped with SIGTERM), no result file (T15 can't tell), and the stop no crash.
#[test]
fn ctrl_c_during_the_load() {
    let case = "sglang-ctrl-c";
    let a = pinned(
        case,
        &served(&[
            ("T1", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T15", "unknown"),
            ("T17", "warn"),
            ("T20", "unknown"),
            ("T21", "unknown"),
            ("T22", "unknown"),
            ("T23", "unknown"),
        ]),
    );
    cpu_facts(&a, 4096, 8);
    stopped_cleanly(case, &a);
    assert!(broke(&a)[0].contains("interrupted at the step \"load\""));
    let procs = json(&folder(case).join("processes.json")).to_compact();
    for name in ["\"sglang::schedul\"", "\"sglang::detoken\""] {
        assert!(procs.contains(name), "{name}");
    }
}

/// `vllm bench serve` against SGLang's OpenAI endpoint: the client's counts agree with
/// the server's (T15) and 8 ran at once (T8).
#[test]
fn vllm_bench_serve_against_sglang() {
    let case = "sglang-vllm-bench";
    let a = pinned(
        case,
        &served(&[
            ("T1", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T17", "pass"),
            ("T20", "pass"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T23", "pass"),
        ]),
    );
    cpu_facts(&a, 4096, 8);
    stopped_cleanly(case, &a);
    let m = json(&folder(case).join("manifest.json"));
    let client = m
        .get("load")
        .and_then(|l| l.get("client"))
        .and_then(Json::as_str);
    assert_eq!(client, Some("vllm"));
    assert_eq!(
        evidence(&a, "T15", "client_completed").as_i64_trunc(),
        Some(8)
    );
}

/// Starts that fail, each read as a failed start (T12, phase `boot`) with its cause: a
/// context length above the model's, a pool of one token, and a pool of ten whose server
/// said "Application startup complete" before its own warm-up request was refused.
#[test]
fn starts_that_fail() {
    for (case, others, kind, words) in [
        (
            "sglang-fail-context-length",
            "unknown",
            "value_error",
            "User-specified context_length (4096) is greater than the derived context_length (1024)",
        ),
        (
            "sglang-fail-pool",
            "pass",
            "assertion",
            "max_running_request is zero",
        ),
        (
            "sglang-fail-warm-up",
            "pass",
            "assertion",
            "Input length (6 tokens) exceeds the maximum allowed length (4 tokens)",
        ),
    ] {
        let a = pinned(
            case,
            &[
                ("T2", "unknown"),
                ("T5", others),
                ("T6", others),
                ("T12", "fail"),
            ],
        );
        let t12 = check(&a, "T12");
        assert_eq!(evidence(&a, "T12", "kind").as_str(), Some(kind), "{case}");
        assert_eq!(evidence(&a, "T12", "phase").as_str(), Some("boot"), "{case}");
        assert!(t12.message.contains(words), "{case}: {}", t12.message);
        let broke = broke(&a);
        assert!(
            broke[0].ends_with("before it was ready: the run never began"),
            "{case}: {broke:?}"
        );
        assert!(!a.report.facts.as_ref().unwrap().ready, "{case}");
    }
}
