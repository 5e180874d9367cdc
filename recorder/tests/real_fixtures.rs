//! The run folders recorded against a real vLLM 0.32 on the CPU platform
//! (`fixtures/real/`, written by `cargo xtask real --save`, see its README): the verdicts
//! and the facts the analyzer gives on them, pinned, so the parser of vLLM 0.32's log and
//! metrics stays covered without the engine installed.

mod common;
use common::*;

use std::path::PathBuf;

use analyzer::json::Json;
use analyzer::Analysis;

fn folder(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/real")
        .join(case)
}

/// The verdicts of a folder, as `inferlint analyze` gives them, against the pinned ones;
/// the analysis for further checks.
fn pinned(case: &str, expect: &[(&str, &str)]) -> Analysis {
    let dir = folder(case);
    let m = json(&dir.join("manifest.json"));
    assert_eq!(
        m.get("schema").and_then(Json::as_str),
        Some("inferlint.run/1")
    );
    let a = assert_verdicts(&dir, expect);
    // Every folder comes from vLLM 0.32, a tested release: no untested-version note.
    assert_eq!(a.report.version_note, None, "{case}");
    a
}

fn evidence(a: &Analysis, id: &str, key: &str) -> Json {
    a.report
        .checks
        .iter()
        .find(|c| c.id() == id)
        .and_then(|c| c.evidence_value(key))
        .unwrap_or(Json::Null)
}

fn outcome(case: &str) -> (String, String) {
    let m = json(&folder(case).join("manifest.json"));
    let o = m.get("outcome").unwrap();
    let s = |k: &str| o.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    (s("state"), s("stage"))
}

/// The boot facts of the CPU platform, read from a real log.
fn cpu_facts(a: &Analysis, pool: Option<i64>) {
    let f = a.report.facts.as_ref().expect("boot facts");
    assert_eq!(f.vllm_version.as_deref(), Some("0.32.0"));
    assert_eq!(f.kv_pool_tokens, pool);
    assert_eq!(f.available_kv_cache_gib, Some(1.0));
    assert_eq!(f.cudagraphs, Some(false));
    assert_eq!(f.selected_backends, ["CPU_ATTN"]);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    let names: Vec<&str> = f.processes.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.starts_with(&["APIServer", "EngineCore"]) && names.contains(&"Worker"),
        "{names:?}"
    );
}

/// Starts that failed: the whole boot read as the real one printed it, T12 naming the
/// cause (the KV check; the CPU backend's refusal of block size 16, with its line).
#[test]
fn failed_starts() {
    for (case, kind, words) in [
        (
            "fail-max-model-len",
            "kv_cache_too_small",
            "estimated maximum model length is 352",
        ),
        (
            "fail-block-size",
            "value_error",
            "No common block size for 16 (CPU_ATTN: [MultipleOf(32)])",
        ),
    ] {
        let a = pinned(
            case,
            &[
                ("T2", "unknown"),
                ("T5", "unknown"),
                ("T6", "pass"),
                ("T12", "fail"),
            ],
        );
        assert_eq!(outcome(case).0, "problem", "{case}");
        assert_eq!(evidence(&a, "T12", "kind").as_str(), Some(kind), "{case}");
        assert_eq!(
            evidence(&a, "T12", "phase").as_str(),
            Some("boot"),
            "{case}"
        );
        let line = evidence(&a, "T12", "line");
        assert!(line.as_str().unwrap().contains(words), "{case}: {line:?}");
        let f = a.report.facts.as_ref().unwrap();
        assert!(!f.ready, "{case}");
        assert_eq!(f.available_kv_cache_gib, Some(1.0), "{case}");
        assert_eq!(f.selected_backends, ["CPU_ATTN"], "{case}");
    }
    // The block-size failure comes after the pool line: a pool size is no proof of a
    // start that succeeded.
    let a = pinned(
        "fail-block-size",
        &[
            ("T2", "unknown"),
            ("T5", "unknown"),
            ("T6", "pass"),
            ("T12", "fail"),
        ],
    );
    assert_eq!(
        a.report.facts.as_ref().unwrap().kv_pool_tokens,
        Some(1_048_576)
    );
}

