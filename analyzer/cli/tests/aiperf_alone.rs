//! An AIPerf artifact directory alone (`profile_export_aiperf.json` beside AIPerf's own
//! scrape of the server, `server_metrics_export.json`), analyzed by the real binary: T1,
//! T8 and T15 decided from what AIPerf scraped, each saying it is at AIPerf's resolution,
//! and "can't tell" wherever AIPerf did not provide the value.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use analyzer::docs::{AIPERF_DIR, AIPERF_RESULT, AIPERF_SERVER_METRICS};
use analyzer::json::{self, Json};

fn fixture(rel: &str) -> PathBuf {
    common::workspace_root()
        .join("fixtures/loadtools")
        .join(rel)
}

/// A fresh copy of a folder's files, so `analyze` may write into it.
fn copy_dir(src: &Path, tag: &str) -> PathBuf {
    common::fresh_copy(src, &format!("aiperf-alone-{tag}"))
}

fn analyze(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env_remove("INFERLINT_ENGINE")
        .env("NO_COLOR", "1")
        .arg("analyze")
        .arg(dir)
        .output()
        .expect("run inferlint")
}

fn read_json(file: &Path) -> Json {
    json::parse(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The check with this id in `results.json`, if the report has it.
fn check(dir: &Path, id: &str) -> Option<Json> {
    read_json(&dir.join("results.json"))
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| c.get("id").and_then(Json::as_str) == Some(id))
        .cloned()
}

fn status(dir: &Path, id: &str) -> String {
    let c = check(dir, id).unwrap_or_else(|| panic!("no {id}"));
    c.get("status").and_then(Json::as_str).unwrap().to_string()
}

fn message(dir: &Path, id: &str) -> String {
    let c = check(dir, id).unwrap();
    c.get("message").and_then(Json::as_str).unwrap().to_string()
}

fn evidence(dir: &Path, id: &str, key: &str) -> Option<f64> {
    check(dir, id)?.get("evidence")?.get(key)?.as_f64()
}

/// A statistic of the one series of a metric family in AIPerf's scrape, read here
/// independently of the analyzer.
fn scraped(dir: &Path, family: &str, stat: &str) -> f64 {
    let v = read_json(&dir.join(AIPERF_SERVER_METRICS));
    let series = v.get("metrics").unwrap().get(family).unwrap().get("series");
    let all = series.and_then(Json::as_array).unwrap();
    all.iter()
        .map(|s| s.get("stats").unwrap().get(stat).unwrap().as_f64().unwrap())
        .fold(None, |acc: Option<f64>, x| {
            Some(match (acc, stat) {
                (None, _) => x,
                (Some(a), "max") => a.max(x),
                (Some(a), _) => a + x,
            })
        })
        .unwrap()
}

fn avg(dir: &Path, key: &str) -> f64 {
    let v = read_json(&dir.join(AIPERF_RESULT));
    v.get(key).unwrap().get("avg").unwrap().as_f64().unwrap()
}

/// Every verdict says it came from AIPerf's scrape, at its resolution.
fn assert_sourced(dir: &Path, id: &str) {
    let m = message(dir, id);
    assert!(
        m.contains("at the resolution AIPerf 0.13.0 sampled"),
        "{id}: {m}"
    );
    let file = check(dir, id)
        .and_then(|c| {
            c.get("evidence")?
                .get("scrape_file")?
                .as_str()
                .map(String::from)
        })
        .unwrap();
    assert!(file.ends_with(AIPERF_SERVER_METRICS), "{file}");
    assert!(evidence(dir, id, "sampled_every_ms").is_some_and(|ms| ms > 300.0 && ms < 400.0));
}

#[test]
fn a_concurrency_run_passes_t1_t8_and_t15_from_aiperf_s_scrape() {
    for (src, tag) in [
        (fixture("aiperf-c8"), "c8"),
        (
            fixture(&format!("recorded/aiperf-c8/{AIPERF_DIR}")),
            "recorded-c8",
        ),
    ] {
        let dir = copy_dir(&src, tag);
        let o = analyze(&dir);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("[ T1] PASS  no preemptions during the run"),
            "{out}"
        );
        assert!(
            out.contains("[ T8] PASS  the server ran up to 8 requests at once"),
            "{out}"
        );
        assert!(
            out.contains("[T15] PASS  client and server agree: 24 completed"),
            "{out}"
        );
        for id in ["T1", "T8", "T15"] {
            assert_sourced(&dir, id);
        }
        assert_eq!(evidence(&dir, "T1", "preemptions"), Some(0.0));
        assert_eq!(
            evidence(&dir, "T8", "peak_running"),
            Some(scraped(&dir, "vllm:num_requests_running", "max"))
        );
        assert_eq!(evidence(&dir, "T8", "requested"), Some(8.0));
        assert_eq!(
            evidence(&dir, "T15", "server_finished"),
            Some(scraped(&dir, "vllm:request_success", "total"))
        );
        assert_eq!(
            evidence(&dir, "T15", "server_output_tokens"),
            Some(scraped(&dir, "vllm:generation_tokens", "total"))
        );
        assert_eq!(
            evidence(&dir, "T15", "client_completed"),
            Some(avg(&dir, "request_count"))
        );
        // The rest is as with any folder lacking a recording: not decided here. T16 and
        // T18 need captures only inferlint-recorder makes: listed as not checked.
        for id in ["T9", "T10", "T14", "T16", "T17", "T18"] {
            assert!(check(&dir, id).is_none(), "{id} needs a recording");
        }
        assert_eq!(o.status.code(), Some(0), "T1, T8 and T15 passed\n{out}");
    }
}

