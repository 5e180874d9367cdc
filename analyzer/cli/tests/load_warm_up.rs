//! Warm-up requests a load tool counts apart (GuideLLM's `warmup=`, AIPerf's
//! `--warmup-request-count`): the server finished them, so T15 expects them beyond the
//! tool's measured count. Real runs against the simulator, with the server's metrics read
//! just before and after each (`fixtures/loadtools/*-warmup/`).

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use analyzer::docs::{AFTER_SNAPSHOT, BEFORE_SNAPSHOT, BENCH_JSON};
use analyzer::json::{self, Json};

fn fixture(case: &str) -> PathBuf {
    common::workspace_root()
        .join("fixtures/loadtools")
        .join(case)
}

/// A run folder of the tool's result and the server's metrics around it.
fn run_folder(case: &str, result: &str) -> PathBuf {
    let src = fixture(case);
    let dst = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("warm-up-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for (from, to) in [
        ("metrics.before.prom", BEFORE_SNAPSHOT),
        ("metrics.after.prom", AFTER_SNAPSHOT),
        (result, BENCH_JSON),
    ] {
        std::fs::copy(src.join(from), dst.join(to)).unwrap();
    }
    dst
}

/// T15 of `inferlint analyze DIR`.
fn t15(dir: &Path) -> Json {
    let o = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env("NO_COLOR", "1")
        .arg("analyze")
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{o:?}");
    let r = json::parse(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    r.get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| c.get("id").and_then(Json::as_str) == Some("T15"))
        .cloned()
        .unwrap()
}

fn num(c: &Json, key: &str) -> f64 {
    c.get("evidence")
        .unwrap()
        .get(key)
        .unwrap()
        .as_f64()
        .unwrap()
}

#[test]
fn warm_up_requests_are_expected_on_the_server() {
    for (case, result, measured, warm) in [
        ("guidellm-warmup", "benchmarks.json", 4.0, 4.0),
        ("aiperf-warmup", "profile_export_aiperf.json", 8.0, 3.0),
    ] {
        let c = t15(&run_folder(case, result));
        assert_eq!(
            c.get("status").and_then(Json::as_str),
            Some("pass"),
            "{case}: {c:?}"
        );
        assert_eq!(num(&c, "client_completed"), measured, "{case}");
        assert_eq!(num(&c, "expected_extra_requests"), warm, "{case}");
        assert_eq!(num(&c, "server_finished"), measured + warm, "{case}");
        let msg = c.get("message").and_then(Json::as_str).unwrap();
        assert!(
            msg.contains(&format!("plus {warm} untimed requests")),
            "{msg}"
        );
    }
}

#[test]
fn aiperf_s_scrape_takes_its_warm_up_window_with_the_measured_one() {
    let src = fixture("aiperf-warmup");
    let dst = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("warm-up-alone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    let c = t15(&dst);
    assert_eq!(
        c.get("status").and_then(Json::as_str),
        Some("pass"),
        "{c:?}"
    );
    // 3 warm-up and 8 measured requests of 30 tokens each.
    assert_eq!(num(&c, "server_finished"), 11.0);
    assert_eq!(num(&c, "server_output_tokens"), 330.0);
    let msg = c.get("message").and_then(Json::as_str).unwrap();
    assert!(
        msg.contains("counters over its warm-up and profiling windows"),
        "{msg}"
    );
}

/// T18 of `inferlint analyze DIR`.
fn t18(dir: &Path) -> Json {
    t15(dir); // runs `analyze`, which writes results.json
    let r = json::parse(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    r.get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| c.get("id").and_then(Json::as_str) == Some("T18"))
        .cloned()
        .unwrap()
}

#[test]
fn guidellm_s_per_request_times_decide_t18() {
    // The recorded run's server side, with GuideLLM's report of the same load as it
    // saved it, per-request records kept.
    let dst = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("warm-up-t18-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(fixture("recorded/guidellm-concurrent16"))
        .unwrap()
        .flatten()
    {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    let before = t18(&dst);
    assert_eq!(
        before.get("status").and_then(Json::as_str),
        Some("unknown"),
        "its own bench.json kept no per-request records"
    );
    std::fs::copy(
        fixture("guidellm-concurrent16/benchmarks.json"),
        dst.join(BENCH_JSON),
    )
    .unwrap();
    let c = t18(&dst);
    assert_eq!(
        c.get("status").and_then(Json::as_str),
        Some("pass"),
        "{c:?}"
    );
    // 16 streams: the first wave is the 16 that started before any finished.
    assert_eq!(num(&c, "first_requests"), 16.0);
    assert_eq!(num(&c, "later_requests"), 32.0);
}