/// Head size 16 on the CPU kernel: the first request kills the engine. The probe and the
/// log both fail T7; the load never ran, and T8 and T15 say the server was down.
#[test]
fn a_crash_on_the_first_request() {
    let case = "crash-first-request";
    let a = pinned(
        case,
        &[
            ("T2", "unknown"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "fail,fail"),
            ("T8", "unknown"),
            ("T15", "unknown"),
        ],
    );
    assert_eq!(outcome(case), ("problem".into(), "before".into()));
    assert!(!folder(case).join("load.log").exists());
    let from_log = a
        .report
        .checks
        .iter()
        .find(|c| c.id() == "T7" && c.evidence_value("kind").is_some())
        .unwrap();
    assert_eq!(
        from_log
            .evidence_value("kind")
            .as_ref()
            .and_then(Json::as_str),
        Some("runtime_error")
    );
    assert!(from_log
        .message
        .contains("Unsupported CPU attention configuration: head_dim=16"));
    for id in ["T8", "T15"] {
        let down = evidence(&a, id, "server_down");
        assert!(
            down.as_str()
                .is_some_and(|d| d.contains("did not answer its health check")),
            "{id}: {down:?}"
        );
    }
    assert_eq!(evidence(&a, "T8", "requested").as_i64_trunc(), Some(8));
    // The API server exited by itself with status 0 after its engine died.
    let m = json(&folder(case).join("manifest.json"));
    assert_eq!(
        m.get("serve")
            .and_then(|s| s.get("exit"))
            .and_then(Json::as_i64_trunc),
        Some(0)
    );
    cpu_facts(&a, Some(4_194_304));
}

/// A counter's total in one of a folder's snapshots.
fn counter(case: &str, file: &str, name: &str) -> f64 {
    let text = std::fs::read_to_string(folder(case).join(file)).unwrap();
    analyzer::snapshot::Snapshot::read(file, text.as_bytes())
        .unwrap()
        .metrics
        .total(name, &[])
        .unwrap()
}