#[test]
fn a_server_that_ran_fewer_fails_t8_and_a_rate_asks_for_none() {
    let dir = copy_dir(&fixture("aiperf-errors-503"), "503");
    analyze(&dir);
    assert_eq!(status(&dir, "T8"), "fail");
    assert_eq!(evidence(&dir, "T8", "peak_running"), Some(2.0));
    assert!(message(&dir, "T8").starts_with("8 requested, but the server never ran more than 2"));
    assert_eq!(
        status(&dir, "T15"),
        "pass",
        "errored requests never finished"
    );
    assert_eq!(evidence(&dir, "T15", "client_completed"), Some(3.0));
    assert_eq!(status(&dir, "T1"), "pass");

    let dir = copy_dir(&fixture("aiperf-poisson4"), "poisson");
    analyze(&dir);
    assert_eq!(status(&dir, "T8"), "not_applicable");
    assert_eq!(evidence(&dir, "T8", "request_rate"), Some(4.0));
    assert_eq!(status(&dir, "T15"), "pass");
    assert_sourced(&dir, "T8");
}

/// Sets the value at `path` (object keys, array indexes) in a JSON value.
fn set(v: &mut Json, path: &[&str], new: Json) {
    let Some((first, rest)) = path.split_first() else {
        *v = new;
        return;
    };
    let next = match v {
        Json::Obj(pairs) => &mut pairs.iter_mut().find(|(k, _)| k == first).unwrap().1,
        Json::Arr(items) => &mut items[first.parse::<usize>().unwrap()],
        _ => panic!("no {first}"),
    };
    set(next, rest, new);
}

/// The c8 artifact directory with its scrape changed.
fn tampered(tag: &str, change: impl FnOnce(&mut Json)) -> PathBuf {
    let dir = copy_dir(&fixture("aiperf-c8"), tag);
    let file = dir.join(AIPERF_SERVER_METRICS);
    let mut v = read_json(&file);
    change(&mut v);
    std::fs::write(&file, v.to_compact()).unwrap();
    analyze(&dir);
    dir
}

#[test]
fn what_aiperf_did_not_provide_is_never_a_pass() {
    let stat = |family: &'static str, stat: &'static str, new: Json| {
        move |v: &mut Json| set(v, &["metrics", family, "series", "0", "stats", stat], new)
    };
    let dir = tampered(
        "no-running",
        stat("vllm:num_requests_running", "max", Json::Null),
    );
    assert_eq!(status(&dir, "T8"), "unknown");
    assert!(message(&dir, "T8").contains("has no vllm:num_requests_running"));

    let dir = tampered(
        "bad-preempt",
        stat("vllm:num_preemptions", "total", Json::Float(-1.0)),
    );
    assert_eq!(status(&dir, "T1"), "unknown");
    assert!(
        message(&dir, "T1").contains("implausible"),
        "{}",
        message(&dir, "T1")
    );

    let dir = tampered(
        "no-tokens",
        stat("vllm:generation_tokens", "total", Json::Null),
    );
    assert_eq!(status(&dir, "T15"), "unknown");

    let dir = tampered(
        "preempted",
        stat("vllm:num_preemptions", "total", Json::Int(3)),
    );
    assert_eq!(status(&dir, "T1"), "fail");
    assert_eq!(evidence(&dir, "T1", "preemptions"), Some(3.0));

    // Five more finished on the server (its first series, aborted) than AIPerf sent.
    let dir = tampered("extra", stat("vllm:request_success", "total", Json::Int(5)));
    assert_eq!(status(&dir, "T15"), "fail");
    assert_eq!(evidence(&dir, "T15", "extra_requests"), Some(5.0));
}

#[test]
fn an_unreadable_scrape_names_its_file_and_line() {
    let dir = copy_dir(&fixture("aiperf-c8"), "broken");
    std::fs::write(dir.join(AIPERF_SERVER_METRICS), b"{\n \"metrics\": {,\n").unwrap();
    let o = analyze(&dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("server_metrics_export.json:2"), "{err}");
    // It was the only file of the server's side: nothing usable, no report.
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!dir.join("results.json").exists());
}
