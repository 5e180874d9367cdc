//! The real `inferlint` binary, run as a user runs it: output, files written, exit status.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_inferlint"));
    c.env_remove("INFERLINT_ENGINE").env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run inferlint")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh copy of a folder's files, so `analyze` may write into it.
fn copy_dir(src: &Path, tag: &str) -> PathBuf {
    common::fresh_copy(src, &format!("cli-{tag}"))
}

fn project_fixture(rel: &str) -> PathBuf {
    common::workspace_root().join("fixtures").join(rel)
}

#[test]
fn headline_run_in_the_terminal() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("vllm-0.28/live"), "live");
    let o = run(&["analyze", dir.to_str().unwrap(), "--requested", "32"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    let line = |id: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("[{id:>3}]")))
            .unwrap_or_else(|| panic!("no {id} line in\n{out}"))
            .to_string()
    };
    assert!(
        line("T1").contains("TRIPWIRE-FAILED  22 preemptions"),
        "{out}"
    );
    assert!(
        line("T8").contains("TRIPWIRE-FAILED") && line("T8").contains("never ran more than 10")
    );
    assert!(line("T9").contains("WARN") && line("T9").contains("between 7 and 10"));
    assert!(line("T10").contains("PASS  341.44 tokens/s over 93.720s"));
    assert!(
        line("T14").contains("PASS")
            && line("T14").contains("1/42")
            && line("T14").contains("(43)")
    );
    assert!(!out.contains('\x1b'), "NO_COLOR must turn colour off");
    assert!(dir.join("results.json").is_file());
    assert!(dir.join("report.html").is_file());
    let count = out.lines().last().unwrap();
    assert!(count.contains("tripwire-failed"), "{count}");
}

#[test]
fn json_output_is_the_report() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("vllm-0.30/live"), "json");
    let o = run(&["analyze", dir.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let doc = analyzer::json::parse(&stdout(&o)).expect("stdout is one JSON document");
    assert_eq!(
        doc.get("schema").unwrap().as_str(),
        Some("inferlint.report/1")
    );
    assert_eq!(doc.get("engine").unwrap().as_str(), Some("vllm"));
    let checks = doc.get("checks").unwrap().as_array().unwrap();
    let t15 = checks
        .iter()
        .find(|c| c.get("id").unwrap().as_str() == Some("T15"))
        .unwrap();
    assert_eq!(t15.get("status").unwrap().as_str(), Some("pass"));
    let written = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert_eq!(analyzer::json::parse(&written).unwrap(), doc);
}

#[test]
fn hand_made_edge_cases() {
    // (folder, extra arguments, exit status, expected statuses)
    type Case<'a> = (&'a str, &'a [&'a str], i32, &'a [(&'a str, &'a str)]);
    let cases: [Case<'_>; 6] = [
        (
            "idle",
            &[],
            2,
            &[("T1", "pass"), ("T10", "unknown"), ("T9", "unknown")],
        ),
        (
            "restart",
            &[],
            1,
            &[("T1", "fail"), ("T10", "unknown"), ("T15", "unknown")],
        ),
        (
            "counter-absent",
            &[],
            2,
            &[("T1", "unknown"), ("T10", "pass")],
        ),
        // No load-tool result: T15 can't tell, exit 2. Not recorded by inferlint-recorder,
        // so T16 (GPU samples) and T18 are listed as not checked rather than undecided.
        (
            "wrong-engine",
            &[],
            2,
            &[("T1", "pass"), ("T10", "pass"), ("T15", "unknown")],
        ),
        ("gate-only", &[], 1, &[("T2", "fail")]),
        ("probe-rejections", &[], 0, &[("T7", "pass")]),
    ];
    for (name, extra, code, want) in cases {
        let dir = copy_dir(&project_fixture(&format!("edge/{name}")), name);
        let mut args = vec!["analyze", dir.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(code), "{name}: {}", stderr(&o));
        let doc = analyzer::json::parse(&stdout(&o)).unwrap();
        let checks = doc.get("checks").unwrap().as_array().unwrap();
        for (id, status) in want {
            let c = checks
                .iter()
                .find(|c| c.get("id").unwrap().as_str() == Some(id))
                .unwrap_or_else(|| panic!("{name}: no {id}"));
            assert_eq!(
                c.get("status").unwrap().as_str(),
                Some(*status),
                "{name} {id}"
            );
        }
        if name == "idle" {
            let t10 = checks
                .iter()
                .find(|c| c.get("id").unwrap().as_str() == Some("T10"))
                .unwrap();
            // No tokens: no rate to check, not a pass on 0 tokens/s.
            let ev = t10.get("evidence").unwrap();
            assert_eq!(ev.get("tokens").unwrap().as_f64(), Some(0.0));
            assert!(ev.get("rate_per_s").is_none());
            let msg = t10.get("message").unwrap().as_str().unwrap();
            assert!(msg.starts_with("no tokens were generated"), "{msg}");
        }
        if name == "restart" {
            let t1 = checks
                .iter()
                .find(|c| c.get("id").unwrap().as_str() == Some("T1"))
                .unwrap();
            let ev = t1.get("evidence").unwrap();
            assert_eq!(ev.get("restarted").unwrap().as_bool(), Some(true));
            assert_eq!(ev.get("created_changed").unwrap().as_f64(), Some(8.0));
        }
    }
}

