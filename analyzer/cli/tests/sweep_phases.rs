//! A sweep is phases: the GuideLLM sweep recorded against the simulator capped at 10
//! running requests (`fixtures/loadtools/recorded/guidellm-sweep-2-16`: 2 streams, then
//! 16) shows one row per phase with its own verdicts, in the terminal and in
//! results.json, and the run's exit status is the worst phase's; a single benchmark has no
//! phase table, and phases the recording does not cover are "can't tell".

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use analyzer::json::{self, Json};

fn fixture(rel: &str) -> PathBuf {
    common::workspace_root()
        .join("fixtures/loadtools")
        .join(rel)
}

/// A fresh copy of a folder's files, so `analyze` may write into it.
fn copy_dir(src: &Path, tag: &str) -> PathBuf {
    common::fresh_copy(src, &format!("sweep-{tag}"))
}

fn analyze(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env_remove("INFERLINT_ENGINE")
        .env("NO_COLOR", "1")
        .arg("analyze")
        .arg(dir)
        .args(extra)
        .output()
        .expect("run inferlint")
}

fn results_json(dir: &Path) -> Json {
    json::parse(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

fn phases(r: &Json) -> &[Json] {
    r.get("phases").and_then(Json::as_array).unwrap()
}

fn str_at<'a>(v: &'a Json, k: &str) -> &'a str {
    v.get(k).and_then(Json::as_str).unwrap()
}

/// Each check of a phase as (id, status).
fn verdicts(phase: &Json) -> Vec<(String, String)> {
    phase
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|c| (str_at(c, "id").to_string(), str_at(c, "status").to_string()))
        .collect()
}

/// The verdicts read from the recording: all but T22's and T21's, which read the load
/// tool's own counts.
fn series_verdicts(phase: &Json) -> Vec<(String, String)> {
    verdicts(phase)
        .into_iter()
        .filter(|(id, _)| id != "T21" && id != "T22")
        .collect()
}

fn check<'a>(phase: &'a Json, id: &str) -> &'a Json {
    phase
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| str_at(c, "id") == id)
        .unwrap()
}

fn num(v: &Json, path: &[&str]) -> f64 {
    common::number_at(v, path)
}

