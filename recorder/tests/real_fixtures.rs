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
    // No result file: the load tool was interrupted before it wrote one (T15 can't tell).
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