/// A pool that holds the load (64 blocks): T1, T8, T15 pass, and the facts come from the
/// real log.
#[test]
fn a_pool_that_fits() {
    let a = pinned(
        "fits",
        &[
            ("T1", "pass"),
            ("T2", "unknown"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "pass"),
            ("T15", "pass"),
            ("T16", "unknown"),
            ("T17", "pass"),
            ("T18", "unknown"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T23", "warn"),
            ("T24", "pass"),
        ],
    );
    assert_eq!(outcome("fits"), ("completed".into(), String::new()));
    cpu_facts(&a, Some(64 * 32));
    let f = a.report.facts.as_ref().unwrap();
    assert_eq!(f.max_concurrency, Some(8.0));
    assert_eq!(f.max_concurrency_request_len, Some(256));
    assert_eq!(evidence(&a, "T5", "block_size").as_i64_trunc(), Some(32));
    assert_eq!(evidence(&a, "T8", "requested").as_i64_trunc(), Some(4));
    assert_eq!(
        evidence(&a, "T15", "client_completed").as_i64_trunc(),
        Some(16)
    );
    assert_eq!(
        evidence(&a, "T14", "inferred_usable_blocks").as_i64_trunc(),
        Some(63)
    );
}

/// The small pool (12 blocks for 8 requests at once): silent preemptions counted by the
/// server's counter, fewer running than asked, the ceiling moving, the null block seen,
/// and the pool named as what limited the run.
#[test]
fn a_small_pool() {
    let case = "small-pool";
    let a = pinned(
        case,
        &[
            ("T1", "fail"),
            ("T2", "unknown"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "fail"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "pass"),
            ("T15", "pass"),
            ("T16", "unknown"),
            ("T17", "pass"),
            ("T18", "unknown"),
            ("T20", "unknown"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T23", "pass"),
            ("T24", "pass"),
        ],
    );
    cpu_facts(&a, Some(12 * 32));
    let name = "vllm:num_preemptions_total";
    let preempted =
        counter(case, "after.snapshot.json", name) - counter(case, "before.snapshot.json", name);
    assert!(preempted > 0.0);
    assert_eq!(evidence(&a, "T1", "preemptions").as_f64(), Some(preempted));
    assert_eq!(evidence(&a, "T8", "requested").as_i64_trunc(), Some(8));
    assert!(evidence(&a, "T8", "peak_running").as_f64().unwrap() < 8.0);
    assert_eq!(
        evidence(&a, "T14", "inferred_usable_blocks").as_i64_trunc(),
        Some(11)
    );
    let pool = a.report.limits.iter().find(|l| l.key == "cache").unwrap();
    assert_eq!(pool.tone, "limit");
    assert!(pool.text.contains("384 tokens"), "{}", pool.text);
}

/// The two starts read together differ only in `--num-gpu-blocks-override`: T11 compares
/// their KV space (1 GiB each), T4 their pools.
#[test]
fn two_starts_with_different_pools() {
    let logs: Vec<(String, String)> = ["fits", "small-pool"]
        .iter()
        .map(|c| {
            let p = folder(c).join("boot.log");
            (format!("{c}/boot.log"), std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let read = analyzer::bootlog::read_logs(&logs, None);
    let results = analyzer::rules::runner::check_logs(&read, true);
    let get = |id: &str| results.iter().find(|r| r.id() == id).unwrap();
    let t11 = get("T11");
    assert_eq!(t11.status, analyzer::Status::Pass, "{}", t11.message);
    assert_eq!(
        t11.evidence_value("available_kv_cache_gib")
            .as_ref()
            .map(Json::to_compact),
        Some(r#"{"fits/boot.log": 1.0, "small-pool/boot.log": 1.0}"#.to_string())
    );
    let t4 = get("T4");
    assert_eq!(t4.status, analyzer::Status::Warn);
    assert_eq!(
        t4.evidence_value("levels").as_ref().map(Json::to_compact),
        Some("[384, 2048]".to_string())
    );
    assert_eq!(
        t4.evidence_value("num_gpu_blocks_override")
            .as_ref()
            .map(Json::to_compact),
        Some(r#"{"fits/boot.log": 64, "small-pool/boot.log": 12}"#.to_string())
    );
    // No T12 "unknown" for lines of an unknown format: every fact line parsed.
    assert!(results
        .iter()
        .all(|r| r.status != analyzer::Status::Unknown || r.id() != "T12"));
}

/// Ctrl-C during the load: an interrupted run, the server's whole tree stopped (API
/// server, `VLLM::EngineCore`, `VLLM::Worker`), the partial folder still read.
#[test]
fn ctrl_c_during_the_load() {
    let case = "ctrl-c";
    // No result file: the load tool was interrupted before it wrote one (T15, T21 and
    // T22 can't tell).
    let a = pinned(
        case,
        &[
            ("T1", "pass"),
            ("T2", "unknown"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "pass"),
            ("T9", "pass"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "unknown"),
            ("T15", "unknown"),
            ("T16", "unknown"),
            ("T17", "pass"),
            ("T18", "unknown"),
            ("T20", "unknown"),
            ("T21", "unknown"),
            ("T22", "unknown"),
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
    assert_eq!(outcome(case), ("interrupted".into(), "load".into()));
    cpu_facts(&a, Some(1_048_576));
    let procs = json(&folder(case).join("processes.json"));
    let text = procs.to_compact();
    for name in [
        "\"VLLM::EngineCor\"",
        "\"VLLM::Worker\"",
        "\"VLLM::EngineCore\"",
    ] {
        assert!(text.contains(name), "{name}");
    }
}

/// A load of 12 short requests (0.3 s each, 6 at once, 9 s in all) read every 2 s: five
/// readings, none of which caught a request running. T24 warns, and T8, which on those
/// readings alone would say the server never ran more than 0 at once, can't tell: the load
/// tool's own timeline shows 6 open at once for 0.6 s, shorter than the readings' gap.
#[test]
fn a_recording_too_coarse_for_its_load() {
    let case = "coarse-readings";
    let a = pinned(
        case,
        &[
            ("T1", "pass"),
            ("T2", "unknown"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "unknown"),
            ("T9", "unknown"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "unknown"),
            ("T15", "pass"),
            ("T16", "unknown"),
            ("T17", "pass"),
            ("T18", "pass"),
            ("T20", "pass"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T23", "pass"),
            ("T24", "warn"),
        ],
    );
    assert_eq!(outcome(case), ("completed".into(), String::new()));
    cpu_facts(&a, Some(1_048_576));
    assert_eq!(
        evidence(&a, "T24", "readings_in_load").as_i64_trunc(),
        Some(5)
    );
    assert_eq!(evidence(&a, "T24", "interval_s").as_f64(), Some(2.0));
    assert_eq!(evidence(&a, "T24", "requests").as_i64_trunc(), Some(12));
    let median = evidence(&a, "T24", "median_request_s").as_f64().unwrap();
    let gap = evidence(&a, "T24", "median_gap_s").as_f64().unwrap();
    assert!(median < gap, "{median} {gap}");
    assert_eq!(evidence(&a, "T8", "peak_running").as_f64(), Some(0.0));
    assert_eq!(
        evidence(&a, "T8", "timeline_open_at_once").as_i64_trunc(),
        Some(6)
    );
}

/// The verdicts every context case shares (the server's start, the pool, the GPU).
fn context_case(case: &str, rest: &[(&'static str, &'static str)]) -> Analysis {
    let mut expect = vec![
        ("T1", "pass"),
        ("T2", "unknown"),
        ("T5", "pass"),
        ("T6", "pass"),
        ("T7", "pass"),
        ("T10", "pass"),
        ("T12", "pass"),
        ("T15", "pass"),
        ("T16", "unknown"),
        ("T17", "pass"),
    ];
    expect.extend_from_slice(rest);
    let a = pinned(case, &expect);
    assert_eq!(outcome(case), ("completed".into(), String::new()));
    cpu_facts(&a, Some(1_048_576));
    assert_eq!(
        evidence(&a, "T21", "asked_tokens").as_i64_trunc(),
        Some(100)
    );
    a
}

/// One load (12 prompts of 80 to 240 tokens, 100 tokens asked of each) under a context of
/// 512 that holds it: every answer as long as asked, no request failed.
#[test]
fn a_context_that_fits() {
    let a = context_case(
        "context-fits",
        &[
            ("T8", "pass"),
            ("T9", "warn"),
            ("T14", "pass"),
            ("T18", "pass"),
            ("T20", "pass"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T23", "pass"),
            ("T24", "pass"),
        ],
    );
    assert_eq!(evidence(&a, "T21", "answers_short").as_i64_trunc(), Some(0));
    assert_eq!(
        evidence(&a, "T22", "requests_failed").as_i64_trunc(),
        Some(0)
    );
}

/// The same load under a context of 256: vLLM lowers `max_tokens` to what the context has
/// left, without an error, so 6 of the 12 answers come back short, each ending where prompt
/// and answer reach 256 tokens (T21 warns). Nothing was refused (T22 passes).
///
/// The stream of the first 6 requests reached the client in one piece (each one's time to
/// first token is its whole latency), so the client's mean time between tokens is below
/// the server's: T23 warns that the two are not measured alike (`pieces`), and does not
/// call it impossible.
#[test]
fn answers_cut_at_the_context() {
    let a = context_case(
        "cut-at-context",
        &[
            ("T8", "unknown"),
            ("T9", "pass"),
            ("T14", "unknown"),
            ("T18", "pass"),
            ("T20", "pass"),
            ("T21", "warn"),
            ("T22", "pass"),
            ("T23", "warn"),
            ("T24", "pass"),
        ],
    );
    assert_eq!(
        evidence(&a, "T21", "cut_at_context").as_i64_trunc(),
        Some(256)
    );
    assert_eq!(evidence(&a, "T21", "answers_read").as_i64_trunc(), Some(12));
    assert_eq!(evidence(&a, "T21", "answers_short").as_i64_trunc(), Some(6));
    let shortest = evidence(&a, "T21", "short_answers");
    let first = &shortest.as_array().unwrap()[0];
    assert_eq!(
        first.to_compact(),
        r#"{"request": 1, "tokens": 40, "prompt_tokens": 216}"#
    );
    assert_eq!(
        evidence(&a, "T22", "requests_failed").as_i64_trunc(),
        Some(0)
    );
    let measures = evidence(&a, "T23", "measures");
    let between = &measures.as_array().unwrap()[1];
    assert_eq!(
        between.get("pieces").and_then(Json::as_bool),
        Some(true),
        "{}",
        between.to_compact()
    );
}

/// The same load under a context of 128: the 7 prompts over 128 tokens are refused with
/// HTTP 400 while the load tool's figures count the other 5 (T22 fails, with the load
/// tool's error texts grouped and the server's own count of 4xx answers); the 5 served are
/// cut at 128 (T21 warns). The refusals end at once, so the load tool's timeline holds
/// fewer than 4 requests open on average; with 7 requests failed, T20 can't tell whose
/// limit that was (and T8 does not blame the load tool).
#[test]
fn prompts_refused_by_the_context() {
    let a = context_case(
        "refused-prompts",
        &[
            ("T8", "unknown"),
            ("T9", "unknown"),
            ("T14", "unknown"),
            ("T18", "unknown"),
            ("T20", "unknown"),
            ("T21", "warn"),
            ("T22", "fail"),
            ("T23", "pass"),
            ("T24", "warn"),
        ],
    );
    assert_eq!(
        evidence(&a, "T22", "requests_sent").as_i64_trunc(),
        Some(12)
    );
    assert_eq!(
        evidence(&a, "T22", "requests_failed").as_i64_trunc(),
        Some(7)
    );
    assert_eq!(
        evidence(&a, "T22", "requests_completed").as_i64_trunc(),
        Some(5)
    );
    assert_eq!(
        evidence(&a, "T22", "errors").to_compact(),
        r#"[{"text": "Bad Request", "count": 7}]"#
    );
    assert_eq!(
        evidence(&a, "T22", "server")
            .get("http_errors")
            .map(Json::to_compact),
        Some(r#"["/v1/completions 4xx: 7"]"#.to_string())
    );
    assert_eq!(
        evidence(&a, "T21", "cut_at_context").as_i64_trunc(),
        Some(128)
    );
    assert_eq!(evidence(&a, "T21", "answers_read").as_i64_trunc(), Some(5));
    assert_eq!(evidence(&a, "T20", "failed").as_i64_trunc(), Some(7));
}