#[test]
fn a_sweep_shows_one_row_per_phase_with_its_own_verdicts() {
    let dir = copy_dir(&fixture("recorded/guidellm-sweep-2-16"), "recorded");
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "the worst phase failed\n{out}");
    // The terminal's table: one row per phase, after the checks.
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("The load in "))
        .take(4)
        .collect();
    assert_eq!(
        table,
        [
            "The load in 2 phases, each judged on its own window:",
            "   #  load                           T1  T8  T24 T9  T10 T15 T22 T21 T20   worst",
            "   1  asked for 2 at once  / ran 2   ✔   ✔   ✔   ▲   ✔   ✔   ✔   ✔   ?     WARN",
            "   2  asked for 16 at once / ran 10  ✔   ✖   ▲   ▲   ✔   ✔   ✔   ✔   ?     TRIPWIRE-FAILED",
        ],
        "{out}"
    );
    assert!(
        out.contains("phase 2 [T8] TRIPWIRE-FAILED  16 requested, but the server never ran more than 10 at once; the server runs at most 10 at once (--max-num-seqs 10)"),
        "{out}"
    );
    // results.json: the same rows.
    let r = results_json(&dir);
    let p = phases(&r);
    assert_eq!(p.len(), 2);
    // Phase 2 lasted 2.1 s: 7 readings, too few for T24.
    let want = |t8: &str, t24: &str| {
        [
            ("T1", "pass"),
            ("T8", t8),
            ("T24", t24),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T15", "pass"),
            ("T22", "pass"),
            ("T21", "pass"),
            // This report kept no request records: the phases' own timelines are unknown.
            ("T20", "unknown"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .to_vec()
    };
    assert_eq!(verdicts(&p[0]), want("pass", "pass"));
    assert_eq!(verdicts(&p[1]), want("fail", "warn"));
    assert_eq!(
        (str_at(&p[0], "status"), str_at(&p[1], "status")),
        ("warn", "fail")
    );
    assert_eq!(
        (str_at(&p[0], "asked"), str_at(&p[1], "asked")),
        ("2 at once", "16 at once")
    );
    assert_eq!((num(&p[0], &["ran"]), num(&p[1], &["ran"])), (2.0, 10.0));
    // Each phase's T15 compares GuideLLM's own count for that benchmark, which lies
    // between the server's counts at the readings inside and around the phase.
    let own = json::parse(&std::fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap();
    for (i, phase) in p.iter().enumerate() {
        let i = i.to_string();
        let tokens = num(
            &own,
            &[
                "benchmarks",
                &i,
                "metrics",
                "output_token_count",
                "successful",
                "total_sum",
            ],
        );
        let t15 = check(phase, "T15");
        assert_eq!(num(t15, &["evidence", "client_output_tokens"]), tokens);
        let lo = num(t15, &["evidence", "server_output_tokens_at_least"]);
        let hi = num(t15, &["evidence", "server_output_tokens_at_most"]);
        assert!(
            lo <= tokens && tokens <= hi && lo < hi,
            "{lo} {tokens} {hi}"
        );
        assert_eq!(
            num(check(phase, "T8"), &["evidence", "requested"]),
            num(phase, &["concurrency"])
        );
    }
    // The windows follow each other on the charts' axis, inside the recording.
    let (s1, e1) = (num(&p[0], &["start_s"]), num(&p[0], &["end_s"]));
    let (s2, e2) = (num(&p[1], &["start_s"]), num(&p[1], &["end_s"]));
    assert!(
        0.0 < s1 && s1 < e1 && e1 < s2 && s2 < e2,
        "{s1} {e1} {s2} {e2}"
    );
    // The run-level T8 still judges the highest and points at the table.
    let t8 = r
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| str_at(c, "id") == "T8")
        .unwrap();
    assert!(str_at(t8, "message").contains("phase by phase in the phase table"));
}

#[test]
fn a_single_benchmark_has_no_phase_table() {
    let dir = copy_dir(&fixture("recorded/guidellm-concurrent16"), "single");
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("The load in "), "{out}");
    assert!(results_json(&dir).get("phases").is_none());
}

#[test]
fn phases_the_recording_does_not_cover_are_cant_tell() {
    // Another day's sweep against this recording: its times fall outside the series.
    let dir = copy_dir(&fixture("recorded/guidellm-concurrent16"), "uncovered");
    let other = fixture("guidellm-concurrent-2-8/benchmarks.json");
    let o = analyze(&dir, &["--bench-result", other.to_str().unwrap()]);
    let r = results_json(&dir);
    let p = phases(&r);
    assert_eq!(p.len(), 2);
    for phase in p {
        assert!(
            series_verdicts(phase).iter().all(|(_, s)| s == "unknown"),
            "{phase:?}"
        );
        assert!(str_at(check(phase, "T8"), "message").contains("does not cover the phase"));
    }
    assert_ne!(o.status.code(), Some(0));
}

/// The phase rows of the terminal's table (header lines included).
fn table(out: &str) -> Vec<&str> {
    out.lines()
        .skip_while(|l| !l.starts_with("The load in "))
        .take(4)
        .collect()
}

const VLLM_RUNS: &str = "recorded/vllm-runs-2-16";