#[test]
fn another_engine_is_refused() {
    let dir = copy_dir(&project_fixture("edge/wrong-engine"), "refuse");
    let o = run(&[
        "analyze",
        dir.to_str().unwrap(),
        "--engine",
        "vllm",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("--engine vllm names vLLM, but SGLang wrote"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["analyze", dir.to_str().unwrap()])
        .env("INFERLINT_ENGINE", "trtllm")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("INFERLINT_ENGINE=trtllm"));
    let o = bin()
        .args(["analyze", dir.to_str().unwrap()])
        .env("INFERLINT_ENGINE", "tgi")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("INFERLINT_ENGINE=tgi is not an engine (known: vllm, sglang, trtllm)")
    );
    // A blank variable is ignored; a named engine matching the input is fine.
    let o = bin()
        .args(["analyze", dir.to_str().unwrap(), "--engine", "SGLang"])
        .env("INFERLINT_ENGINE", "  ")
        .output()
        .unwrap();
    // Analyzed, not refused: 2 only because T15 has no load-tool result to compare.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("refusing"), "{}", stderr(&o));
    assert!(stdout(&o).contains("[T15] ????"), "{}", stdout(&o));
    assert_eq!(
        run(&["analyze", dir.to_str().unwrap(), "--engine", "tgi"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn unusable_paths_and_folders() {
    let o = run(&["analyze", "/definitely/not/here"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a folder"));
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = run(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no run files"));
    assert_eq!(run(&["analyze"]).status.code(), Some(2));
    // A device is not a file: refused at once, never read forever.
    let o = run(&["boot-facts", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/dev/zero: a device, FIFO or socket, not a file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_damaged_file_is_named_with_its_line() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("vllm-0.30/live"), "damaged");
    // Break line 3 of the Prometheus text inside the after snapshot.
    let p = dir.join("after.snapshot.json");
    let text = std::fs::read_to_string(&p).unwrap();
    let broken = text.replacen("\\nvllm:", "\\nvllm:bad metric line\\nvllm:", 1);
    std::fs::write(&p, broken).unwrap();
    let o = run(&["analyze", dir.to_str().unwrap(), "--json"]);
    let err = stderr(&o);
    assert!(err.contains("after.snapshot.json:"), "{err}");
    assert!(err.contains("Prometheus text"), "{err}");
    // Other checks are still decided; those needing the snapshot can't tell.
    let doc = analyzer::json::parse(&stdout(&o)).unwrap();
    let checks = doc.get("checks").unwrap().as_array().unwrap();
    let status = |id: &str| {
        checks
            .iter()
            .find(|c| c.get("id").unwrap().as_str() == Some(id))
            .and_then(|c| c.get("status"))
            .and_then(|s| s.as_str())
            .map(str::to_string)
    };
    assert_eq!(status("T1").as_deref(), Some("unknown"));
    assert_eq!(status("T8").as_deref(), Some("fail"));
    assert_eq!(o.status.code(), Some(1));

    // A truncated snapshot given to a single-check command: nothing on stdout, exit 2.
    std::fs::write(&p, &text.as_bytes()[..text.len() / 2]).unwrap();
    let before = dir.join("before.snapshot.json");
    let o = run(&["preemption", before.to_str().unwrap(), p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    let at = err.find("after.snapshot.json:").expect("names the file");
    let rest = &err[at + "after.snapshot.json:".len()..];
    assert!(
        rest.starts_with(|c: char| c.is_ascii_digit()),
        "names the line: {err}"
    );
}

#[test]
fn single_check_commands() {
    let Some(root) = common::recorded() else {
        return;
    };
    let f = |rel: &str| root.join(rel).display().to_string();
    let o = run(&[
        "preemption",
        &f("vllm-0.28/metrics/preempted_before.prom"),
        &f("vllm-0.28/metrics/preempted_after.prom"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("60 preemptions"));

    let o = run(&[
        "rate",
        &f("vllm-0.28/live/before.snapshot.json"),
        &f("vllm-0.28/live/after.snapshot.json"),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("341.44 tokens/s over 93.720s"), "{out}");
    assert!(out.contains("344.09 tokens/s (+0.77%)"), "{out}");

    let o = run(&[
        "rate",
        &f("vllm-0.28/metrics/preempted_before.prom"),
        &f("vllm-0.28/metrics/preempted_after.prom"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("no clock"));

    let o = run(&[
        "series",
        &f("vllm-0.28/series/ladder.series.jsonl"),
        "--snapshot",
        &f("vllm-0.28/series/blocks_snapshot.prom"),
        "--requested",
        "32",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let arr = analyzer::json::parse(&stdout(&o)).unwrap();
    let t14 = &arr.as_array().unwrap()[0];
    assert_eq!(t14.get("status").unwrap().as_str(), Some("fail"));
}

#[test]
fn explain_and_start_here() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("inferlint analyze RUN_DIR"));
    let o = run(&["explain", "T9"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("falling-ceiling"));
    let o = run(&["explain", "falling-ceiling", "--engine", "sglang"]);
    assert!(stdout(&o).contains("On SGLang"));
    assert!(!stdout(&o).contains("On vLLM"));
    let o = run(&["explain"]);
    let listed = stdout(&o)
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with('T') && t[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .count();
    assert_eq!(listed, analyzer::rules::registry::single_server().count());
    // The fleet's own tripwire is explained too, though not in the single-server list.
    let o = run(&["explain", "T19"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("load-unbalanced"));
    assert_eq!(run(&["explain", "T25"]).status.code(), Some(2));
    let o = run(&["analyse"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("analyze"),
        "suggests the nearest command"
    );
}
