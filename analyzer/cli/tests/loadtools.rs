//! GuideLLM and AIPerf runs recorded by `inferlint-recorder record` against the engine
//! simulator (`fixtures/loadtools/recorded/`), analyzed by the real binary: T8 and T15
//! decided from the tools' own results, with the tools' own counts; and with the load's
//! figures taken away, T8 and T15 still there as "can't tell", naming the flag that
//! decides them, in the terminal and in results.json.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use analyzer::docs;
use analyzer::json::{self, Json};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_inferlint"));
    c.env_remove("INFERLINT_ENGINE").env("NO_COLOR", "1");
    c
}

fn fixture(rel: &str) -> PathBuf {
    common::workspace_root()
        .join("fixtures/loadtools")
        .join(rel)
}

/// A fresh copy of a folder's files, so `analyze` may write into it.
fn copy_dir(src: &Path, tag: &str) -> PathBuf {
    common::fresh_copy(src, &format!("loadtools-{tag}"))
}

fn analyze(dir: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("analyze")
        .arg(dir)
        .args(extra)
        .output()
        .expect("run inferlint")
}

/// The check with this id in a Report.
fn check<'a>(report: &'a Json, id: &str) -> &'a Json {
    report
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| c.get("id").and_then(Json::as_str) == Some(id))
        .unwrap_or_else(|| panic!("no {id} in {}", report.to_compact()))
}

fn status(report: &Json, id: &str) -> String {
    check(report, id)
        .get("status")
        .and_then(Json::as_str)
        .unwrap()
        .to_string()
}

fn evidence(report: &Json, id: &str, key: &str) -> Option<f64> {
    check(report, id)
        .get("evidence")
        .and_then(|e| e.get(key))
        .and_then(Json::as_f64)
}

fn results_json(dir: &Path) -> Json {
    json::parse(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

/// The number at a path of a JSON file.
fn number_at(file: &Path, path: &[&str]) -> f64 {
    let v = json::parse(&std::fs::read_to_string(file).unwrap()).unwrap();
    common::number_at(&v, path)
}

#[test]
fn a_guidellm_run_decides_t8_and_t15_with_guidellm_s_own_counts() {
    let dir = copy_dir(&fixture("recorded/guidellm-concurrent16"), "guidellm");
    let o = analyze(&dir, &[]);
    assert!(o.status.code().is_some(), "{o:?}");
    let r = results_json(&dir);
    assert_eq!(status(&r, "T8"), "pass");
    assert_eq!(evidence(&r, "T8", "requested"), Some(16.0));
    assert_eq!(status(&r, "T15"), "pass");
    let own = |path: &[&str]| number_at(&dir.join("bench.json"), path);
    let completed = own(&["benchmarks", "0", "metrics", "request_totals", "successful"]);
    let tokens = own(&[
        "benchmarks",
        "0",
        "metrics",
        "output_token_count",
        "successful",
        "total_sum",
    ]);
    assert_eq!(evidence(&r, "T15", "client_completed"), Some(completed));
    assert_eq!(evidence(&r, "T15", "server_finished"), Some(completed));
    assert_eq!(evidence(&r, "T15", "client_output_tokens"), Some(tokens));
    assert_eq!(evidence(&r, "T15", "server_output_tokens"), Some(tokens));
}

#[test]
fn an_aiperf_run_decides_t8_and_t15_with_aiperf_s_own_counts() {
    let dir = copy_dir(&fixture("recorded/aiperf-c8"), "aiperf");
    analyze(&dir, &[]);
    let r = results_json(&dir);
    assert_eq!(status(&r, "T8"), "pass");
    assert_eq!(evidence(&r, "T8", "requested"), Some(8.0));
    assert_eq!(status(&r, "T15"), "pass");
    let own = |k: &str| number_at(&dir.join("bench.json"), &[k, "avg"]);
    assert_eq!(
        evidence(&r, "T15", "client_completed"),
        Some(own("request_count"))
    );
    assert_eq!(
        evidence(&r, "T15", "server_finished"),
        Some(own("request_count"))
    );
    assert_eq!(
        evidence(&r, "T15", "client_output_tokens"),
        Some(own("total_usage_completion_tokens"))
    );
}

/// The recorded GuideLLM folder as an unknown load would leave it: no result file, no
/// recognised client, no requested concurrency.
fn unknown_load(tag: &str) -> PathBuf {
    let dir = copy_dir(&fixture("recorded/guidellm-concurrent16"), tag);
    std::fs::remove_file(dir.join("bench.json")).unwrap();
    let bytes = std::fs::read(dir.join("manifest.json")).unwrap();
    let mut m: docs::Manifest = docs::read("manifest.json", &bytes).unwrap();
    m.load.client = None;
    m.load.argv_given = ["/usr/local/bin/locust", "-u", "16"]
        .map(String::from)
        .to_vec();
    m.requested.from_load = None;
    std::fs::write(dir.join("manifest.json"), docs::to_bytes(&m)).unwrap();
    dir
}

#[test]
fn an_unknown_load_leaves_t8_and_t15_undecided_with_the_flags_that_decide_them() {
    let dir = unknown_load("unknown");
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = |id: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("[{id:>3}]")))
            .unwrap_or_else(|| panic!("no {id} line in\n{out}"))
            .to_string()
    };
    assert!(line("T8").starts_with("[ T8] ????"), "{out}");
    assert!(line("T8").contains("--requested N"), "{out}");
    assert!(line("T8").contains("(locust) is not a client"), "{out}");
    assert!(line("T15").starts_with("[T15] ????"), "{out}");
    assert!(line("T15").contains("--bench-result FILE"), "{out}");
    assert!(
        out.contains("The load tool's own figures are missing"),
        "what limited the run says why it is short:\n{out}"
    );
    assert_eq!(o.status.code(), Some(2), "can't tell is exit 2\n{out}");
    let r = results_json(&dir);
    assert_eq!(status(&r, "T8"), "unknown");
    assert_eq!(status(&r, "T15"), "unknown");
    let decide = |id: &str| {
        check(&r, id)
            .get("evidence")
            .and_then(|e| e.get("decide_with"))
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    assert_eq!(decide("T8").as_deref(), Some("--requested N"));
    assert_eq!(decide("T15").as_deref(), Some("--bench-result FILE"));

    // The flags named decide them.
    let result = fixture("recorded/guidellm-concurrent16/bench.json");
    analyze(
        &dir,
        &[
            "--requested",
            "16",
            "--bench-result",
            result.to_str().unwrap(),
        ],
    );
    let r = results_json(&dir);
    assert_eq!(status(&r, "T8"), "pass");
    assert_eq!(status(&r, "T15"), "pass");
}

#[test]
fn a_rate_based_load_asks_for_no_concurrency() {
    let dir = unknown_load("rate");
    let result = fixture("guidellm-poisson4/benchmarks.json");
    analyze(&dir, &["--bench-result", result.to_str().unwrap()]);
    let r = results_json(&dir);
    assert_eq!(status(&r, "T8"), "not_applicable");
    assert_eq!(evidence(&r, "T8", "request_rate"), Some(4.0));
    assert_eq!(evidence(&r, "T8", "peak_running"), Some(16.0));
    let msg = check(&r, "T8")
        .get("message")
        .and_then(Json::as_str)
        .unwrap();
    assert!(
        msg.contains("GuideLLM 0.8.1 sent a rate-based load (4 requests/s)"),
        "{msg}"
    );
    // Its counts are another run's: T15 is decided, and disagrees.
    assert_eq!(status(&r, "T15"), "fail");
}