/// The two `vllm bench serve` runs' own output tokens, in order.
fn vllm_tokens(dir: &Path, files: [&str; 2]) -> [f64; 2] {
    files.map(|f| {
        let v = json::parse(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
        num(&v, &["total_output_tokens"])
    })
}

/// The phase table and verdicts every reading of the two-run folder gives: 2 at once
/// reached, 16 at once capped at 10 by `--max-num-seqs 10`. T21 is there when the
/// recorder's record of each command names the length it asked.
fn assert_two_vllm_phases(dir: &Path, out: &str, files: [&str; 2], t21: bool) -> Vec<Json> {
    let want = [
        "The load in 2 phases, each judged on its own window:",
        "   #  load                           T1  T8  T24 T9  T10 T15 T22 T21 T20   worst",
        "   1  asked for 2 at once  / ran 2   ✔   ✔   ✔   ▲   ✔   ✔   ✔   ✔   ✔     WARN",
        "   2  asked for 16 at once / ran 10  ✔   ✖   ✔   ▲   ✔   ✔   ✔   ✔   ✔     TRIPWIRE-FAILED",
    ]
    .map(|l| match t21 {
        true => l.to_string(),
        false => l
            .replacen(" T21", "", 1)
            .replacen("   ✔   ✔     ", "   ✔     ", 1),
    });
    assert_eq!(table(out), want, "{out}");
    let r = results_json(dir);
    let p = phases(&r).to_vec();
    assert_eq!(p.len(), 2);
    assert_eq!(str_at(check(&p[0], "T8"), "status"), "pass");
    assert_eq!(str_at(check(&p[1], "T8"), "status"), "fail");
    // Each phase's T15 reads that run's own count, inside the server's bracket.
    for (phase, tokens) in p.iter().zip(vllm_tokens(dir, files)) {
        let t15 = check(phase, "T15");
        assert_eq!(str_at(t15, "status"), "pass");
        assert_eq!(num(t15, &["evidence", "client_output_tokens"]), tokens);
    }
    let (s1, e1) = (num(&p[0], &["start_s"]), num(&p[0], &["end_s"]));
    let (s2, e2) = (num(&p[1], &["start_s"]), num(&p[1], &["end_s"]));
    assert!(
        0.0 < s1 && s1 < e1 && e1 <= s2 && s2 < e2,
        "{s1} {e1} {s2} {e2}"
    );
    // The run's counts are the two runs' together.
    let t15 = r
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| str_at(c, "id") == "T15")
        .unwrap();
    let [a, b] = vllm_tokens(dir, files);
    assert_eq!(num(t15, &["evidence", "client_output_tokens"]), a + b);
    p
}

#[test]
fn several_vllm_runs_are_phases_timed_by_the_recorders_marks() {
    let dir = copy_dir(&fixture(VLLM_RUNS), "vllm-runs");
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "the worst phase failed\n{out}");
    let p = assert_two_vllm_phases(&dir, &out, ["bench-1.json", "bench-2.json"], true);
    // Each window lies inside its command's marks in the manifest.
    let m = json::parse(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    // The charts' axis starts at the series' first reading (its second line).
    let series = std::fs::read_to_string(dir.join("run.series.jsonl")).unwrap();
    let first_row = json::parse(series.lines().nth(1).unwrap()).unwrap();
    let first = num(&first_row, &["t_wall"]);
    for (i, phase) in p.iter().enumerate() {
        let i = i.to_string();
        let started = num(&m, &["load", "runs", &i, "started_wall"]) - first;
        let ended = num(&m, &["load", "runs", &i, "ended_wall"]) - first;
        let (s, e) = (num(phase, &["start_s"]), num(phase, &["end_s"]));
        assert!(started <= s && e <= ended, "{started} {s} {e} {ended}");
        assert!(str_at(check(phase, "T8"), "message").contains("recorder's marks"));
    }
}

#[test]
fn vllm_results_without_marks_are_placed_by_their_date_to_a_second() {
    // As a folder not recorded by the recorder holds them: vLLM's own names, no runs in
    // the manifest.
    let dir = copy_dir(&fixture(VLLM_RUNS), "vllm-dates");
    let files = [
        "openai-infqps-concurrency16.json",
        "openai-infqps-concurrency2.json",
    ];
    std::fs::rename(dir.join("bench-2.json"), dir.join(files[0])).unwrap();
    std::fs::rename(dir.join("bench-1.json"), dir.join(files[1])).unwrap();
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // In the order they ran (by their dates), not by name.
    let p = assert_two_vllm_phases(&dir, &out, [files[1], files[0]], false);
    for phase in &p {
        assert!(
            str_at(check(phase, "T8"), "message").contains("known to 1 s"),
            "{phase:?}"
        );
    }
}

#[test]
fn a_damaged_run_result_is_named_and_never_left_out() {
    let dir = copy_dir(&fixture(VLLM_RUNS), "vllm-damaged");
    std::fs::write(dir.join("bench-2.json"), "{\"completed\": 4,\n  oops").unwrap();
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("bench-2.json:2"), "{out}");
    assert!(!out.contains("The load in "), "{out}");
    assert_ne!(o.status.code(), Some(0));
}

const AIPERF_SWEEP: &str = "recorded/aiperf-sweep-2-16";

#[test]
fn an_aiperf_concurrency_list_is_phases_cut_by_its_per_request_export() {
    let dir = copy_dir(&fixture(AIPERF_SWEEP), "aiperf-sweep");
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "the worst phase failed\n{out}");
    assert_eq!(
        table(&out),
        [
            "The load in 2 phases, each judged on its own window:",
            "   #  load                           T1  T8  T24 T9  T10 T15 T22 T21 T20   worst",
            "   1  asked for 2 at once  / ran 2   ✔   ✔   ✔   ▲   ✔   ✔   ✔   ✔   ✔     WARN",
            "   2  asked for 16 at once / ran 10  ✔   ✖   ✔   ▲   ✔   ✔   ✔   ✔   ✔     TRIPWIRE-FAILED",
        ],
        "{out}"
    );
    let r = results_json(&dir);
    let p = phases(&r);
    for (i, phase) in p.iter().enumerate() {
        let n = i + 1;
        // T15 reads that step's own summary.
        let own =
            json::parse(&std::fs::read_to_string(dir.join(format!("bench-{n}.json"))).unwrap())
                .unwrap();
        let t15 = check(phase, "T15");
        assert_eq!(str_at(t15, "status"), "pass");
        assert_eq!(
            num(t15, &["evidence", "client_output_tokens"]),
            num(&own, &["total_output_tokens", "avg"])
        );
        // The window is the step's requests, from its per-request export.
        let records =
            std::fs::read_to_string(dir.join(format!("bench-{n}.requests.jsonl"))).unwrap();
        let first_start = records
            .lines()
            .map(|l| num(&json::parse(l).unwrap(), &["metadata", "request_start_ns"]))
            .fold(f64::INFINITY, f64::min);
        let series = std::fs::read_to_string(dir.join("run.series.jsonl")).unwrap();
        let t0 = num(
            &json::parse(series.lines().nth(1).unwrap()).unwrap(),
            &["t_wall"],
        );
        assert!((num(phase, &["start_s"]) - (first_start / 1e9 - t0)).abs() < 1e-3);
        assert!(
            str_at(check(phase, "T8"), "message").contains(&format!("in bench-{n}.requests.jsonl"))
        );
    }
    assert_eq!(str_at(check(&p[1], "T8"), "status"), "fail");
    // T18 compares the first step's first requests (2 at once) with the rest of that step.
    let t18 = r
        .get("checks")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|c| str_at(c, "id") == "T18")
        .unwrap();
    assert_eq!(str_at(t18, "status"), "pass");
    assert_eq!(num(t18, &["evidence", "first_requests"]), 2.0);
    assert_eq!(num(t18, &["evidence", "later_requests"]), 22.0);
}

#[test]
fn an_aiperf_step_without_its_export_cannot_be_placed() {
    let dir = copy_dir(&fixture(AIPERF_SWEEP), "aiperf-no-export");
    std::fs::remove_file(dir.join("bench-2.requests.jsonl")).unwrap();
    analyze(&dir, &[]);
    let r = results_json(&dir);
    let p = phases(&r);
    assert_eq!(str_at(check(&p[0], "T8"), "status"), "pass");
    assert!(series_verdicts(&p[1]).iter().all(|(_, s)| s == "unknown"));
    assert!(str_at(check(&p[1], "T8"), "message").contains("no start and end time"));
    // A damaged export is an input error naming its file and line, never a silent phase.
    let dir = copy_dir(&fixture(AIPERF_SWEEP), "aiperf-bad-export");
    std::fs::write(
        dir.join("bench-1.requests.jsonl"),
        "{\"metadata\": {}}\nnot json\n",
    )
    .unwrap();
    let o = analyze(&dir, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("bench-1.requests.jsonl:2"), "{out}");
}
